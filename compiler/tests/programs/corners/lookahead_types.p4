/* lookahead of a struct, of a header (a field of it as a select key), of a bit<128>
 * (sliced, as a select key) and of a bool. */
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> c;
    bit<8> d;
}

struct two_t {
    bit<8> x;
    bit<16> y;
}

struct headers {
    h_t h;
    h_t g;
}

struct metadata { }

parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        two_t t = pkt.lookahead<two_t>();
        pkt.extract(hdr.h);
        hdr.h.d = t.y[7:0];
        transition select(pkt.lookahead<h_t>().b) {
            0x66: wide;
            default: accept;
        }
    }
    state wide {
        transition select(pkt.lookahead<bit<128>>()[127:120]) {
            0xd5: flag;
            default: accept;
        }
    }
    state flag {
        bool first = pkt.lookahead<bool>();
        pkt.extract(hdr.g);
        hdr.g.a = first ? 8w1 : 8w0;
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        standard_metadata.egress_spec = 2;
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    apply { }
}

control MyComputeChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyDeparser(packet_out pkt, in headers hdr) {
    apply {
        pkt.emit(hdr);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;
