/* Bit slices as out/inout arguments (copy-in/copy-out through a temporary): a direct
 * action call, a function, a sub-control and an action bound in a table's list. */
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  a;
    bit<8>  b;
    bit<16> c;
    bit<8>  d;
}

struct headers {
    h_t h;
}

struct metadata { }

parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

bit<4> swap_in(out bit<4> dst, in bit<4> src) {
    dst = src;
    return src + 1;
}

control add_three(inout bit<4> n) {
    apply {
        n = n + 3;
    }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    add_three() adder;

    action bump(inout bit<4> nibble) {
        nibble = nibble + 1;
    }

    action set_low(out bit<4> low, bit<4> value) {
        low = value;
    }

    table t {
        key = { hdr.h.a: exact; }
        actions = { set_low(hdr.h.d[3:0]); NoAction; }
        default_action = NoAction();
    }

    apply {
        bump(hdr.h.a[7:4]);
        hdr.h.b[7:4] = swap_in(hdr.h.b[3:0], 0x9);
        adder.apply(hdr.h.c[11:8]);
        t.apply();
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
        pkt.emit(hdr.h);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;
