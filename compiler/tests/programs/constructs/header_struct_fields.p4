/* Struct-typed header fields (nested structs of bit<N>/bool): flattened into the
 * header's fields like p4c's FlattenHeaders (`_<path>_<index>`), with member access,
 * struct copies in and out of a header, header equality, and a stack element reached
 * with a run-time index. */
#include <core.p4>
#include <v1model.p4>

struct pair_t {
    bit<4> hi;
    bit<4> lo;
}

struct quad_t {
    pair_t first;
    pair_t second;
}

header q_h {
    bit<8> tag;
    quad_t q;
    bool   flag;
    bit<7> pad;
}

struct headers {
    q_h    a;
    q_h    b;
    q_h[2] st;
}

struct metadata {
    pair_t saved;
    bit<1> idx;
    bool   same;
}

parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.a);
        pkt.extract(hdr.b);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        meta.same = hdr.a == hdr.b;
        meta.saved = hdr.a.q.second;
        hdr.b.q.first = meta.saved;
        hdr.a.q.first.lo = hdr.a.q.first.hi + 1;
        if (hdr.a.flag) {
            hdr.a.tag = 1;
        }
        hdr.st[0] = hdr.a;
        hdr.st[1].setValid();
        meta.idx = hdr.b.tag[0:0];
        hdr.st[meta.idx].q.second.hi = 0xF;
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
        pkt.emit(hdr.a);
        pkt.emit(hdr.b);
        pkt.emit(hdr.st);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;
