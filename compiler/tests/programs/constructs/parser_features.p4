/* Parser constructs: select over a tuple with masks, ranges and default,
 * lookahead in a select key, advance, verify with a user error, a sub-parser,
 * assignments in states and a transition to reject. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header vlan_t {
    bit<3>  pcp;
    bit<1>  cfi;
    bit<12> vid;
    bit<16> etherType;
}

header pre_t {
    bit<8> kind;
    bit<8> len;
}

header ipv4_t {
    bit<4>  version;
    bit<4>  ihl;
    bit<8>  diffserv;
    bit<16> totalLen;
    bit<16> identification;
    bit<3>  flags;
    bit<13> fragOffset;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> hdrChecksum;
    bit<32> srcAddr;
    bit<32> dstAddr;
}

header udp_t {
    bit<16> srcPort;
    bit<16> dstPort;
    bit<16> len;
    bit<16> checksum;
}

struct metadata {
    bit<8>  pre_kind;
    bit<16> l4_dport;
    bit<1>  low_port;
}

struct headers {
    ethernet_t ethernet;
    vlan_t     vlan;
    pre_t      pre;
    ipv4_t     ipv4;
    udp_t      udp;
}

error { BadIpVersion }

/* Transport parsing, applied from the main parser. */
parser L4Parser(packet_in packet, inout headers hdr, inout metadata meta) {
    state start {
        transition select(hdr.ipv4.protocol) {
            17: parse_udp;
            default: accept;
        }
    }
    state parse_udp {
        packet.extract(hdr.udp);
        meta.l4_dport = hdr.udp.dstPort;
        transition select(hdr.udp.dstPort) {
            0 .. 1023: low;
            default: accept;
        }
    }
    state low {
        meta.low_port = 1;
        transition accept;
    }
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    L4Parser() l4;

    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType, hdr.ethernet.dstAddr[47:40]) {
            (0x8100, _): parse_vlan;
            (0x0800, 0x01 &&& 0x01): parse_ipv4_multicast_dst;
            (0x0800, _): parse_ipv4_or_pre;
            (0x0600 .. 0x06ff, _): parse_pre;
            default: accept;
        }
    }
    state parse_vlan {
        packet.extract(hdr.vlan);
        transition select(hdr.vlan.vid, hdr.vlan.etherType) {
            (12w0 &&& 12w0xf00, 0x0800): parse_ipv4_or_pre;
            (12w0x100 .. 12w0x1ff, 0x0800): parse_ipv4_or_pre;
            (_, 0x0800): reject;
            default: accept;
        }
    }
    state parse_ipv4_multicast_dst {
        transition parse_ipv4_or_pre;
    }
    state parse_ipv4_or_pre {
        /* A first byte of 0x45 is plain IPv4; anything else carries a preamble. */
        transition select(packet.lookahead<bit<8>>()) {
            0x45: parse_ipv4;
            default: parse_pre;
        }
    }
    state parse_pre {
        packet.extract(hdr.pre);
        meta.pre_kind = hdr.pre.kind;
        packet.advance((bit<32>)hdr.pre.len * 8);
        transition parse_ipv4;
    }
    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        verify(hdr.ipv4.version == 4, error.BadIpVersion);
        l4.apply(packet, hdr, meta);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        if (standard_metadata.parser_error != error.NoError) {
            mark_to_drop(standard_metadata);
        } else if (meta.low_port == 1) {
            standard_metadata.egress_spec = 1;
        } else {
            standard_metadata.egress_spec = 2;
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

control MyDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.vlan);
        packet.emit(hdr.pre);
        packet.emit(hdr.ipv4);
        packet.emit(hdr.udp);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
