"""The shared P4Info schema: lookups by id, full name and alias, errors, file formats."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from finsy.proto.p4.config.v1 import p4info_pb2
from google.protobuf import json_format, text_format
from ratelab_p4info import MatchKind, ScalarType, Schema, SchemaError, load_p4info

T_LPM, T_ACL = 0x02000001, 0x02000002
A_FWD, A_DROP, A_DEFAULT_ONLY = 0x01000001, 0x01000002, 0x01000003
C_PORTS, DC_ACL = 0x12000001, 0x13000001
R_SEEN = 0x16000001


def p4info() -> p4info_pb2.P4Info:
    info = p4info_pb2.P4Info()
    fwd = info.actions.add()
    fwd.preamble.id, fwd.preamble.name, fwd.preamble.alias = A_FWD, "ingress.fwd", "fwd"
    fwd.params.add(id=1, name="port", bitwidth=9)
    fwd.params.add(id=2, name="mac", bitwidth=48)
    drop = info.actions.add()
    drop.preamble.id, drop.preamble.name, drop.preamble.alias = A_DROP, "ingress.drop", "drop"
    only = info.actions.add()
    only.preamble.id, only.preamble.name = A_DEFAULT_ONLY, "NoAction"

    lpm = info.tables.add()
    lpm.preamble.id, lpm.preamble.name, lpm.preamble.alias = T_LPM, "ingress.ipv4_lpm", "ipv4_lpm"
    lpm.match_fields.add(
        id=1, name="hdr.ipv4.dst", bitwidth=32, match_type=p4info_pb2.MatchField.LPM
    )
    lpm.action_refs.add(id=A_FWD)
    lpm.action_refs.add(id=A_DEFAULT_ONLY, scope=p4info_pb2.ActionRef.DEFAULT_ONLY)
    lpm.size = 1024

    acl = info.tables.add()
    acl.preamble.id, acl.preamble.name, acl.preamble.alias = T_ACL, "ingress.acl", "acl"
    acl.match_fields.add(id=1, name="src", bitwidth=32, match_type=p4info_pb2.MatchField.TERNARY)
    acl.action_refs.add(id=A_DROP, scope=p4info_pb2.ActionRef.TABLE_ONLY)
    acl.size = 16

    ports = info.counters.add()
    ports.preamble.id, ports.preamble.name, ports.preamble.alias = C_PORTS, "egress.ports", "ports"
    ports.spec.unit = p4info_pb2.CounterSpec.BOTH
    ports.size = 64
    direct = info.direct_counters.add()
    direct.preamble.id, direct.preamble.name = DC_ACL, "ingress.acl_hits"
    direct.spec.unit = p4info_pb2.CounterSpec.PACKETS
    direct.direct_table_id = T_ACL

    seen = info.registers.add()
    seen.preamble.id, seen.preamble.name, seen.preamble.alias = R_SEEN, "ingress.seen", "seen"
    seen.type_spec.new_type.name = "Stamp_t"
    info.type_info.new_types["Stamp_t"].original_type.bitstring.bit.bitwidth = 40
    seen.size = 8
    return info


def test_lookup_by_full_name_alias_and_id_give_the_same_entity() -> None:
    s = Schema(p4info())
    by_name = s.tables["ingress.ipv4_lpm"]
    assert s.tables["ipv4_lpm"] is by_name
    assert s.tables[T_LPM] is by_name
    assert (by_name.id, by_name.size) == (T_LPM, 1024)
    assert [(f.name, f.bitwidth, f.kind) for f in by_name.match_fields] == [
        ("hdr.ipv4.dst", 32, MatchKind.LPM)
    ]
    assert s.actions["fwd"] is s.actions[A_FWD]
    assert [(p.name, p.bitwidth) for p in s.actions["ingress.fwd"].params] == [
        ("port", 9),
        ("mac", 48),
    ]
    assert s.actions[A_FWD].param(2) == s.actions[A_FWD].params[1]
    assert s.actions[A_FWD].param(3) is None
    counter = s.counters["ports"]
    assert (counter.id, counter.unit, counter.size) == (C_PORTS, "BOTH", 64)
    assert s.registers["seen"].value == ScalarType("bitstring", 40)  # through the new type
    assert s.registers[R_SEEN].size == 8


def test_tables_know_their_actions_priority_and_direct_counter() -> None:
    s = Schema(p4info())
    lpm, acl = s.tables[T_LPM], s.tables[T_ACL]
    assert not lpm.needs_priority and acl.needs_priority
    fwd_ref, default_ref = lpm.action_ref(A_FWD), lpm.action_ref(A_DEFAULT_ONLY)
    assert fwd_ref is not None and fwd_ref.table_ok and fwd_ref.default_ok
    assert default_ref is not None and not default_ref.table_ok and default_ref.default_ok
    drop_ref = acl.action_ref(A_DROP)
    assert drop_ref is not None and drop_ref.table_ok and not drop_ref.default_ok
    assert lpm.action_ref(A_DROP) is None
    assert acl.direct_counter_id == DC_ACL and lpm.direct_counter_id == 0
    assert s.direct_counters[DC_ACL].direct_table_id == T_ACL
    assert lpm.match_field(1) is lpm.match_fields[0] and lpm.match_field(2) is None


def test_membership_iteration_and_wildcard_selection() -> None:
    s = Schema(p4info())
    assert "ipv4_lpm" in s.tables and T_ACL in s.tables
    assert "nope" not in s.tables and 0x02FFFFFF not in s.tables and 1.5 not in s.tables
    assert [t.id for t in s.tables] == [T_LPM, T_ACL] and len(s.tables) == 2
    assert s.tables.selected(0) == list(s.tables)
    assert s.tables.selected(T_ACL) == [s.tables[T_ACL]]
    assert s.tables.get("nope") is None and s.tables.get(T_LPM) is s.tables[T_LPM]
    assert len(s.meters) == 0 and s.packet_in is None and s.packet_out is None


def test_missing_names_and_ids_raise_one_line_errors() -> None:
    s = Schema(p4info())
    with pytest.raises(SchemaError, match=r"^the P4Info has no table named 'nope'$"):
        s.tables["nope"]
    with pytest.raises(SchemaError, match=r"^the P4Info has no action with id 0x01ffffff$"):
        s.actions[0x01FFFFFF]
    with pytest.raises(SchemaError, match="no counter named 'ipv4_lpm'"):
        s.counters["ipv4_lpm"]  # a table's alias is no counter's
    with pytest.raises(SchemaError, match="no table with id 0x02ffffff"):
        s.tables.selected(0x02FFFFFF)


def test_a_full_name_wins_over_another_entitys_alias() -> None:
    info = p4info()
    other = info.tables.add()
    other.preamble.id, other.preamble.name = 0x02000003, "acl"  # = ingress.acl's alias
    s = Schema(info)
    assert s.tables["acl"].id == 0x02000003
    assert s.tables["ingress.acl"].id == T_ACL


def test_an_alias_two_entities_share_names_neither() -> None:
    info = p4info()
    twin = info.tables.add()
    twin.preamble.id, twin.preamble.name, twin.preamble.alias = 0x02000003, "egress.acl", "acl"
    s = Schema(info)
    assert "acl" not in s.tables
    with pytest.raises(SchemaError, match="table alias 'acl' is ambiguous"):
        s.tables["acl"]
    assert s.tables["egress.acl"].id == 0x02000003


def test_malformed_p4info_is_refused() -> None:
    dup = p4info()
    dup.tables[1].preamble.id = T_LPM
    with pytest.raises(SchemaError, match=r"duplicate id 0x02000001 \(ingress.acl\)"):
        Schema(dup)
    unspecified = p4info()
    unspecified.tables[0].match_fields[0].match_type = p4info_pb2.MatchField.UNSPECIFIED
    with pytest.raises(SchemaError, match=r"ingress\.ipv4_lpm: unsupported match type on hdr"):
        Schema(unspecified)


class _LookupFailed(Exception):
    pass


class _Malformed(Exception):
    pass


class _OwnErrors(Schema):
    missing_error = _LookupFailed
    malformed_error = _Malformed


def test_a_subclass_chooses_the_errors_raised() -> None:
    s = _OwnErrors(p4info())
    with pytest.raises(_LookupFailed, match="no register named 'nope'"):
        s.registers["nope"]
    dup = p4info()
    dup.actions[1].preamble.id = A_FWD
    with pytest.raises(_Malformed, match="duplicate id"):
        _OwnErrors(dup)


def test_load_reads_text_json_and_binary(tmp_path: Path) -> None:
    info = p4info()
    text = tmp_path / "p.txtpb"
    text.write_text(text_format.MessageToString(info))
    as_json = tmp_path / "p.json"
    as_json.write_text(json_format.MessageToJson(info))
    binary = tmp_path / "p.bin"
    binary.write_bytes(info.SerializeToString())
    for path in (text, as_json, binary):
        assert load_p4info(path) == info
    loaded = _OwnErrors.load(text)
    assert isinstance(loaded, _OwnErrors) and loaded.tables["acl"].id == T_ACL


def test_load_errors_name_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "none.txtpb"
    with pytest.raises(SchemaError, match=r"none.txtpb: cannot read P4Info: No such file"):
        load_p4info(missing)
    bad_text = tmp_path / "bad.txtpb"
    bad_text.write_text("tables { nonsense")
    bad_json = tmp_path / "bad.json"
    bad_json.write_text('{"tables": 3}')
    bad_binary = tmp_path / "bad.bin"
    bad_binary.write_bytes(b"\xff\xff\xff")
    for bad in (bad_text, bad_json, bad_binary):
        expected = f"^{re.escape(str(bad))}: not a P4Info file: [^\n]+$"
        with pytest.raises(SchemaError, match=expected):
            load_p4info(bad)
