/* Direct type invocation `C.apply(...)` of controls without constructor parameters:
 * a table-less control invoked twice (two anonymous instances) and a control with a
 * table invoked once (its table is named after the control type, as p4c names it). */
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<16> x;
    bit<16> y;
    bit<8>  tag;
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

control add_seven(in bit<16> a, out bit<16> b) {
    apply {
        b = a + 7;
    }
}

control tagger(inout h_t h) {
    action set_tag(bit<8> t) {
        h.tag = t;
    }
    table tags {
        key = { h.x: exact; }
        actions = { set_tag; NoAction; }
        default_action = NoAction();
    }
    apply {
        tags.apply();
    }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        add_seven.apply(hdr.h.x, hdr.h.y);
        add_seven.apply(hdr.h.y, hdr.h.y);
        tagger.apply(hdr.h);
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
