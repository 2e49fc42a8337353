/* A stack of header unions used as a stack: the parser extracts into `next`,
 * reads `last` in a select, ingress uses a run-time index, lastIndex, isValid
 * of elements, push_front/pop_front and a whole-stack assignment. */
#include <core.p4>
#include <v1model.p4>

header cmd_t {
    bit<8> op;   // 1: push_front(1), 2: pop_front(1), 3: saved = us, then pop_front(2)
    bit<8> idx;  // the element ingress reads and writes
}

header tag_t {
    bit<8> kind;  // 1: a short option follows, 2: a long one, else the list ends
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

header report_t {
    bit<8> last;    // us.lastIndex
    bit<8> valid;   // us[cmd.idx].isValid(), us[cmd.idx].s.isValid() (bits 0, 1)
}

struct headers {
    cmd_t cmd;
    report_t report;
    opt_t[3] us;
    opt_t[3] saved;
}

struct metadata {
    tag_t tag;
}

parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.cmd);
        transition next_option;
    }
    state next_option {
        pkt.extract(meta.tag);
        transition select(meta.tag.kind) {
            1: short_option;
            2: long_option;
            default: accept;
        }
    }
    state short_option {
        pkt.extract(hdr.us.next.s);
        // A short option of 0xff ends the list.
        transition select(hdr.us.last.s.v) {
            0xff: accept;
            default: next_option;
        }
    }
    state long_option {
        pkt.extract(hdr.us.next.l);
        transition next_option;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        standard_metadata.egress_spec = 2;
        if (hdr.us[hdr.cmd.idx].l.isValid()) {
            hdr.us[hdr.cmd.idx].l.v = hdr.us[hdr.cmd.idx].l.v + 1;
        }
        if (hdr.cmd.op == 1) {
            hdr.us.push_front(1);
        } else if (hdr.cmd.op == 2) {
            hdr.us.pop_front(1);
        } else if (hdr.cmd.op == 3) {
            hdr.saved = hdr.us;
            hdr.us.pop_front(2);
        }
        hdr.report.setValid();
        hdr.report.last = (bit<8>)hdr.us.lastIndex;
        bit<8> v = 0;
        if (hdr.us[hdr.cmd.idx].isValid()) { v = v | 1; }
        if (hdr.us[hdr.cmd.idx].s.isValid()) { v = v | 2; }
        hdr.report.valid = v;
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
