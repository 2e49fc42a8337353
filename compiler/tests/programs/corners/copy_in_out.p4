/* P4_16 calling convention: `in`/`inout` arguments are copied in at the call, `out`
 * and `inout` copied back at its end, left to right; an `out` header starts invalid.
 * Each call below behaves differently when a parameter is just another name for the
 * argument's storage. */
#include <core.p4>
#include <v1model.p4>

header pair_t {
    bit<8> a;
    bit<8> b;
}

struct headers {
    pair_t x;
    pair_t y;
    pair_t z;
    pair_t[2] s;
}

struct metadata {
    bit<8> i;
}

parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.x);
        pkt.extract(hdr.y);
        pkt.extract(hdr.z);
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

// Both parameters name the same field: copy-out of `b` comes last and wins.
void twice(inout bit<8> a, inout bit<8> b) {
    a = a + 1;
    b = b + 10;
}

bit<8> increment(inout bit<8> v) {
    v = v + 1;
    return v;
}

void add_to(inout bit<8> acc, in bit<8> n) {
    acc = acc + n;
}

// `o` starts invalid even though it is the very header `from` reads.
control rebuild(out pair_t o, in pair_t from) {
    apply {
        if (from.isValid()) {
            o.setValid();
            o.a = from.a + 1;
            o.b = from.b;
        }
    }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    rebuild() rebuilder;

    // Writes `hdr.x` by name while its parameter is a copy of it.
    action touch(inout pair_t p) {
        p.a = 1;
        hdr.x.a = 2;
        p.b = hdr.x.a;
    }

    // Moves the index its argument was taken at: copy-out still goes to s[0].
    action set_element(inout pair_t p) {
        meta.i = 1;
        p.a = 0x77;
    }

    // Pops the stack under its argument `s.last`: copy-out still goes to the element
    // that was last at the call (s[1]), not to the one last after the pop (s[0]).
    action shrink(inout pair_t p) {
        hdr.s.pop_front(1);
        p.b = 0x99;
    }

    apply {
        standard_metadata.egress_spec = 2;
        touch(hdr.x);
        twice(hdr.y.a, hdr.y.a);
        // The second argument's call changes the first argument after its copy-in.
        add_to(hdr.y.b, increment(hdr.y.b));
        rebuilder.apply(hdr.z, hdr.z);
        set_element(hdr.s[meta.i]);
        shrink(hdr.s.last);
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    apply { }
}

control MyComputeChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyDeparser(packet_out pkt, in headers hdr) {
    apply {
        pkt.emit(hdr);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;
