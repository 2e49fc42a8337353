/* Slices of slices as l-values (assignment, compound assignment, inout argument) and
 * as a table key, and slices of stack element fields, also at a run-time index. */
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<8> c;
    bit<8> d;
    bit<8> i;
    bit<8> hit;
}

header elem_t {
    bit<8> v;
}

struct headers {
    h_t h;
    elem_t[2] s;
}

struct metadata { }

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

void invert(inout bit<2> x) {
    x = ~x;
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    action mark(bit<8> v) {
        hdr.h.hit = v;
    }

    table by_nibble {
        key = {
            hdr.h.d[7:4][1:0]: exact;
        }
        actions = {
            mark;
            NoAction;
        }
        const entries = {
            2: mark(0x22);
            3: mark(0x33);
        }
    }

    apply {
        standard_metadata.egress_spec = 2;
        hdr.h.a[7:4][1:0] = 3;          // bits 5:4
        hdr.h.b[7:2][3:1] += 1;         // bits 5:3
        invert(hdr.h.c[7:4][3:2]);      // bits 7:6
        by_nibble.apply();              // key: bits 5:4 of d
        hdr.s[1].v[3:0] = 0xf;
        hdr.s[hdr.h.i].v[7:4] = hdr.s[hdr.h.i].v[7:4] |+| 8;
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
