/* Expressions: arithmetic, casts, slices, concatenation, saturating
 * arithmetic, shifts, the conditional operator and boolean logic. Each action
 * writes one result field so that tests can evaluate it. */
#include <core.p4>
#include <v1model.p4>

header in_t {
    bit<8>  a;
    bit<8>  b;
    bit<16> w;
    int<8>  s;
    int<8>  t;
}

header out_t {
    bit<8>  add;
    bit<8>  sub;
    bit<8>  sat_add;
    bit<8>  sat_sub;
    int<8>  ssat_add;
    int<8>  ssat_sub;
    bit<4>  slice_hi;
    bit<8>  slice_mid;
    bit<24> concat;
    bit<16> shl;
    bit<8>  shr;
    int<8>  sshr;
    bit<8>  cond;
    bit<8>  logic;
    bit<32> widen;
    bit<4>  narrow;
    int<16> sext;
    bit<8>  bitops;
    bit<8>  neg;
    bit<8>  mul;
    bit<8>  cmp;
}

struct metadata { }

struct headers {
    in_t  i;
    out_t o;
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.i);
        packet.extract(hdr.o);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    action compute() {
        hdr.o.add = hdr.i.a + hdr.i.b;
        hdr.o.sub = hdr.i.a - hdr.i.b;
        hdr.o.sat_add = hdr.i.a |+| hdr.i.b;
        hdr.o.sat_sub = hdr.i.a |-| hdr.i.b;
        hdr.o.ssat_add = hdr.i.s |+| hdr.i.t;
        hdr.o.ssat_sub = hdr.i.s |-| hdr.i.t;
        hdr.o.slice_hi = hdr.i.w[15:12];
        hdr.o.slice_mid = hdr.i.w[11:4];
        hdr.o.concat = hdr.i.a ++ hdr.i.w;
        hdr.o.shl = (bit<16>)hdr.i.a << 4;
        hdr.o.shr = hdr.i.a >> 3;
        hdr.o.sshr = hdr.i.s >> 2;
        hdr.o.cond = (hdr.i.a > hdr.i.b) ? hdr.i.a : hdr.i.b;
        hdr.o.logic = (hdr.i.a == 1 || (hdr.i.b != 2 && !(hdr.i.w >= 100))) ? 8w1 : 8w0;
        hdr.o.widen = (bit<32>)hdr.i.w;
        hdr.o.narrow = (bit<4>)hdr.i.a;
        hdr.o.sext = (int<16>)hdr.i.s;
        hdr.o.bitops = (hdr.i.a & 0xf0) | (hdr.i.b ^ 0x0f) | ~hdr.i.a[7:0] & 8w0x01;
        hdr.o.neg = -hdr.i.a;
        hdr.o.mul = hdr.i.a * 3;
        hdr.o.cmp = (bit<8>)(hdr.i.s < hdr.i.t ? 8w1 : 8w0) + (bit<8>)(hdr.i.a <= hdr.i.b ? 8w2 : 8w0);
    }
    apply {
        compute();
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
        packet.emit(hdr.i);
        packet.emit(hdr.o);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
