/* A header stack indexed by a value of signed type (int<N>), read and written. */
#include <core.p4>
#include <v1model.p4>

header idx_t {
    int<8> i;
}

header elem_t {
    bit<8> v;
}

struct headers {
    idx_t idx;
    elem_t[3] s;
}

struct metadata {
    int<4> j;
}

parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.idx);
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
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
        hdr.s[hdr.idx.i].v = hdr.s[hdr.idx.i].v + 0x10;
        meta.j = 2;
        int<4> k = 0;
        hdr.s[k].v = hdr.s[meta.j].v;
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
