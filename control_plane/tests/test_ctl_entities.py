"""Entities built against the P4Info of router.p4 as ratelab-p4c compiles it."""

from __future__ import annotations

from pathlib import Path

import pytest
from ctl_support import Compiled
from finsy.proto.p4.v1 import p4runtime_pb2
from ratelab_ctl.configfile import load_config, parse_config
from ratelab_ctl.controller import CONFIG_TABLES, build_updates, check_program
from ratelab_ctl.counters import COUNTER_OBJECTS, GAUGE_REGISTERS, counter_ids, gauge_ids
from ratelab_ctl.diff import initial_changes
from ratelab_ctl.entities import (
    EncodeError,
    decode_uint,
    encode_uint,
    entry_from_pb,
    table_entry_pb,
)
from ratelab_model import red
from ratelab_model.p4_entries import TableEntry, all_entries
from ratelab_model.presets import PRESETS
from ratelab_p4info import MatchKind, ScalarType, Schema, SchemaError, load_p4info


def test_canonical_encoding() -> None:
    assert encode_uint(0, 9) == b"\x00"
    assert encode_uint(1, 9) == b"\x01"
    assert encode_uint(256, 9) == b"\x01\x00"
    assert encode_uint(511, 9) == b"\x01\xff"
    assert encode_uint(2**64 - 1, 64) == b"\xff" * 8
    with pytest.raises(EncodeError, match="does not fit 9 bits"):
        encode_uint(512, 9)
    with pytest.raises(EncodeError):
        encode_uint(-1, 8)
    assert decode_uint(b"\x00\x01\x00") == 256


def test_schema_lookups(compiled: Compiled) -> None:
    s = compiled.schema
    for name in CONFIG_TABLES:
        assert s.tables[name].name == name
    assert s.tables["ipv4_lpm"] == s.tables["RouterIngress.ipv4_lpm"]  # alias
    lpm = s.tables["RouterIngress.ipv4_lpm"]
    assert [(m.name, m.bitwidth, m.kind) for m in lpm.match_fields] == [
        ("hdr.ipv4.dst_addr", 32, MatchKind.LPM)
    ]
    port = s.actions["RouterIngress.set_port"]
    assert [(p.name, p.bitwidth) for p in port.params] == [
        ("mac", 48),
        ("rbcc_capacity", 32),
        ("queue_limit", 32),
        ("red_enabled", 1),
        ("wq16", 32),
        ("th_min16", 32),
        ("th_max16", 32),
        ("slope", 64),
        ("s_recip", 32),
        ("seed", 32),
    ]
    assert s.tables["RouterIngress.rbcc.recip"].size == 1024
    for obj, _ in COUNTER_OBJECTS.values():
        assert s.counters[obj].size == 64
    assert s.counters["RouterEgress.port_out"].unit == "BOTH"
    for reg in GAUGE_REGISTERS.values():
        assert s.registers[reg].value == ScalarType("bitstring", 32)
    assert len(counter_ids(s)) == 16 and len(gauge_ids(s)) == 2
    with pytest.raises(SchemaError, match="no table named 'nope'"):
        s.tables["nope"]


def test_p4info_formats(compiled: Compiled, tmp_path: Path) -> None:
    info = load_p4info(compiled.p4info)
    binary = tmp_path / "router.p4info.bin"
    binary.write_bytes(info.SerializeToString())
    assert load_p4info(binary) == info
    bad = tmp_path / "bad.txtpb"
    bad.write_text("tables { nonsense")
    with pytest.raises(SchemaError, match="not a P4Info file"):
        load_p4info(bad)


def test_every_example_entry_encodes_with_ids_and_widths(compiled: Compiled, example_path) -> None:
    s = compiled.schema
    cfg = load_config(example_path)
    entries = all_entries(cfg.router)
    for e in entries:
        pb = table_entry_pb(s, e)
        table = s.tables[e.table]
        action = s.actions[e.action]
        assert pb.table_id == table.id
        assert pb.action.action.action_id == action.id
        for p, param, value in zip(pb.action.action.params, action.params, e.params, strict=True):
            assert p.param_id == param.id
            assert decode_uint(p.value) == value
            assert p.value == encode_uint(value, param.bitwidth)  # canonical
        assert entry_from_pb(s, pb) == e  # and back


def test_specific_entries(compiled: Compiled, example_path) -> None:
    s = compiled.schema
    cfg = load_config(example_path)
    by_table: dict[str, list[TableEntry]] = {}
    for e in all_entries(cfg.router):
        by_table.setdefault(e.table, []).append(e)

    router = table_entry_pb(s, by_table["RouterIngress.router_config"][0])
    assert router.is_default_action and not router.match
    assert [decode_uint(p.value) for p in router.action.action.params] == [0x0A000001, 1500, 10**6]

    route = table_entry_pb(s, by_table["RouterIngress.ipv4_lpm"][2])  # 10.0.3.0/24 -> receiver
    assert route.match[0].field_id == 1
    assert route.match[0].lpm.value == bytes([10, 0, 3, 0])
    assert route.match[0].lpm.prefix_len == 24
    params = route.action.action.params
    assert params[0].value == b"\x03" and params[1].value == bytes.fromhex("020000000103")

    ports = {e.key[0]: e for e in by_table["RouterIngress.port_config"]}
    fifo = table_entry_pb(s, ports[1])
    assert fifo.match[0].exact.value == b"\x01"
    assert [decode_uint(p.value) for p in fifo.action.action.params] == [
        0x020000000001,
        118_750_000,
        64,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
    ]
    r = red.install(PRESETS["redok-hspa"].aqm(7), 10_000_000)
    assert ports[3].params == (
        0x020000000003,
        1_187_500,
        68,
        1,
        r.wq16,
        r.th_min16,
        r.th_max16,
        r.slope,
        r.s_recip,
        7,
    )

    decay = by_table["RouterIngress.admission.red_decay"]
    table = red.decay_table(PRESETS["redok-hspa"].w_q, 16384)
    assert len(decay) == sum(1 for v in table if v)  # only port 3 is RED, zero tail omitted
    first = table_entry_pb(s, decay[0])
    assert [m.exact.value for m in first.match] == [b"\x03", b"\x00"]
    assert decode_uint(first.action.action.params[0].value) == 65536

    recip = by_table["RouterIngress.rbcc.recip"]
    assert len(recip) == 1024
    one = table_entry_pb(s, recip[0])
    assert one.match[0].exact.value == b"\x01"
    assert one.action.action.params[0].value == (1 << 32).to_bytes(5, "big")


def test_default_route_omits_the_lpm_field(compiled: Compiled) -> None:
    entry = TableEntry("RouterIngress.ipv4_lpm", ((0, 0),), "RouterIngress.set_next_hop", (1, 2))
    pb = table_entry_pb(compiled.schema, entry)
    assert len(pb.match) == 0 and not pb.is_default_action
    assert entry_from_pb(compiled.schema, pb) == entry


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            TableEntry(
                "RouterIngress.ipv4_lpm", ((0x0A000000, 8),), "RouterIngress.set_next_hop", (512, 0)
            ),
            "RouterIngress.set_next_hop.port: value 512 does not fit 9 bits",
        ),
        (
            TableEntry(
                "RouterIngress.ipv4_lpm", ((0x0A000001, 8),), "RouterIngress.set_next_hop", (1, 0)
            ),
            "hdr.ipv4.dst_addr: prefix has bits set beyond its length",
        ),
        (
            TableEntry("RouterIngress.port_config", (1,), "RouterIngress.set_next_hop", (1, 0)),
            "action RouterIngress.set_next_hop is not one of its actions",
        ),
        (
            TableEntry("RouterIngress.rbcc.recip", (1,), "RouterIngress.rbcc.set_recip", (1, 2)),
            "2 parameters for RouterIngress.rbcc.set_recip, which takes 1",
        ),
        (
            TableEntry("RouterIngress.nope", (1,), "RouterIngress.drop", ()),
            "the P4Info has no table named 'RouterIngress.nope'",
        ),
    ],
)
def test_encode_errors(compiled: Compiled, entry: TableEntry, message: str) -> None:
    with pytest.raises(EncodeError) as info:
        table_entry_pb(compiled.schema, entry)
    assert message in str(info.value)


def test_config_must_fit_the_program(compiled: Compiled, example_path) -> None:
    text = example_path.read_text()
    check_program(load_config(example_path), compiled.schema)
    build_updates(compiled.schema, initial_changes(all_entries(load_config(example_path).router)))
    slots = parse_config(text.replace("abt_slots: 1024", "abt_slots: 512"), "x.yaml")
    with pytest.raises(Exception) as info:
        check_program(slots, compiled.schema)
    assert str(info.value) == (
        "x.yaml:18:14: error: rbcc.abt_slots: expected the compiled program's ABT_SLOTS (1024), "
        "got 512"
    )
    port = parse_config(
        text.replace("  3:\n", "  70:\n").replace("port: 3,", "port: 70,"), "x.yaml"
    )
    with pytest.raises(Exception) as info:
        check_program(port, compiled.schema)
    assert str(info.value) == (
        "x.yaml:31:3: error: ports.70: expected a port below the program's MAX_PORTS (64), got 70"
    )


def test_update_kinds(compiled: Compiled, example_path) -> None:
    cfg = load_config(example_path)
    groups = build_updates(compiled.schema, initial_changes(all_entries(cfg.router)))
    (modifies, mlabels), (inserts, ilabels) = groups
    assert [u.type for u in modifies] == [p4runtime_pb2.Update.MODIFY]
    assert mlabels == ["modify RouterIngress.router_config (default action)"]
    assert all(u.type == p4runtime_pb2.Update.INSERT for u in inserts)
    assert len(inserts) == len(all_entries(cfg.router)) - 1
    assert ilabels[0] == "insert RouterIngress.ipv4_lpm 10.0.1.0/24"


def test_schema_from_p4info_object(compiled: Compiled) -> None:
    s = Schema(load_p4info(compiled.p4info))
    assert s.tables["port_config"].size == 64
