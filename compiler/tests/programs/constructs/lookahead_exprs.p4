/* packet.lookahead used inside larger expressions in parser states: in the bit
 * count of a varbit extract, on the right of an assignment, in a select key, in an
 * if condition and in a verify condition. */
#include <core.p4>
#include <v1model.p4>

header opt_len_t {
    bit<4> kind;
    bit<4> words;
}

header opts_t {
    bit<4>      kind;
    bit<4>      words;
    varbit<120> data;
}

header tag_t {
    bit<8> value;
}

struct headers {
    opts_t opts;
    tag_t  tag;
}

struct metadata {
    bit<8> peek_plus_one;
    bit<1> zero_tag;
}

parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        // 8 bits of fixed fields, then `words` 32-bit words of data.
        pkt.extract(hdr.opts, (bit<32>)(32 * (bit<9>)pkt.lookahead<opt_len_t>().words));
        meta.peek_plus_one = pkt.lookahead<bit<8>>() + 1;
        verify(pkt.lookahead<bit<8>>() != 0xEE, error.ParserInvalidArgument);
        transition select(pkt.lookahead<bit<8>>() & 0x0F) {
            0x1: parse_tag;
            default: accept;
        }
    }
    state parse_tag {
        if (pkt.lookahead<tag_t>().value == 0) {
            meta.zero_tag = 1;
        }
        pkt.extract(hdr.tag);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        standard_metadata.egress_spec = (bit<9>)meta.peek_plus_one;
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
        pkt.emit(hdr.opts);
        pkt.emit(hdr.tag);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;
