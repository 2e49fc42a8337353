/* `_` as an `out` argument (the value is thrown away) of a function, an action, a
 * sub-control, a sub-parser and an extern method. */
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> c;
}

struct headers {
    h_t h;
    h_t g;
}

struct metadata { }

parser Inner(packet_in pkt, out h_t x, out bit<8> first) {
    state start {
        pkt.extract(x);
        first = x.a;
        transition accept;
    }
}

parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    Inner() inner;
    state start {
        pkt.extract(hdr.h);
        inner.apply(pkt, hdr.g, _);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

void two(out bit<8> x, out bit<8> y) {
    x = 1;
    y = 2;
}

control Mark(out bit<8> ignored, inout h_t h) {
    apply {
        ignored = 9;
        h.c = 0x66;
    }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    register<bit<8>>(4) r;
    Mark() mark;

    action copy(out bit<8> dst, in bit<8> v) {
        dst = v;
    }

    apply {
        standard_metadata.egress_spec = 2;
        two(hdr.h.a, _);
        two(_, hdr.h.b);
        copy(_, 7);
        mark.apply(_, hdr.h);
        r.read(_, 1);
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
