/* `==` / `!=` on headers (P4_16: equal when both invalid, or both valid with equal
 * fields), on structs holding headers, on header stacks, and a header against a list
 * expression (the list is a valid header). Each comparison's result is one bit of the
 * `result` header. */
#include <core.p4>
#include <v1model.p4>

header pair_t {
    bit<8> a;
    bit<8> b;
}

header result_t {
    bit<1> x_eq_y;
    bit<1> x_ne_z;
    bit<1> u_eq_v;
    bit<1> pairs_eq;
    bit<1> x_eq_list;
    bit<1> stacks_eq;
    bit<1> invalid_eq;
    bit<1> valid_ne_invalid;
}

struct two_t {
    pair_t p;
    pair_t q;
}

struct headers {
    result_t result;
    pair_t x;
    pair_t y;
    pair_t z;
    pair_t u;
    pair_t v;
    pair_t[2] s;
    pair_t[2] t;
}

struct metadata { }

parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.result);
        pkt.extract(hdr.x);
        pkt.extract(hdr.y);
        pkt.extract(hdr.z);
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.t.next);
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
        two_t one = { hdr.x, hdr.y };
        two_t two = { hdr.x, hdr.z };
        hdr.result.x_eq_y = (bit<1>)(hdr.x == hdr.y);
        hdr.result.x_ne_z = (bit<1>)(hdr.x != hdr.z);
        // u and v were never extracted: both invalid, so equal whatever their fields.
        hdr.result.u_eq_v = (bit<1>)(hdr.u == hdr.v);
        hdr.result.pairs_eq = (bit<1>)(one == two);
        hdr.result.x_eq_list = (bit<1>)(hdr.x == { 8w1, 8w2 });
        hdr.result.stacks_eq = (bit<1>)(hdr.s == hdr.t);
        pair_t local;  // invalid
        hdr.result.invalid_eq = (bit<1>)(local == hdr.u);
        hdr.result.valid_ne_invalid = (bit<1>)(hdr.x != hdr.u);
        if (hdr.x == hdr.y) {
            hdr.x.a = 0xee;
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

control MyDeparser(packet_out pkt, in headers hdr) {
    apply {
        pkt.emit(hdr);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;
