/* Not supported by the BMv2 target: a bit slice as an `inout` argument of a
 * sub-parser. */
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> v;
}

struct metadata { }

struct headers {
    h_t h;
}

parser Nibble(packet_in pkt, inout bit<4> n) {
    state start {
        n = n + 1;
        transition accept;
    }
}

parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    Nibble() nibbles;
    state start {
        pkt.extract(hdr.h);
        transition more;
    }
    state more {
        nibbles.apply(pkt, hdr.h.v[7:4]);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    apply { }
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
