/* MAC learning through digests: an unknown source MAC sends a digest with the
 * address, the port and the kind of frame to the controller. */
#include <core.p4>
#include <v1model.p4>

typedef bit<48> macAddr_t;

enum bit<8> FrameKind {
    UNICAST   = 1,
    MULTICAST = 2,
    BROADCAST = 3
}

header ethernet_t {
    macAddr_t dstAddr;
    macAddr_t srcAddr;
    bit<16>   etherType;
}

struct mac_learn_digest_t {
    macAddr_t srcAddr;
    bit<9>    ingress_port;
    FrameKind kind;
}

struct metadata {
    FrameKind kind;
}

struct headers {
    ethernet_t ethernet;
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    action learn() {
        digest<mac_learn_digest_t>(1, { hdr.ethernet.srcAddr,
                                        standard_metadata.ingress_port,
                                        meta.kind });
    }
    table smac {
        key = { hdr.ethernet.srcAddr: exact; }
        actions = { learn; NoAction; }
        size = 4096;
        default_action = learn();
    }
    action forward(bit<9> port) {
        standard_metadata.egress_spec = port;
    }
    action flood() {
        standard_metadata.mcast_grp = 1;
    }
    table dmac {
        key = { hdr.ethernet.dstAddr: exact; }
        actions = { forward; flood; }
        size = 4096;
        default_action = flood();
    }
    apply {
        if (hdr.ethernet.dstAddr == 0xffffffffffff) {
            meta.kind = FrameKind.BROADCAST;
        } else if (hdr.ethernet.dstAddr[40:40] == 1) {
            meta.kind = FrameKind.MULTICAST;
        } else {
            meta.kind = FrameKind.UNICAST;
        }
        smac.apply();
        dmac.apply();
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
        packet.emit(hdr.ethernet);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
