/* Naming and id annotations: @name (local and global names), @id on tables,
 * actions, counters and registers, @hidden tables, plus header validity
 * built-ins (isValid, setValid, setInvalid). */
#include <core.p4>
// The 2020 v1model signatures: register<T, I> with a typed index.
#define V1MODEL_VERSION 20200408
#include <v1model.p4>

header a_t {
    bit<16> x;
    bit<16> y;
}

header b_t {
    bit<8> z;
}

struct metadata { }

struct headers {
    a_t a;
    b_t b;
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.a);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    @id(0x12000042) counter(16, CounterType.packets) hits;
    @id(0x16000099) @name("flow_state") register<bit<16>, bit<32>>(8) state_reg;

    @id(0x01000101) action set_y(bit<16> y) {
        hdr.a.y = y;
        hits.count(32w1);
    }
    @name("renamed_action") action rename_me() {
        hdr.a.y = 0;
    }
    @name(".global_action") action globally_named() {
        hdr.a.y = 1;
    }
    action add_b(bit<8> z) {
        hdr.b.setValid();
        hdr.b.z = z;
        state_reg.write(32w0, hdr.a.x);
    }
    action remove_a() {
        hdr.a.setInvalid();
    }

    @id(0x02000202) table with_id {
        key = { hdr.a.x: exact; }
        actions = { set_y; rename_me; NoAction; }
        default_action = NoAction();
    }
    @name("friendly_table") table internal_name {
        key = { hdr.a.x: exact @name("x_key"); }
        actions = { globally_named; add_b; NoAction; }
        default_action = NoAction();
    }
    @name(".top_level_table") table global_table {
        key = { hdr.a.y: exact; }
        actions = { remove_a; NoAction; }
        default_action = NoAction();
    }
    @hidden table invisible {
        actions = { remove_a; }
        default_action = remove_a();
    }
    apply {
        with_id.apply();
        internal_name.apply();
        global_table.apply();
        if (hdr.b.isValid() && !hdr.a.isValid()) {
            invisible.apply();
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
        packet.emit(hdr.a);
        packet.emit(hdr.b);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
