/* Compound assignment (P4_16 1.2.5): `a op= b` is `a = a op b` with `a` evaluated
 * once. Every operator on a field, on a slice of a field and on a local; the target
 * indexed by a call with a side effect, which must run once. */
#include <core.p4>
#include <v1model.p4>

header bytes_t {
    bit<8> add;
    bit<8> sub;
    bit<8> mul;
    bit<8> and_;
    bit<8> or_;
    bit<8> xor_;
    bit<8> shl;
    bit<8> shr;
    bit<8> sadd;
    bit<8> ssub;
    bit<8> slice;
    bit<8> local;
    int<8> sshr;
    bit<8> calls;
}

header elem_t {
    bit<8> v;
}

struct headers {
    bytes_t b;
    elem_t[3] s;
}

struct metadata { }

parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.b);
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

bit<8> next_index(inout bit<8> calls) {
    calls = calls + 1;
    return calls;
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        standard_metadata.egress_spec = 2;
        hdr.b.add += 3;
        hdr.b.sub -= 0x20;
        hdr.b.mul *= 3;
        hdr.b.and_ &= 0x0f;
        hdr.b.or_ |= 0x80;
        hdr.b.xor_ ^= 0xff;
        hdr.b.shl <<= 3;
        hdr.b.shr >>= 2;
        hdr.b.sadd |+|= 0x80;
        hdr.b.ssub |-|= 0x80;
        hdr.b.slice[7:4] += 1;
        bit<8> x = hdr.b.local;
        x += x;
        x *= 2;
        hdr.b.local = x;
        hdr.b.sshr >>= 1;
        hdr.s[next_index(hdr.b.calls)].v += 0x10;
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
