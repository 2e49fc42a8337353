/* standard_metadata.parser_error after each way BMv2's parser can fail (v1model goes
 * on to ingress): the value BMv2 sets is the one the JSON's "errors" list gives the
 * core error, which is what `error.X` compiles to. The first byte picks the case;
 * ingress writes which error it saw into a header of its own. */
#include <core.p4>
#include <v1model.p4>

error {
    Custom
}

header sel_t {
    bit<8> sel;
    bit<8> len;
}

header opt_t {
    varbit<32> data;
}

header word_t {
    bit<32> w;
}

header byte_t {
    bit<8> b;
}

header res_t {
    bit<8> code;
}

struct headers {
    res_t res;
    sel_t sel;
    opt_t opt;
    word_t word;
    byte_t[2] stack;
}

struct metadata { }

parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.sel);
        transition select(hdr.sel.sel) {
            1: varbit_len;
            2: varbit_len;
            3: stack;
            4: word;
            6: custom;
            7: skip;
            8: accept;
        }
    }
    state varbit_len {
        pkt.extract(hdr.opt, (bit<32>)hdr.sel.len);
        transition accept;
    }
    state stack {
        pkt.extract(hdr.stack.next);
        transition stack;
    }
    state word {
        pkt.extract(hdr.word);
        transition accept;
    }
    state custom {
        verify(hdr.sel.len == 0, error.Custom);
        transition accept;
    }
    state skip {
        pkt.advance((bit<32>)hdr.sel.len);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        standard_metadata.egress_spec = 2;
        hdr.res.setValid();
        error e = standard_metadata.parser_error;
        if (e == error.NoError) {
            hdr.res.code = 0;
        } else if (e == error.PacketTooShort) {
            hdr.res.code = 1;
        } else if (e == error.NoMatch) {
            hdr.res.code = 2;
        } else if (e == error.StackOutOfBounds) {
            hdr.res.code = 3;
        } else if (e == error.HeaderTooShort) {
            hdr.res.code = 4;
        } else if (e == error.ParserTimeout) {
            hdr.res.code = 5;
        } else if (e == error.ParserInvalidArgument) {
            hdr.res.code = 6;
        } else if (e == error.Custom) {
            hdr.res.code = 7;
        } else {
            hdr.res.code = 0xff;
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

control MyDeparser(packet_out pkt, in headers hdr) {
    apply {
        pkt.emit(hdr.res);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;
