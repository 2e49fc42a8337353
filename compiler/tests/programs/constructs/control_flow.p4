/* Control flow: if/else chains, switch on action_run, .hit/.miss, an action
 * with a directional parameter bound in a table's action list, a sub-control
 * applied from ingress, exit and return, a function, local variables and
 * local instances. */
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  a;
    bit<8>  b;
    bit<8>  path;
    bit<8>  fn;
    bit<8>  sub;
    bit<8>  after_exit;
    bit<8>  dir;
}

struct metadata {
    bit<8> tmp;
}

struct headers {
    h_t h;
}

/* A function: the larger of two values plus one. */
bit<8> max_plus_one(in bit<8> x, in bit<8> y) {
    if (x > y) {
        return x + 1;
    }
    return y + 1;
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

/* Applied from ingress; records that it ran and returns early for a == 0. */
control Marker(inout h_t h, in bit<8> tag) {
    action mark(bit<8> v) {
        h.sub = v;
    }
    table marks {
        key = { h.a: exact; }
        actions = { mark; NoAction; }
        default_action = mark(0x55);
    }
    apply {
        if (h.a == 0) {
            return;
        }
        marks.apply();
        h.sub = h.sub + tag;
    }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    Marker() marker;
    bit<8> local_var = 3;

    action first(bit<8> v) {
        hdr.h.path = v;
    }
    action second() {
        hdr.h.path = 2;
    }
    action third() {
        hdr.h.path = 3;
    }
    table choose {
        key = { hdr.h.b: exact; }
        actions = { first; second; third; }
        default_action = third();
    }
    /* dst is bound in the actions list; v comes from the table entry. */
    action copy_into(inout bit<8> dst, bit<8> v) {
        dst = v + 1;
    }
    table directional {
        key = { hdr.h.a: exact; }
        actions = { copy_into(hdr.h.dir); NoAction; }
        default_action = NoAction();
    }
    table probe {
        key = { hdr.h.a: exact; }
        actions = { NoAction; }
        default_action = NoAction();
    }
    table probe_again {
        key = { hdr.h.b: exact; }
        actions = { NoAction; }
        default_action = NoAction();
    }

    apply {
        switch (choose.apply().action_run) {
            first: {
                hdr.h.path = hdr.h.path + 10;
            }
            second:
            third: {
                hdr.h.path = hdr.h.path + 20;
            }
        }
        if (probe.apply().hit) {
            hdr.h.path = hdr.h.path + 100;
        } else if (probe_again.apply().miss) {
            hdr.h.path = hdr.h.path + 50;
        }
        hdr.h.fn = max_plus_one(hdr.h.a, hdr.h.b);
        directional.apply();
        local_var = local_var + hdr.h.a;
        meta.tmp = local_var;
        marker.apply(hdr.h, meta.tmp);
        if (hdr.h.b == 0xff) {
            exit;
        }
        hdr.h.after_exit = 1;
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
