/* Table entries on a key of serializable enum type with masks: an enum member as
 * the mask, and a bit pattern of the enum's underlying type. */
#include <core.p4>
#include <v1model.p4>

enum bit<8> Kind {
    A = 1,
    B = 2,
    HIGH = 0x10
}

header h_t {
    bit<8> kind;
    bit<8> result;
}

struct headers {
    h_t h;
}

struct metadata { }

parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    Kind k;

    action set(bit<8> v) {
        hdr.h.result = v;
    }

    table by_kind {
        key = {
            k: ternary;
        }
        actions = {
            set;
            NoAction;
        }
        const entries = {
            Kind.HIGH &&& Kind.HIGH: set(0x44);
            Kind.A &&& 0xff: set(0x55);
            Kind.B &&& 8w0x0f: set(0x77);
            _: set(0x66);
        }
    }

    apply {
        standard_metadata.egress_spec = 2;
        k = (Kind)hdr.h.kind;
        by_kind.apply();
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
