/* One sub-parser instance (no value sets or externs) applied in two parser states:
 * each application is inlined with its own states, arguments and local variable. */
#include <core.p4>
#include <v1model.p4>

header opt_t {
    bit<8> kind;
    bit<8> value;
}

struct headers {
    opt_t first;
    opt_t second;
}

struct metadata {
    bit<8> marked;
}

parser OptionParser(packet_in pkt, out opt_t opt, inout bit<8> marked) {
    bit<8> seen = 0;
    state start {
        pkt.extract(opt);
        seen = opt.value;
        transition select(opt.kind) {
            1: mark;
            default: accept;
        }
    }
    state mark {
        marked = seen;
        transition accept;
    }
}

parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    OptionParser() options;
    state start {
        options.apply(pkt, hdr.first, meta.marked);
        transition parse_second;
    }
    state parse_second {
        options.apply(pkt, hdr.second, meta.marked);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    apply { }
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
