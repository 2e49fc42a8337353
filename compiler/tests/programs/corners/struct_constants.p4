/* Constants of struct type (top level, control level and local) used as values:
 * passed as arguments, assigned, compared. They have no storage of their own. */
#include <core.p4>
#include <v1model.p4>

struct pair_t {
    bit<8> p;
    bit<8> q;
}

header out_t {
    bit<8> global_sum;   // sum(GP) = 1 + 2
    bit<8> control_sum;  // sum(CP) = 3 + 4
    bit<8> local_sum;    // sum(LP) = 5 + 6
    bit<8> assigned;     // v = CP; v.p * 16 + v.q
    bit<8> equal;        // v == CP, v != GP, v == {3, 4}
}

struct headers {
    out_t o;
}

struct metadata { }

const pair_t GP = { 1, 2 };

parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.o);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

bit<8> sum(in pair_t v) {
    return v.p + v.q;
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    const pair_t CP = { 3, 4 };

    apply {
        standard_metadata.egress_spec = 2;
        const pair_t LP = { p = 5, q = 6 };
        hdr.o.global_sum = sum(GP);
        hdr.o.control_sum = sum(CP);
        hdr.o.local_sum = sum(LP);
        pair_t v = CP;
        hdr.o.assigned = v.p * 16 + v.q;
        hdr.o.equal = 0;
        if (v == CP) {
            hdr.o.equal = hdr.o.equal + 1;
        }
        if (v != GP) {
            hdr.o.equal = hdr.o.equal + 2;
        }
        if (v == { 8w3, 8w4 }) {
            hdr.o.equal = hdr.o.equal + 4;
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
