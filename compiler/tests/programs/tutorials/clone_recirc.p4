/* Mirroring and packet re-circulation: ingress clones to a mirror session,
 * resubmits first-pass packets, and egress recirculates, each preserving the
 * metadata fields of one @field_list. */
#include <core.p4>
#include <v1model.p4>

const bit<32> I2E_CLONE_SESSION = 5;
const bit<32> E2E_CLONE_SESSION = 6;

const bit<8> FL_RESUBMIT = 1;
const bit<8> FL_RECIRCULATE = 2;
const bit<8> FL_CLONE = 3;

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

struct metadata {
    @field_list(FL_RESUBMIT)
    bit<8> resubmit_count;
    @field_list(FL_RECIRCULATE)
    bit<8> recirculate_count;
    @field_list(FL_CLONE, FL_RECIRCULATE)
    bit<16> mirror_reason;
    bit<8> scratch;
}

struct headers {
    ethernet_t ethernet;
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    action do_resubmit() {
        meta.resubmit_count = meta.resubmit_count + 1;
        resubmit_preserving_field_list(FL_RESUBMIT);
    }
    action do_clone(bit<16> reason) {
        meta.mirror_reason = reason;
        clone_preserving_field_list(CloneType.I2E, I2E_CLONE_SESSION, FL_CLONE);
    }
    action plain_clone() {
        clone(CloneType.I2E, I2E_CLONE_SESSION);
    }
    action forward(bit<9> port) {
        standard_metadata.egress_spec = port;
    }
    table mirror {
        key = { hdr.ethernet.srcAddr: exact; }
        actions = { do_clone; plain_clone; NoAction; }
        default_action = NoAction();
    }
    table fwd {
        key = { hdr.ethernet.dstAddr: exact; }
        actions = { forward; do_resubmit; NoAction; }
        default_action = NoAction();
    }
    apply {
        mirror.apply();
        if (standard_metadata.instance_type == 0) {
            fwd.apply();
        }
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    apply {
        if (standard_metadata.instance_type == 1) {
            /* An ingress clone: cut it down to the Ethernet header and mirror once more. */
            truncate(14);
            clone(CloneType.E2E, E2E_CLONE_SESSION);
        } else if (meta.recirculate_count < 2 && hdr.ethernet.etherType == 0x9000) {
            meta.recirculate_count = meta.recirculate_count + 1;
            recirculate_preserving_field_list(FL_RECIRCULATE);
        }
    }
}

control MyComputeChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
