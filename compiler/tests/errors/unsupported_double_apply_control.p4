/* Not supported by the BMv2 target: a sub-control that owns a table applied twice
 * (its table would be applied twice). */
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> small;
}

struct metadata { }

struct headers {
    h_t h;
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.h);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control lookup(inout h_t h) {
    table t {
        key = { h.small: exact; }
        actions = { NoAction; }
        default_action = NoAction();
    }
    apply {
        t.apply();
    }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    lookup() once;
    apply {
        once.apply(hdr.h);
        once.apply(hdr.h);
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
        packet.emit(hdr.h);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
