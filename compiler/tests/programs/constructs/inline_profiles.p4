/* Action profiles / selectors constructed in a table's `implementation` property
 * instead of being declared as instances: with and without @name on the property. */
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<16> dst;
    bit<16> flow;
}

struct headers {
    h_t h;
}

struct metadata { }

parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    action set_port(bit<9> port) {
        standard_metadata.egress_spec = port;
    }

    table by_dst {
        key = { hdr.h.dst: exact; }
        actions = { set_port; NoAction; }
        implementation = action_profile(32w32);
    }

    table balanced {
        key = {
            hdr.h.dst: lpm;
            hdr.h.flow: selector;
        }
        actions = { set_port; NoAction; }
        @name("flow_selector") implementation = action_selector(HashAlgorithm.crc16, 32w64, 32w10);
    }

    apply {
        by_dst.apply();
        balanced.apply();
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
        pkt.emit(hdr.h);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;
