/* Tables: exact, lpm, ternary, range and optional keys; action data;
 * default_action and const default_action; const entries with implicit and
 * explicit (@priority) priorities; size; @defaultonly / @tableonly actions. */
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<32> addr;
    bit<16> port;
    bit<8>  proto;
    bit<8>  flags;
    bit<8>  result;
    bit<8>  vrf;
}

struct metadata { }

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
    action set_result(bit<8> r) {
        hdr.h.result = r;
    }
    action set_port_and_result(bit<9> port, bit<8> r) {
        standard_metadata.egress_spec = port;
        hdr.h.result = r;
    }
    @defaultonly action miss_action() {
        hdr.h.result = 0xee;
    }
    @tableonly action only_in_table() {
        hdr.h.result = 0xaa;
    }
    action drop() {
        mark_to_drop(standard_metadata);
    }

    table t_exact {
        key = { hdr.h.addr: exact; hdr.h.vrf: exact; }
        actions = { set_result; only_in_table; miss_action; }
        default_action = miss_action();
        size = 2048;
    }

    table t_lpm {
        key = { hdr.h.vrf: exact; hdr.h.addr: lpm; }
        actions = { set_port_and_result; drop; }
        default_action = set_port_and_result(7, 0x77);
        size = 4096;
    }

    table t_ternary {
        key = {
            hdr.h.proto: ternary;
            hdr.h.flags: ternary;
        }
        actions = { set_result; drop; }
        const default_action = drop();
        const entries = {
            (6, 0x02 &&& 0x02): set_result(1);   // TCP SYN
            (6, _):             set_result(2);   // other TCP
            (17, _):            set_result(3);   // UDP
            (_, 0x80 &&& 0x80): set_result(4);
        }
    }

    table t_range {
        key = {
            hdr.h.port: range;
            hdr.h.proto: exact;
        }
        actions = { set_result; NoAction; }
        default_action = NoAction();
        const entries = {
            (0 .. 1023, 6):      set_result(10);
            (1024 .. 49151, 6):  set_result(11);
            (80, 17):            set_result(12);
        }
    }

    table t_optional {
        key = {
            hdr.h.vrf: optional;
            hdr.h.proto: optional;
        }
        actions = { set_result; NoAction; }
        default_action = NoAction();
        size = 64;
    }

    table t_priorities {
        key = { hdr.h.flags: ternary; }
        actions = { set_result; }
        default_action = set_result(0);
        const entries = {
            0x01 &&& 0x01: set_result(21) @priority(3);
            0x02 &&& 0x02: set_result(22) @priority(2);
            0x00 &&& 0x00: set_result(23) @priority(1);
        }
    }

    apply {
        t_exact.apply();
        t_lpm.apply();
        t_ternary.apply();
        t_range.apply();
        t_optional.apply();
        t_priorities.apply();
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
