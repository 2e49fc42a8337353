/* Run-time configurable parsing: the ethertypes that carry the custom
 * tunnel header are a parser value set the controller fills in. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header tunnel_t {
    bit<16> tunnel_id;
    bit<16> proto;
}

struct metadata { }

struct headers {
    ethernet_t ethernet;
    tunnel_t   tunnel;
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    value_set<bit<16>>(4) tunnel_ethertypes;

    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            tunnel_ethertypes: parse_tunnel;
            default: accept;
        }
    }
    state parse_tunnel {
        packet.extract(hdr.tunnel);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    action set_port(bit<9> port) {
        standard_metadata.egress_spec = port;
    }
    table tunnel_fwd {
        key = { hdr.tunnel.tunnel_id: exact; }
        actions = { set_port; NoAction; }
        default_action = NoAction();
    }
    apply {
        if (hdr.tunnel.isValid()) {
            tunnel_fwd.apply();
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
        packet.emit(hdr.tunnel);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
