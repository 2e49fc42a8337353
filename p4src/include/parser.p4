/* Parser, checksum controls and deparser of the ratelab router. */
#ifndef RATELAB_PARSER_P4
#define RATELAB_PARSER_P4

/* Any failure here leaves standard_metadata.parser_error set, and ingress
 * counts the packet as malformed (docs/ROUTER_MODEL.md "Forwarding"). */
parser RouterParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }

    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        verify(hdr.ipv4.version == 4, error.ParserInvalidArgument);
        verify(hdr.ipv4.ihl >= 5, error.ParserInvalidArgument);
        pkt.extract(hdr.ipv4_options, ((bit<32>)hdr.ipv4.ihl - 5) * 32);
        /* Only a first (or whole) fragment carries the RBCC header or L4 ports. */
        transition select(hdr.ipv4.frag_offset, hdr.ipv4.protocol) {
            (0, IPPROTO_RBCC): parse_rbcc;
            (0, IPPROTO_TCP): parse_l4_ports;
            (0, IPPROTO_UDP): parse_l4_ports;
            default: accept;
        }
    }

    /* Read only to classify: a frame too short for the ports is not malformed
     * because of it (ingress forgives PacketTooShort here, see l4_expected). */
    state parse_l4_ports {
        meta.l4_expected = 1;
        pkt.extract(hdr.l4_ports);
        transition accept;
    }

    state parse_rbcc {
        pkt.extract(hdr.rbcc);
        transition accept;
    }
}

control RouterVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        verify_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.tos, hdr.ipv4.total_len,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset,
              hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr,
              hdr.ipv4_options.options },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

control RouterComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.tos, hdr.ipv4.total_len,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset,
              hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr,
              hdr.ipv4_options.options },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

control RouterDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.ipv4_options);
        pkt.emit(hdr.l4_ports);
        pkt.emit(hdr.rbcc);
    }
}

#endif
