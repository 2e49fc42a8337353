/* Not supported by the BMv2 target: one header passed both as an `out` argument and as
 * an `in` argument of the same call (the `out` header would be invalid when read). */
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

control make_header(out h_t o, in h_t from) {
    apply {
        if (!from.isValid()) {
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
        maker.apply(hdr.y, hdr.y);
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
