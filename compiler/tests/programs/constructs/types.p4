/* Type declarations: typedef, type, plain and serializable enums, error,
 * constants (folded at compile time), bit<N>, int<N>, bool. */
#include <core.p4>
#include <v1model.p4>

typedef bit<48> mac_t;
type bit<32> Tag_t;

enum Color { RED, GREEN, BLUE }

enum bit<8> Proto {
    TCP  = 6,
    UDP  = 17,
    ICMP = 1
}

error { BadVersion, TooManyTags }

const bit<8>  BASE  = 0x10;
const bit<8>  SHIFTED = BASE << 2;            // 0x40
const bit<16> WIDE  = BASE ++ 8w0x01;          // 0x1001
const int<8>  NEG   = -3;
const bool    FLAG  = true;
const bit<32> PRODUCT = 7 * 6 + 100 / 4 - 2;   // 65

header h_t {
    mac_t    mac;
    bit<8>   proto;
    int<8>   delta;
    bit<16>  wide;
    bit<32>  product;
    bit<8>   neg_raw;
    bit<8>   flag_bit;
    bit<8>   color_code;
}

struct metadata {
    Tag_t  tag;
    bool   seen;
    Color  color;
    Proto  proto;
    int<16> signed_sum;
}

struct headers {
    h_t h;
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.h);
        verify(hdr.h.proto != 0xff, error.BadVersion);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    action set_constants() {
        hdr.h.proto = SHIFTED;
        hdr.h.wide = WIDE;
        hdr.h.delta = NEG;
        hdr.h.product = PRODUCT;
        hdr.h.neg_raw = (bit<8>)NEG;
        hdr.h.flag_bit = FLAG ? 8w1 : 8w0;
    }
    action use_types(Tag_t tag, Proto p) {
        meta.tag = tag;
        meta.proto = p;
        meta.seen = true;
        meta.color = Color.BLUE;
        meta.signed_sum = (int<16>)hdr.h.delta + 16s100;
    }
    table classify {
        key = { hdr.h.mac: exact; meta.proto: exact; }
        actions = { use_types; NoAction; }
        default_action = NoAction();
    }
    apply {
        set_constants();
        classify.apply();
        if (meta.color == Color.BLUE && meta.seen) {
            hdr.h.color_code = 3;
        }
        if (meta.proto == Proto.UDP) {
            hdr.h.color_code = 17;
        }
        if (standard_metadata.parser_error == error.BadVersion) {
            mark_to_drop(standard_metadata);
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
        packet.emit(hdr.h);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
