"""P4Info written from the back end's control-plane model: names, ids, match fields,
action references, resources, digests, controller headers, value sets, type info."""

from __future__ import annotations

from pathlib import Path

from backend_helpers import compile_ingress, compile_text, program
from ratelab_p4c import p4rt_ids as ids
from ratelab_p4c.p4info import format_for, serialize
from ratelab_p4c.p4info_proto import p4info_pb2

LOCALS = """
    direct_counter(CounterType.packets) hits;
    counter(32w16, CounterType.bytes) bytes_ctr;
    @name("renamed_reg") register<bit<48>>(64) r;
    action fwd(bit<9> port, bit<32> nh) {
        sm.egress_spec = port; hdr.h.w = nh; bytes_ctr.count(32w0);
    }
    @name(".global_drop") action drop() { mark_to_drop(sm); }
    @hidden action secret() { }
    @id(0x01000077) action pinned() { }
    table route {
        key = {
            hdr.h.w: lpm @name("dst");
            hdr.h.a: ternary;
            hdr.h.c[7:0]: exact;
            hdr.h2.isValid(): exact;
        }
        actions = { fwd; @defaultonly drop; pinned; @tableonly NoAction; }
        const default_action = drop();
        counters = hits;
        size = 512;
    }
    @hidden table internal {
        key = { hdr.h.b: exact; }
        actions = { secret; }
    }
"""

APPLY = "route.apply(); internal.apply(); r.write(32w0, 48w1);"


def _compile(tmp_path: Path):  # type: ignore[no-untyped-def]
    return compile_ingress(tmp_path, LOCALS, APPLY)


def test_table_names_keys_and_actions(tmp_path: Path) -> None:
    info = _compile(tmp_path).p4info
    assert info.pkg_info.arch == "v1model"
    assert [t.preamble.name for t in info.tables] == ["I.route"]  # @hidden left out
    t = info.tables[0]
    assert t.preamble.alias == "route"
    assert t.preamble.id >> 24 == ids.TABLE
    fields = [(m.id, m.name, m.bitwidth, m.match_type) for m in t.match_fields]
    assert fields == [
        (1, "dst", 32, p4info_pb2.MatchField.LPM),
        (2, "hdr.h.a", 8, p4info_pb2.MatchField.TERNARY),
        (3, "hdr.h.c[7:0]", 8, p4info_pb2.MatchField.EXACT),
        (4, "hdr.h2.isValid()", 1, p4info_pb2.MatchField.EXACT),
    ]
    assert t.size == 512
    by_id = {a.preamble.id: a for a in info.actions}
    refs = [(by_id[r.id].preamble.name, r.scope) for r in t.action_refs]
    assert refs == [
        ("I.fwd", p4info_pb2.ActionRef.TABLE_AND_DEFAULT),
        ("global_drop", p4info_pb2.ActionRef.DEFAULT_ONLY),
        ("I.pinned", p4info_pb2.ActionRef.TABLE_AND_DEFAULT),
        ("NoAction", p4info_pb2.ActionRef.TABLE_ONLY),
    ]
    assert by_id[t.const_default_action_id].preamble.name == "global_drop"
    assert "I.secret" not in {a.preamble.name for a in info.actions}


def test_action_params_and_ids(tmp_path: Path) -> None:
    info = _compile(tmp_path).p4info
    acts = {a.preamble.name: a for a in info.actions}
    fwd = acts["I.fwd"]
    assert [(p.id, p.name, p.bitwidth) for p in fwd.params] == [(1, "port", 9), (2, "nh", 32)]
    assert fwd.preamble.id == (ids.ACTION << 24) | (ids.jenkins_one_at_a_time("I.fwd") & 0xFFFFFF)
    assert acts["I.pinned"].preamble.id == 0x01000077
    assert acts["NoAction"].preamble.id == 21257015


def test_resources(tmp_path: Path) -> None:
    r = _compile(tmp_path)
    info = r.p4info
    (dc,) = info.direct_counters
    assert dc.preamble.name == "I.hits" and dc.direct_table_id == info.tables[0].preamble.id
    assert dc.spec.unit == p4info_pb2.CounterSpec.PACKETS
    assert list(info.tables[0].direct_resource_ids) == [dc.preamble.id]
    (c,) = info.counters
    assert (c.preamble.name, c.size, c.spec.unit) == (
        "I.bytes_ctr",
        16,
        p4info_pb2.CounterSpec.BYTES,
    )
    (reg,) = info.registers
    assert reg.preamble.name == "I.renamed_reg"
    assert reg.type_spec.bitstring.bit.bitwidth == 48 and reg.size == 64
    assert reg.preamble.id >> 24 == ids.REGISTER
    # The JSON uses the same names.
    assert r.json["register_arrays"][0]["name"] == "I.renamed_reg"
    assert r.json["counter_arrays"][0]["binding"] == "I.route"


def test_selector_and_profile_tables(tmp_path: Path) -> None:
    locals_ = """
    action_selector(HashAlgorithm.crc16, 32w128, 32w14) sel;
    action set_port(bit<9> p) { sm.egress_spec = p; }
    table ecmp {
        key = { hdr.h.w: exact; hdr.h.a: selector; hdr.h.b: selector; }
        actions = { set_port; }
        implementation = sel;
    }
"""
    r = compile_ingress(tmp_path, locals_, "ecmp.apply();")
    t = r.table("I.ecmp")
    assert t["type"] == "indirect_ws" and t["action_profile"] == "I.sel"
    assert [k["target"] for k in t["key"]] == [["h", "w"]]
    assert "default_entry" not in t
    (prof,) = r.pipeline()["action_profiles"]
    assert prof["name"] == "I.sel" and prof["max_size"] == 128
    assert prof["selector"]["algo"] == "crc16"
    assert prof["selector"]["input"] == [{"type": "field", "value": ["h", "a"]},
                                         {"type": "field", "value": ["h", "b"]}]  # fmt: skip
    (ap,) = r.p4info.action_profiles
    (tm,) = r.p4info.tables
    assert ap.with_selector and ap.size == 128 and list(ap.table_ids) == [tm.preamble.id]
    assert tm.implementation_id == ap.preamble.id
    assert [m.name for m in tm.match_fields] == ["hdr.h.w"]


def test_controller_headers_and_value_sets(tmp_path: Path) -> None:
    top = """
@controller_header("packet_in")
header packet_in_header_t {
    bit<9> ingress_port;
    bit<7> _pad;
}
"""
    parser = """
parser P(packet_in pkt, out headers hdr, inout metadata meta,
         inout standard_metadata_t sm) {
    value_set<bit<16>>(4) ports;
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.c) {
            ports: accept;
            default: accept;
        }
    }
}
"""
    r = compile_text(tmp_path, program(top=top, parser=parser))
    (cpm,) = r.p4info.controller_packet_metadata
    assert cpm.preamble.name == "packet_in" and cpm.preamble.id == 81826293
    assert [(m.id, m.name, m.bitwidth) for m in cpm.metadata] == [
        (1, "ingress_port", 9), (2, "_pad", 7),
    ]  # fmt: skip
    (vs,) = r.p4info.value_sets
    assert vs.preamble.name == "P.ports" and vs.size == 4
    assert vs.match[0].bitwidth == 16
    (jvs,) = r.json["parse_vsets"]
    assert jvs["name"] == "P.ports" and jvs["compressed_bitwidth"] == 16
    trans = r.json["parsers"][0]["parse_states"][0]["transitions"][0]
    assert trans["type"] == "parse_vset" and trans["value"] == "P.ports"


def test_serializable_enum_type_info(tmp_path: Path) -> None:
    top = "enum bit<8> Kind { A = 1, B = 7 }\n"
    r = compile_text(tmp_path, program(top=top))
    e = r.p4info.type_info.serializable_enums["Kind"]
    assert e.underlying_type.bitwidth == 8
    assert [(m.name, m.value) for m in e.members] == [("A", b"\x01"), ("B", b"\x07")]


def test_formats(tmp_path: Path) -> None:
    info = _compile(tmp_path).p4info
    assert format_for("a.txt") == format_for("a.txtpb") == "text"
    assert format_for("a.json") == "json" and format_for("a.bin") == "binary"
    assert p4info_pb2.P4Info.FromString(serialize(info, "binary")) == info
    assert b'name: "I.route"' in serialize(info, "text")


def test_new_types_and_translation(tmp_path: Path) -> None:
    top = """
type bit<9> port_t;
@p4runtime_translation("p4.org/psa/v1/PortId_t", 32) type bit<9> xport_t;
"""
    locals_ = """
    action fwd(port_t port, xport_t x) { sm.egress_spec = (bit<9>)port; }
    table t { key = { sm.ingress_port: exact; } actions = { fwd; } }
"""
    r = compile_ingress(tmp_path, locals_, "t.apply();", top=top)
    fwd = next(a for a in r.p4info.actions if a.preamble.name == "I.fwd")
    port, x = fwd.params
    assert (port.bitwidth, port.type_name.name) == (9, "port_t")
    assert (x.bitwidth, x.type_name.name) == (32, "xport_t")  # the SDN width
    nts = r.p4info.type_info.new_types
    assert nts["port_t"].original_type.bitstring.bit.bitwidth == 9
    tr = nts["xport_t"].translated_type
    assert (tr.uri, tr.sdn_bitwidth) == ("p4.org/psa/v1/PortId_t", 32)
    # The data plane keeps the P4 width.
    assert r.action("I.fwd")["runtime_data"] == [
        {"name": "port", "bitwidth": 9},
        {"name": "x", "bitwidth": 9},
    ]
