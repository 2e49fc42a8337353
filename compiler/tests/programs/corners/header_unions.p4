/* A stack of header unions with constant indices, and a table matching on a header
 * union's validity (valid when any member is valid). */
#include <core.p4>
#include <v1model.p4>

header tag_t {
    bit<8> kind;
}

header short_t {
    bit<8> v;
}

header long_t {
    bit<16> v;
}

header_union opt_t {
    short_t s;
    long_t l;
}

header result_t {
    bit<8> union_valid;  // set by the table on opts[1]'s validity
    bit<8> members;      // which members of opts[0] / opts[1] are valid, one bit each
}

struct headers {
    result_t result;
    tag_t tag;
    opt_t[2] opts;
}

struct metadata { }

parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.result);
        pkt.extract(hdr.tag);
        transition select(hdr.tag.kind) {
            1: one_short;
            2: short_then_long;
            default: accept;
        }
    }
    state one_short {
        pkt.extract(hdr.opts[0].s);
        transition accept;
    }
    state short_then_long {
        pkt.extract(hdr.opts[0].s);
        pkt.extract(hdr.opts[1].l);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    action mark(bit<8> v) {
        hdr.result.union_valid = v;
    }

    table by_validity {
        key = {
            hdr.opts[1].isValid(): exact;
        }
        actions = {
            mark;
            NoAction;
        }
        const entries = {
            true: mark(0xaa);
            false: mark(0xbb);
        }
    }

    apply {
        standard_metadata.egress_spec = 2;
        by_validity.apply();
        bit<8> m = 0;
        if (hdr.opts[0].s.isValid()) { m = m | 1; }
        if (hdr.opts[0].l.isValid()) { m = m | 2; }
        if (hdr.opts[1].s.isValid()) { m = m | 4; }
        if (hdr.opts[1].l.isValid()) { m = m | 8; }
        if (hdr.opts[0].isValid()) { m = m | 0x10; }
        hdr.result.members = m;
        if (hdr.opts[1].l.isValid()) {
            hdr.opts[1].l.v = hdr.opts[1].l.v + 1;
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
