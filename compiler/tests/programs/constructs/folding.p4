/* Constant folding: every right-hand side below is a compile-time constant,
 * so the compiled action must assign the folded value. */
#include <core.p4>
#include <v1model.p4>

const bit<16> K = 0xABCD;

header r_t {
    bit<8>  sat_add;    // 8w200 |+| 8w100      = 255
    bit<8>  sat_sub;    // 8w5 |-| 8w10         = 0
    bit<8>  slice;      // K[11:4]              = 0xBC
    bit<16> concat;     // 8w0x12 ++ 8w0x34     = 0x1234
    bit<8>  shift;      // 8w1 << 7             = 0x80
    bit<4>  trunc;      // (bit<4>)8w0xFF       = 0xF
    bit<8>  neg;        // (bit<8>)(-8s1)       = 0xFF
    bit<8>  wrap;       // 8w250 + 8w10         = 4
    bit<8>  cond;       // (K > 0x1000) ? 7 : 9 = 7
    bit<32> arith;      // (3 + 4) * 5 - 1      = 34
    int<8>  ssat;       // 8s100 |+| 8s100      = 127
    bit<8>  bool_cast;  // (bit<8>)(bit<1>)(K == 0xABCD) = 1
}

struct metadata { }

struct headers {
    r_t r;
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.r);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    action fold() {
        hdr.r.sat_add = 8w200 |+| 8w100;
        hdr.r.sat_sub = 8w5 |-| 8w10;
        hdr.r.slice = K[11:4];
        hdr.r.concat = 8w0x12 ++ 8w0x34;
        hdr.r.shift = 8w1 << 7;
        hdr.r.trunc = (bit<4>)8w0xFF;
        hdr.r.neg = (bit<8>)(-8s1);
        hdr.r.wrap = 8w250 + 8w10;
        hdr.r.cond = (K > 0x1000) ? 8w7 : 8w9;
        hdr.r.arith = (3 + 4) * 5 - 1;
        hdr.r.ssat = 8s100 |+| 8s100;
        hdr.r.bool_cast = (bit<8>)(bit<1>)(K == 0xABCD);
    }
    apply {
        fold();
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
        packet.emit(hdr.r);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
