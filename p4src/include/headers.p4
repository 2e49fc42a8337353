/* Headers and metadata of the ratelab router. */
#ifndef RATELAB_HEADERS_P4
#define RATELAB_HEADERS_P4

const bit<16> ETHERTYPE_IPV4 = 0x0800;
const bit<8>  IPPROTO_TCP = 6;
const bit<8>  IPPROTO_UDP = 17;
const bit<8>  IPPROTO_RBCC = 253;
const bit<4>  RBCC_VERSION = 1;
const bit<4>  RBCC_FLAG_FIN = 0x4;

header ethernet_t {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

header ipv4_t {
    bit<4>  version;
    bit<4>  ihl;
    bit<8>  tos;
    bit<16> total_len;
    bit<16> identification;
    bit<3>  flags;
    bit<13> frag_offset;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> hdr_checksum;
    bit<32> src_addr;
    bit<32> dst_addr;
}

/* Up to 40 bytes of options (IHL 6..15). */
header ipv4_options_t {
    varbit<320> options;
}

/* The first four bytes of a TCP or UDP header: what classification reads. */
header l4_ports_t {
    bit<16> src_port;
    bit<16> dst_port;
}

/* RBCC.md "Packet format": 24 bytes after the IPv4 header and options. */
header rbcc_t {
    bit<4>  version;
    bit<4>  flags;
    bit<8>  next_proto;
    bit<16> reserved;
    bit<32> rate;
    bit<32> bottle_node;
    bit<32> return_rate;
    bit<32> return_bottle_node;
    bit<32> current_rate;
}

struct headers_t {
    ethernet_t     ethernet;
    ipv4_t         ipv4;
    ipv4_options_t ipv4_options;
    l4_ports_t     l4_ports;
    rbcc_t         rbcc;
}

/* Per-port settings from the port_config table. */
struct port_settings_t {
    bit<48> mac;
    bit<32> rbcc_capacity;  /* B/s */
    bit<32> queue_limit;    /* packets */
    bit<1>  red_enabled;
    bit<32> wq16;           /* round(w_q * 2^16) */
    bit<32> th_min16;       /* th_min << 16 */
    bit<32> th_max16;
    bit<64> slope;          /* floor(max_p * 2^32 / (th_max - th_min)), up to 2^32 */
    bit<32> s_recip;        /* floor(2^32 / s_us), 0 on an unlimited port */
    bit<32> seed;           /* xorshift seed */
}

struct metadata_t {
    port_settings_t port;
    bit<32> router_id;
    bit<32> min_rate;
    bit<48> idle_timeout_us;
    bit<32> decay_port;     /* keys of the decay table */
    bit<32> decay_m;
    bit<32> decay;          /* floor((1 - w_q)^m * 2^16); 0 on a miss */
    bit<32> recip_k;        /* key of the recip table */
    bit<64> recip;          /* floor(2^32 / k) */
    /* Classification (classify.p4): the packet's priority at its egress port,
     * which is also its queue there; queue_index = port + MAX_PORTS * priority
     * indexes the per-queue registers in ingress and, carried through the
     * traffic manager, in egress. */
    bit<1>  l4_expected;    /* the parser went on to the TCP/UDP ports */
    bit<6>  dscp;
    bit<3>  class_priority; /* set by a classification table that hits */
    bit<32> queue_index;
}

#endif
