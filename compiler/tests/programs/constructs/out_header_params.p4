/* `out` parameters of header type start invalid (P4 copy-in/copy-out): a sub-control
 * that returns before writing its `out` header, and an action that never writes its
 * `out` header, both leave the argument header invalid. */
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> a;
}

struct headers {
    h_t x;
    h_t y;
}

struct metadata { }

parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.x);
        pkt.extract(hdr.y);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control make_header(out h_t o, in bool skip) {
    apply {
        if (skip) {
            return;
        }
        o.setValid();
        o.a = 0x5A;
    }
}

action forget(out h_t o) { }

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    make_header() maker;
    apply {
        maker.apply(hdr.y, hdr.x.a == 0);
        if (hdr.x.a == 2) {
            forget(hdr.x);
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
