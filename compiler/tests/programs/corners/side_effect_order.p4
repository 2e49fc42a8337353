/* Expressions are evaluated left to right, and `&&`, `||` and `?:` evaluate only
 * the operands they need (P4_16 "Expressions" / side effects): each result below
 * depends on whether `bump`'s write to its argument happens before or after the
 * other operand is read. */
#include <core.p4>
#include <v1model.p4>

header vals_t {
    bit<8> sum;        // v + bump(v)
    bit<8> same;       // v == bump(v)
    bit<16> concat;    // v ++ bump(v)
    bit<8> and_skip;   // false && bump(w) > 0: w unchanged
    bit<8> or_skip;    // true || bump(w2) > 0: w2 unchanged
    bit<8> cond_then;  // true ? bump(t) : bump(e)
    bit<8> t;
    bit<8> e;
    bit<8> idx;        // s[idx].v = set_index(idx)
    bit<8> a;          // {a, b} = {b, a}
    bit<8> b;
    bit<8> reg;        // r.write(i, bump(i)) writes at the old i
}

header elem_t {
    bit<8> v;
}

struct headers {
    vals_t h;
    elem_t[2] s;
}

struct metadata {
    bit<8> v;
    bit<8> w;
    bit<8> w2;
    bit<8> i;
}

parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.h);
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

bit<8> bump(inout bit<8> v) {
    v = v + 1;
    return v;
}

bit<8> set_index(inout bit<8> i) {
    i = 1;
    return 0x55;
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    register<bit<8>>(4) r;

    apply {
        standard_metadata.egress_spec = 2;
        meta.v = 5;
        hdr.h.sum = meta.v + bump(meta.v);               // 5 + 6 = 11
        meta.v = 5;
        hdr.h.same = meta.v == bump(meta.v) ? 8w1 : 8w0; // 5 == 6: 0
        meta.v = 5;
        hdr.h.concat = meta.v ++ bump(meta.v);           // 0x0506
        meta.w = 7;
        if (hdr.h.and_skip == 1 && bump(meta.w) > 0) {
            hdr.h.and_skip = 2;
        }
        hdr.h.and_skip = hdr.h.and_skip + meta.w;        // 7 (or 8 if bump ran)
        meta.w2 = 9;
        if (hdr.h.or_skip == 0 || bump(meta.w2) > 0) {
            hdr.h.or_skip = 3;
        }
        hdr.h.or_skip = hdr.h.or_skip + meta.w2;         // 3 + 9
        hdr.h.cond_then = hdr.h.cond_then == 0 ? bump(hdr.h.t) : bump(hdr.h.e);
        meta.i = 0;
        hdr.s[meta.i].v = set_index(meta.i);             // s[0] = 0x55
        hdr.h.idx = meta.i;                              // 1
        hdr.h = { hdr.h.sum, hdr.h.same, hdr.h.concat, hdr.h.and_skip, hdr.h.or_skip,
                  hdr.h.cond_then, hdr.h.t, hdr.h.e, hdr.h.idx, hdr.h.b, hdr.h.a,
                  hdr.h.reg };
        meta.i = 2;
        r.write((bit<32>)meta.i, bump(meta.i));          // r[2] = 3
        r.read(hdr.h.reg, 2);
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
