/* A checksum control that applies another control directly (`C.apply(...)`), so the
 * checksum computation lives in a reusable control, and an action selector with
 * @max_group_size (a P4Info field, not an annotation). */
#include <core.p4>
#include <v1model.p4>

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

struct headers {
    ipv4_t outer;
    ipv4_t inner;
}

struct metadata { }

parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.outer);
        pkt.extract(hdr.inner);
        transition accept;
    }
}

control ipv4_checksum(inout ipv4_t ip, in bool on) {
    apply {
        update_checksum(on && ip.isValid(),
            { ip.version, ip.ihl, ip.diffserv, ip.totalLen, ip.identification, ip.flags,
              ip.fragOffset, ip.ttl, ip.protocol, ip.srcAddr, ip.dstAddr },
            ip.hdrChecksum, HashAlgorithm.csum16);
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    @max_group_size(4)
    action_selector(HashAlgorithm.crc16, 32w64, 32w16) spread;

    action set_port(bit<9> port) {
        standard_metadata.egress_spec = port;
    }

    table pick {
        key = {
            hdr.outer.dstAddr: exact;
            hdr.outer.srcAddr: selector;
        }
        actions = { set_port; NoAction; }
        implementation = spread;
    }

    apply {
        pick.apply();
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    apply { }
}

control MyComputeChecksum(inout headers hdr, inout metadata meta) {
    apply {
        ipv4_checksum.apply(hdr.outer, hdr.inner.ttl != 0);
        ipv4_checksum.apply(hdr.inner, true);
    }
}

control MyDeparser(packet_out pkt, in headers hdr) {
    apply {
        pkt.emit(hdr.outer);
        pkt.emit(hdr.inner);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;
