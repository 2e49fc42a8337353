/* v1model externs: register (two type arguments; read/write inside @atomic), indexed counter and
 * meter, hash with several algorithms, random, log_msg, assert, assume,
 * truncate and mark_to_drop. */
#include <core.p4>
// The 2020 v1model signatures: register<T, I> with a typed index.
#define V1MODEL_VERSION 20200408
#include <v1model.p4>

header h_t {
    bit<32> key;
    bit<16> idx;
    bit<32> hashed_crc32;
    bit<16> hashed_crc16;
    bit<16> hashed_identity;
    bit<8>  rnd;
    bit<32> reg_value;
    bit<8>  color;
}

struct metadata {
    bit<32> old_value;
}

struct headers {
    h_t h;
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.h);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    register<bit<32>, bit<32>>(1024) flow_bytes;
    counter(512, CounterType.packets) port_packets;
    counter(128, CounterType.bytes) class_bytes;
    counter(64, CounterType.packets_and_bytes) both_stats;
    meter(256, MeterType.packets) rate_limiter;
    meter(32, MeterType.bytes) byte_limiter;

    action account() {
        @atomic {
            flow_bytes.read(meta.old_value, (bit<32>)hdr.h.idx);
            flow_bytes.write((bit<32>)hdr.h.idx, meta.old_value + standard_metadata.packet_length);
        }
        hdr.h.reg_value = meta.old_value;
        port_packets.count((bit<32>)standard_metadata.ingress_port);
        class_bytes.count(32w7);
        both_stats.count((bit<32>)hdr.h.idx[5:0]);
    }
    action police() {
        rate_limiter.execute_meter((bit<32>)hdr.h.idx, hdr.h.color);
        byte_limiter.execute_meter<bit<8>>(32w3, hdr.h.color);
    }
    action hashing() {
        hash(hdr.h.hashed_crc32, HashAlgorithm.crc32, 32w0, { hdr.h.key, hdr.h.idx }, 32w0xffffffff);
        hash(hdr.h.hashed_crc16, HashAlgorithm.crc16, 16w100, { hdr.h.key }, 32w1000);
        hash(hdr.h.hashed_identity, HashAlgorithm.identity, 16w0, { hdr.h.idx }, 32w65536);
        random(hdr.h.rnd, 8w10, 8w20);
    }
    action diagnostics() {
        log_msg("plain message");
        log_msg("key={} idx={}", { hdr.h.key, hdr.h.idx });
        assert(hdr.h.idx != 0xffff);
        assume(hdr.h.key != 0);
    }
    apply {
        account();
        police();
        hashing();
        diagnostics();
        if (hdr.h.color == 2) {
            mark_to_drop(standard_metadata);
        }
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    apply {
        if (hdr.h.key == 0) {
            truncate(64);
        }
    }
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
