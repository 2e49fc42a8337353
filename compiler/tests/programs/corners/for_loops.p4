/* for loops (P4_16 1.2.4), unrolled: the three-clause form and `for (T v in ...)`
 * over a range (both ends included), over a list and over a header stack, in the
 * apply block, in an action and in a function, with break and continue. */
#include <core.p4>
#include <v1model.p4>

header elem_t {
    bit<8> v;
}

header out_t {
    bit<8> sum_range;    // sum of s[i] over i in 0 .. 3
    bit<8> count_up;     // for (i = 0; i < 8; i = i + 2): 4 iterations
    bit<8> list_sum;     // 1 + 2 + s[1] over a list with a run-time element
    bit<8> until_zero;   // elements before the first 0 (break)
    bit<8> odd_sum;      // continue skips the even elements
    bit<8> func;         // a function with a loop
    bit<8> last_i;       // the loop left i at 5
    bit<8> stack_sum;    // sum of the valid elements, for (elem_t e in hdr.s)
}

struct headers {
    out_t o;
    elem_t[4] s;
}

struct metadata { }

parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.o);
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

bit<8> triangle(in bit<8> n) {
    bit<8> total = 0;
    for (bit<8> k = 1; k <= 4; k = k + 1) {
        if (k > n) {
            break;
        }
        total = total + k;
    }
    return total;
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    action scan() {
        hdr.o.until_zero = 0;
        for (bit<8> i in 0 .. 3) {
            if (hdr.s[i].v == 0) {
                break;
            }
            hdr.o.until_zero = hdr.o.until_zero + 1;
        }
        hdr.o.odd_sum = 0;
        for (bit<8> i = 0; i < 4; i += 1) {
            if (hdr.s[i].v & 1 == 0) {
                continue;
            }
            hdr.o.odd_sum = hdr.o.odd_sum + hdr.s[i].v;
        }
    }

    apply {
        standard_metadata.egress_spec = 2;
        hdr.o.sum_range = 0;
        for (bit<8> i in 0 .. 3) {
            hdr.o.sum_range = hdr.o.sum_range + hdr.s[i].v;
        }
        hdr.o.count_up = 0;
        for (bit<8> i = 0; i < 8; i = i + 2) {
            hdr.o.count_up = hdr.o.count_up + 1;
        }
        hdr.o.list_sum = 0;
        for (bit<8> x in { 8w1, 8w2, hdr.s[1].v }) {
            hdr.o.list_sum = hdr.o.list_sum + x;
        }
        scan();
        hdr.o.func = triangle(hdr.s[0].v);
        bit<8> i;
        for (i = 0; i < 5; i = i + 1) {
        }
        hdr.o.last_i = i;
        hdr.o.stack_sum = 0;
        for (elem_t e in hdr.s) {
            if (e.isValid()) {
                hdr.o.stack_sum = hdr.o.stack_sum + e.v;
            }
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
