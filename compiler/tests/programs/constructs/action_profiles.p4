/* Table implementations: an action selector (ECMP groups; the selector key
 * fields feed its hash) and a plain action profile shared-member table. */
#include <core.p4>
#include <v1model.p4>

header ipv4_t {
    bit<8>  ttl;
    bit<8>  protocol;
    bit<32> srcAddr;
    bit<32> dstAddr;
}

header l4_t {
    bit<16> srcPort;
    bit<16> dstPort;
}

struct metadata { }

struct headers {
    ipv4_t ipv4;
    l4_t   l4;
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ipv4);
        packet.extract(hdr.l4);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    action_selector(HashAlgorithm.crc16, 32w128, 32w14) ecmp_selector;
    action_profile(32w64) nexthops;

    action set_port(bit<9> port) {
        standard_metadata.egress_spec = port;
    }
    action set_ttl(bit<8> ttl) {
        hdr.ipv4.ttl = ttl;
    }

    table ecmp {
        key = {
            hdr.ipv4.dstAddr: lpm;
            hdr.ipv4.srcAddr: selector;
            hdr.ipv4.protocol: selector;
            hdr.l4.srcPort: selector;
            hdr.l4.dstPort: selector;
        }
        actions = { set_port; NoAction; }
        implementation = ecmp_selector;
        size = 256;
    }

    table rewrite {
        key = { standard_metadata.egress_spec: exact; }
        actions = { set_ttl; NoAction; }
        implementation = nexthops;
    }

    apply {
        ecmp.apply();
        rewrite.apply();
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
        packet.emit(hdr.ipv4);
        packet.emit(hdr.l4);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
