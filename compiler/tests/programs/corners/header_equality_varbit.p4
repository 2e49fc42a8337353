/* `==` on headers with a varbit field: p4c compares validity and every field, the
 * varbit one included, with `==` on the two fields. */
#include <core.p4>
#include <v1model.p4>

header opt_t {
    bit<8> len;
    varbit<32> data;
}

header flag_t {
    bit<8> same;
}

struct headers {
    flag_t flag;
    opt_t p;
    opt_t q;
}

struct metadata { }

parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.flag);
        pkt.extract(hdr.p, (bit<32>)pkt.lookahead<bit<8>>() * 8);
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
        if (hdr.p == hdr.q) {
            hdr.flag.same = 1;
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
