/* Per-entry statistics and policing: a direct counter on the ACL table and a
 * direct meter on the policer table whose colour decides whether to drop. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

struct metadata {
    bit<32> meter_color;
}

struct headers {
    ethernet_t ethernet;
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    direct_counter(CounterType.packets_and_bytes) acl_stats;
    direct_meter<bit<32>>(MeterType.bytes) policer;

    action allow() {
        acl_stats.count();
    }
    action deny() {
        acl_stats.count();
        mark_to_drop(standard_metadata);
    }
    table acl {
        key = {
            hdr.ethernet.srcAddr: ternary;
            hdr.ethernet.etherType: exact;
        }
        actions = { allow; deny; }
        default_action = allow();
        counters = acl_stats;
        size = 512;
    }

    action police(bit<9> port) {
        policer.read(meta.meter_color);
        standard_metadata.egress_spec = port;
    }
    action police_default() {
        policer.read(meta.meter_color);
    }
    table policing {
        key = { hdr.ethernet.dstAddr: exact; }
        actions = { police; police_default; }
        default_action = police_default();
        meters = policer;
        size = 256;
    }

    apply {
        acl.apply();
        policing.apply();
        if (meta.meter_color == 2) {
            mark_to_drop(standard_metadata);
        }
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    apply { }
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
