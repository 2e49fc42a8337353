/* One sub-control instance without tables or externs applied several times (in both
 * branches of an if and once more after it); each application is inlined on its own
 * with its own arguments and its own copy of the sub-control's local variable. */
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  sel;
    bit<8>  a;
    bit<8>  b;
    bit<16> packed;
    bit<16> packed_again;
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

control pack_bytes(out bit<16> result, in bit<8> hi, in bit<8> lo) {
    bit<8> low_part;
    apply {
        low_part = lo;
        if (hi == 0) {
            low_part = low_part + 1;
        }
        result = hi ++ low_part;
    }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    pack_bytes() packer;
    apply {
        if (hdr.h.sel == 1) {
            packer.apply(hdr.h.packed, hdr.h.a, hdr.h.b);
        } else {
            packer.apply(hdr.h.packed, 0xAB, hdr.h.a);
        }
        packer.apply(hdr.h.packed_again, 0, hdr.h.b);
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
