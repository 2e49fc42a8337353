/* Needs -I for its include file; the table size and an optional second
 * table come from macros that -D can set. */
#include <core.p4>
#include <v1model.p4>
#include "ratelab_test_defs.p4"

struct metadata { }

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
    action forward(bit<9> port) {
        standard_metadata.egress_spec = port;
    }
    table l2 {
        key = { hdr.ethernet.dstAddr: exact; }
        actions = { forward; NoAction; }
        default_action = NoAction();
        size = TABLE_SIZE;
    }
#ifdef WITH_ACL
    table acl {
        key = { hdr.ethernet.srcAddr: ternary; }
        actions = { NoAction; }
        default_action = NoAction();
    }
#endif
    apply {
        l2.apply();
#ifdef WITH_ACL
        acl.apply();
#endif
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
