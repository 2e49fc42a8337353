/* Header stacks: next/last in the parser, indexing with constants and with a
 * run-time index, push_front/pop_front, lastIndex, size; whole-stack emit. */
#include <core.p4>
#include <v1model.p4>

header tag_t {
    bit<1>  bos;
    bit<7>  kind;
    bit<8>  value;
}

header info_t {
    bit<8> count;
    bit<8> last_index;
    bit<8> depth;
    bit<8> idx;
    bit<8> picked;
}

struct metadata { }

struct headers {
    info_t    info;
    tag_t[4]  tags;
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.info);
        transition parse_tag;
    }
    state parse_tag {
        packet.extract(hdr.tags.next);
        hdr.info.last_index = (bit<8>)hdr.tags.lastIndex;
        transition select(hdr.tags.last.bos) {
            1: accept;
            default: parse_tag;
        }
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    action push_tag(bit<8> v) {
        hdr.tags.push_front(1);
        hdr.tags[0].setValid();
        hdr.tags[0].value = v;
        hdr.tags[0].bos = 0;
    }
    action pop_two() {
        hdr.tags.pop_front(2);
    }
    action record_size() {
        hdr.info.depth = (bit<8>)hdr.tags.size;
        hdr.tags[3].kind = 5;
        hdr.tags[1].value = hdr.tags[2].value;
    }
    action pick_dynamic() {
        hdr.info.picked = hdr.tags[hdr.info.idx].value;
    }
    table stack_ops {
        key = { hdr.info.count: exact; }
        actions = { push_tag; pop_two; NoAction; }
        default_action = NoAction();
    }
    apply {
        stack_ops.apply();
        record_size();
        pick_dynamic();
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    apply { }
}

control MyComputeChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.info);
        packet.emit(hdr.tags);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
