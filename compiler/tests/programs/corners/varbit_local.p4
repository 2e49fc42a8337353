/* A varbit local variable, and a varbit passed to a function: copied from one header
 * into another. */
#include <core.p4>
#include <v1model.p4>

header len_t {
    bit<8> bytes;
}

header opt_t {
    varbit<32> data;
}

struct headers {
    len_t len;
    opt_t src;
    opt_t copy;
    opt_t copy2;
}

struct metadata { }

parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.len);
        pkt.extract(hdr.src, (bit<32>)hdr.len.bytes * 8);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

void fill(out opt_t dst, in varbit<32> v) {
    dst.setValid();
    dst.data = v;
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        standard_metadata.egress_spec = 2;
        varbit<32> saved = hdr.src.data;
        hdr.copy.setValid();
        hdr.copy.data = saved;
        fill(hdr.copy2, saved);
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
