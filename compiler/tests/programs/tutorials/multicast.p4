/* Layer-2 multicast: a table on the destination MAC either forwards to one
 * port or picks a multicast group; in egress, replicas are rewritten per
 * replication id and the copy going back out the ingress port is pruned. */
#include <core.p4>
#include <v1model.p4>

typedef bit<48> macAddr_t;

header ethernet_t {
    macAddr_t dstAddr;
    macAddr_t srcAddr;
    bit<16>   etherType;
}

struct metadata {
    bit<9> ingress_port;
}

struct headers {
    ethernet_t ethernet;
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        meta.ingress_port = standard_metadata.ingress_port;
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    action drop() {
        mark_to_drop(standard_metadata);
    }
    action multicast(bit<16> mgid) {
        standard_metadata.mcast_grp = mgid;
    }
    action mac_forward(bit<9> port) {
        standard_metadata.egress_spec = port;
    }
    table mac_lookup {
        key = { hdr.ethernet.dstAddr: exact; }
        actions = { multicast; mac_forward; drop; }
        size = 1024;
        default_action = multicast(1);
    }
    apply {
        mac_lookup.apply();
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    action drop() {
        mark_to_drop(standard_metadata);
    }
    action set_smac(macAddr_t smac) {
        hdr.ethernet.srcAddr = smac;
    }
    table replica_rewrite {
        key = { standard_metadata.egress_rid: exact; }
        actions = { set_smac; NoAction; }
        size = 64;
        default_action = NoAction();
    }
    apply {
        if (standard_metadata.egress_port == meta.ingress_port) {
            drop();
        } else if (standard_metadata.egress_rid != 0) {
            replica_rewrite.apply();
        }
    }
}

control MyComputeChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
