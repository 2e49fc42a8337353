"""Tutorial-kind programs: each compiles, its outputs are consistent, and what it
means (headers, parser, tables, actions, externs, P4Info) is checked semantically."""

from __future__ import annotations

from typing import Any

import pytest
from finsy.proto.p4.config.v1 import p4info_pb2
from support.bmv2_eval import Env, Installed, evaluate, run_action, run_parse_state, run_pipeline
from support.builder import Builder
from support.integrity import check_bmv2_json, check_p4info
from support.program import Compiled, hexval
from support.runner import P4INFO_SUFFIXES, PROGRAMS_DIR, load_p4info

ALL_PROGRAMS = sorted(
    str(p.relative_to(PROGRAMS_DIR))
    for sub in ("tutorials", "constructs")
    for p in (PROGRAMS_DIR / sub).glob("*.p4")
)

MT = p4info_pb2.MatchField


def env_for(c: Compiled, valid: tuple[str, ...] = (), **values: int) -> Env:
    """An Env with the named headers valid and fields set ("ipv4__ttl" = ipv4.ttl;
    "meta__x" = the metadata field named x)."""
    env = Env(c.json)
    for h in valid:
        env.valid[h] = True
    for key, value in values.items():
        header, fname = key.split("__", 1)
        if header == "meta":
            env.set(*env.scalar_named(fname), value)
        else:
            env.set(header.replace("_DOT_", "."), fname, value)
    return env


def meta(env: Env, name: str) -> int:
    return env.get(*env.scalar_named(name))


def field_widths(c: Compiled, type_name: str) -> list[tuple[str, Any]]:
    return [(f[0], f[1]) for f in c.header_type(type_name)["fields"]]


def default_action_name(c: Compiled, table: dict[str, Any]) -> str:
    return str(c.action_by_id(table["default_entry"]["action_id"])["name"])


def key_targets(table: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(k["match_type"], k["target"]) for k in table["key"]]


def primitives_named(c: Compiled, op: str) -> list[dict[str, Any]]:
    return [p for p in c.all_primitives() if p["op"] == op]


def calculation(c: Compiled, name: str) -> dict[str, Any]:
    return c.named("calculations", name)


IPV4_FIELDS = [
    ("version", 4), ("ihl", 4), ("diffserv", 8), ("totalLen", 16), ("identification", 16),
    ("flags", 3), ("fragOffset", 13), ("ttl", 8), ("protocol", 8), ("hdrChecksum", 16),
    ("srcAddr", 32), ("dstAddr", 32),
]  # fmt: skip


# ---- every program -----------------------------------------------------------------------


@pytest.mark.parametrize("program", ALL_PROGRAMS)
def test_compiles_and_writes_all_outputs(build: Builder, program: str) -> None:
    result = build.result(program)
    assert result.returncode == 0, result.describe()
    assert "error" not in result.stderr.lower(), result.stderr
    assert result.json_path.is_file()
    for suffix in P4INFO_SUFFIXES:
        assert result.p4info_path(suffix).is_file(), suffix


@pytest.mark.parametrize("program", ALL_PROGRAMS)
def test_bmv2_json_is_consistent(build: Builder, program: str) -> None:
    assert check_bmv2_json(build(program).json) == []


@pytest.mark.parametrize("program", ALL_PROGRAMS)
def test_p4info_is_consistent(build: Builder, program: str) -> None:
    assert check_p4info(build(program).p4info) == []


@pytest.mark.parametrize("program", ALL_PROGRAMS)
def test_p4info_formats_decode_to_the_same_message(build: Builder, program: str) -> None:
    c = build(program)
    text, js, binary = (load_p4info(c.result.p4info_path(s)) for s in P4INFO_SUFFIXES)
    assert text == js
    assert text == binary


# ---- basic ---------------------------------------------------------------------------------


def test_basic_headers(build: Builder) -> None:
    c = build("tutorials/basic.p4")
    assert field_widths(c, "ethernet_t") == [("dstAddr", 48), ("srcAddr", 48), ("etherType", 16)]
    assert field_widths(c, "ipv4_t") == IPV4_FIELDS
    assert c.header("ethernet")["header_type"] == "ethernet_t"
    assert c.header("ipv4")["header_type"] == "ipv4_t"
    assert c.header("ethernet")["metadata"] is False
    assert c.header("standard_metadata")["metadata"] is True
    assert c.json["deparsers"][0]["order"] == ["ethernet", "ipv4"]


STANDARD_METADATA = {
    "ingress_port": 9, "egress_spec": 9, "egress_port": 9, "instance_type": 32,
    "packet_length": 32, "enq_timestamp": 32, "enq_qdepth": 19, "deq_timedelta": 32,
    "deq_qdepth": 19, "ingress_global_timestamp": 48, "egress_global_timestamp": 48,
    "mcast_grp": 16, "egress_rid": 16, "checksum_error": 1, "parser_error": 32, "priority": 3,
}  # fmt: skip


def test_standard_metadata_layout(build: Builder) -> None:
    """The fields simple_switch reads and writes, with v1model's widths (error: 32 bits)."""
    c = build("tutorials/basic.p4")
    fields = c.fields_of("standard_metadata")
    assert {
        name: fields[name][0] for name in STANDARD_METADATA if name in fields
    } == STANDARD_METADATA
    assert sum(w for w, _ in fields.values()) % 8 == 0  # padded to whole bytes


def test_basic_parser(build: Builder) -> None:
    c = build("tutorials/basic.p4")
    p = c.parser()
    assert p["init_state"] == "start"
    assert run_parse_state(c.parse_state("start"), env_for(c)) == "parse_ethernet"
    state = c.parse_state("parse_ethernet")
    assert state["parser_ops"][0]["op"] == "extract"
    assert state["parser_ops"][0]["parameters"][0] == {"type": "regular", "value": "ethernet"}
    assert state["transition_key"] == [{"type": "field", "value": ["ethernet", "etherType"]}]
    assert run_parse_state(state, env_for(c, ethernet__etherType=0x0800)) == "parse_ipv4"
    assert run_parse_state(state, env_for(c, ethernet__etherType=0x86DD)) is None
    assert [s["name"] for s in c.states_extracting("ipv4")] == ["parse_ipv4"]


def test_basic_ipv4_lpm_table(build: Builder) -> None:
    c = build("tutorials/basic.p4")
    t = c.table("MyIngress.ipv4_lpm")
    assert t["match_type"] == "lpm"
    assert key_targets(t) == [("lpm", ["ipv4", "dstAddr"])]
    assert t["max_size"] == 1024
    assert sorted(c.table_action_names(t)) == [
        "MyIngress.drop",
        "MyIngress.ipv4_forward",
        "NoAction",
    ]
    assert default_action_name(c, t) == "MyIngress.drop"
    assert t["default_entry"]["action_const"] is False


def test_basic_ipv4_forward_action(build: Builder) -> None:
    c = build("tutorials/basic.p4")
    a = c.action("MyIngress.ipv4_forward")
    assert [(r["name"], r["bitwidth"]) for r in a["runtime_data"]] == [("dstAddr", 48), ("port", 9)]
    env = env_for(c, ("ethernet", "ipv4"), ethernet__dstAddr=0xAAAAAAAAAAAA, ipv4__ttl=64)
    run_action(a, env, [0x0A0B0C0D0E0F, 3])
    assert env.get("standard_metadata", "egress_spec") == 3
    assert env.get("ethernet", "srcAddr") == 0xAAAAAAAAAAAA
    assert env.get("ethernet", "dstAddr") == 0x0A0B0C0D0E0F
    assert env.get("ipv4", "ttl") == 63
    env = env_for(c, ("ipv4",), ipv4__ttl=0)
    run_action(a, env, [1, 1])
    assert env.get("ipv4", "ttl") == 255  # bit<8> arithmetic wraps


def test_basic_drop_action(build: Builder) -> None:
    c = build("tutorials/basic.p4")
    prims = c.action("MyIngress.drop")["primitives"]
    assert [p["op"] for p in prims] == ["mark_to_drop"]
    assert prims[0]["parameters"] == [{"type": "header", "value": "standard_metadata"}]


def test_basic_ingress_control_flow(build: Builder) -> None:
    c = build("tutorials/basic.p4")
    env = env_for(c, ("ethernet", "ipv4"), ipv4__ttl=9)
    installed = {"MyIngress.ipv4_lpm": Installed("MyIngress.ipv4_forward", [0x1, 4])}
    run_pipeline(env, "ingress", installed)
    assert "MyIngress.ipv4_lpm" in env.trace
    assert env.get("standard_metadata", "egress_spec") == 4
    assert env.get("ipv4", "ttl") == 8
    env = env_for(c, ("ethernet",))
    run_pipeline(env, "ingress", installed)
    assert "MyIngress.ipv4_lpm" not in env.trace


def test_basic_checksums(build: Builder) -> None:
    c = build("tutorials/basic.p4")
    sums = c.json["checksums"]
    assert len(sums) == 2
    verify = [s for s in sums if s.get("verify", True) and not s.get("update", True)]
    update = [s for s in sums if s.get("update", True) and not s.get("verify", True)]
    assert len(verify) == 1 and len(update) == 1
    for s in sums:
        assert s["target"] == ["ipv4", "hdrChecksum"]
        assert s["type"] == "generic"
        calc = calculation(c, s["calculation"])
        assert calc["algo"] == "csum16"
        expected = [f for f, _ in IPV4_FIELDS if f != "hdrChecksum"]
        assert [i["value"] for i in calc["input"]] == [["ipv4", f] for f in expected]
        assert evaluate(s["if_cond"], env_for(c, ("ipv4",))) is True
        assert evaluate(s["if_cond"], env_for(c)) is False


def test_basic_p4info(build: Builder) -> None:
    c = build("tutorials/basic.p4")
    t = c.p4_table("MyIngress.ipv4_lpm")
    assert t.preamble.alias == "ipv4_lpm"
    assert [(m.id, m.name, m.bitwidth, m.match_type) for m in t.match_fields] == [
        (1, "hdr.ipv4.dstAddr", 32, MT.LPM)
    ]
    assert t.size == 1024
    assert sorted(c.p4_table_action_names(t)) == [
        "MyIngress.drop",
        "MyIngress.ipv4_forward",
        "NoAction",
    ]
    fwd = c.p4_action("MyIngress.ipv4_forward")
    assert fwd.preamble.alias == "ipv4_forward"
    assert [(p.id, p.name, p.bitwidth) for p in fwd.params] == [(1, "dstAddr", 48), (2, "port", 9)]
    assert t.const_default_action_id == 0
    assert not t.is_const_table
    assert len(c.p4info.tables) == 1  # direct action calls and helper tables stay hidden


def test_basic_p4info_ids_are_those_p4c_assigns(build: Builder) -> None:
    """The ids p4c gives the basic tutorial (its published P4Info), so controllers with
    hard-coded ids keep working."""
    c = build("tutorials/basic.p4")
    assert c.p4_table("MyIngress.ipv4_lpm").preamble.id == 37375156
    assert c.p4_action("MyIngress.ipv4_forward").preamble.id == 28792405
    assert c.p4_action("MyIngress.drop").preamble.id == 25652968
    assert c.p4_action("NoAction").preamble.id == 21257015


# ---- basic_tunnel ---------------------------------------------------------------------------


def test_tunnel_parser_and_table(build: Builder) -> None:
    c = build("tutorials/basic_tunnel.p4")
    assert field_widths(c, "myTunnel_t") == [("proto_id", 16), ("dst_id", 16)]
    start = c.parse_state("start")
    assert run_parse_state(start, env_for(c, ethernet__etherType=0x1212)) == "parse_myTunnel"
    assert run_parse_state(start, env_for(c, ethernet__etherType=0x0800)) == "parse_ipv4"
    tun = c.parse_state("parse_myTunnel")
    assert run_parse_state(tun, env_for(c, myTunnel__proto_id=0x0800)) == "parse_ipv4"
    assert run_parse_state(tun, env_for(c, myTunnel__proto_id=0x0806)) is None
    t = c.table("MyIngress.myTunnel_exact")
    assert t["match_type"] == "exact"
    assert key_targets(t) == [("exact", ["myTunnel", "dst_id"])]
    pt = c.p4_table("MyIngress.myTunnel_exact")
    assert [(m.name, m.bitwidth, m.match_type) for m in pt.match_fields] == [
        ("hdr.myTunnel.dst_id", 16, MT.EXACT)
    ]
    assert [(p.name, p.bitwidth) for p in c.p4_action("MyIngress.myTunnel_forward").params] == [
        ("port", 9)
    ]
    assert c.json["deparsers"][0]["order"] == ["ethernet", "myTunnel", "ipv4"]


def test_tunnel_ingress_picks_one_table(build: Builder) -> None:
    c = build("tutorials/basic_tunnel.p4")
    env = env_for(c, ("ethernet", "myTunnel", "ipv4"))
    run_pipeline(
        env, "ingress", {"MyIngress.myTunnel_exact": Installed("MyIngress.myTunnel_forward", [5])}
    )
    assert "MyIngress.myTunnel_exact" in env.trace
    assert "MyIngress.ipv4_lpm" not in env.trace
    assert env.get("standard_metadata", "egress_spec") == 5
    env = env_for(c, ("ethernet", "ipv4"))
    run_pipeline(env, "ingress")
    assert "MyIngress.ipv4_lpm" in env.trace
    assert "MyIngress.myTunnel_exact" not in env.trace


# ---- calc ----------------------------------------------------------------------------------


def _calc_env(c: Compiled, op: int, a: int, b: int) -> Env:
    return env_for(
        c,
        ("ethernet", "p4calc"),
        ethernet__dstAddr=0x111111111111,
        ethernet__srcAddr=0x222222222222,
        p4calc__op=op,
        p4calc__operand_a=a,
        p4calc__operand_b=b,
        standard_metadata__ingress_port=7,
    )


def test_calc_parser_uses_lookahead(build: Builder) -> None:
    c = build("tutorials/calc.p4")
    state = c.parse_state("check_p4calc")

    def next_state(first_bytes: bytes) -> Any:
        env = env_for(c)
        env.lookahead = int.from_bytes(first_bytes.ljust(16, b"\0"), "big")
        env.lookahead_bits = 128
        return run_parse_state(state, env)

    assert next_state(b"P4\x01+") == "parse_p4calc"
    assert next_state(b"P4\x02+") is None
    assert next_state(b"Q4\x01+") is None
    assert c.states_extracting("p4calc")[0]["name"] == "parse_p4calc"


def test_calc_const_entries_and_default(build: Builder) -> None:
    c = build("tutorials/calc.p4")
    t = c.table("MyIngress.calculate")
    assert len(t["entries"]) == 5
    assert t["default_entry"]["action_const"] is True
    assert default_action_name(c, t) == "MyIngress.operation_drop"
    keys = {
        hexval(e["match_key"][0]["key"]): c.action_by_id(e["action_entry"]["action_id"])["name"]
        for e in t["entries"]
    }
    assert keys == {
        0x2B: "MyIngress.operation_add",
        0x2D: "MyIngress.operation_sub",
        0x26: "MyIngress.operation_and",
        0x7C: "MyIngress.operation_or",
        0x5E: "MyIngress.operation_xor",
    }
    pt = c.p4_table("MyIngress.calculate")
    assert pt.is_const_table
    assert pt.const_default_action_id == c.p4_action("MyIngress.operation_drop").preamble.id


@pytest.mark.parametrize(
    ("op", "a", "b", "expected"),
    [
        (0x2B, 5, 7, 12),
        (0x2D, 5, 7, (5 - 7) & 0xFFFFFFFF),
        (0x26, 0xF0F0, 0xFF00, 0xF000),
        (0x7C, 0xF0F0, 0x0F00, 0xFFF0),
        (0x5E, 0xFF, 0x0F, 0xF0),
        (0x2B, 0xFFFFFFFF, 2, 1),
    ],
)
def test_calc_computes_and_sends_back(
    build: Builder, op: int, a: int, b: int, expected: int
) -> None:
    c = build("tutorials/calc.p4")
    env = _calc_env(c, op, a, b)
    run_pipeline(env, "ingress")
    assert env.get("p4calc", "res") == expected
    assert env.get("standard_metadata", "egress_spec") == 7
    assert env.get("ethernet", "dstAddr") == 0x222222222222
    assert env.get("ethernet", "srcAddr") == 0x111111111111


def test_calc_unknown_op_is_dropped(build: Builder) -> None:
    c = build("tutorials/calc.p4")
    env = _calc_env(c, ord("*"), 2, 3)
    run_pipeline(env, "ingress")
    assert "mark_to_drop" in env.calls
    env = env_for(c, ("ethernet",))
    run_pipeline(env, "ingress")
    assert "mark_to_drop" in env.calls


# ---- ecn -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ecn", "depth", "expected"),
    [(1, 10, 3), (2, 500, 3), (1, 9, 1), (0, 100, 0), (3, 100, 3), (2, 0, 2)],
)
def test_ecn_marks_in_egress(build: Builder, ecn: int, depth: int, expected: int) -> None:
    c = build("tutorials/ecn.p4")
    env = env_for(c, ("ethernet", "ipv4"), ipv4__ecn=ecn, standard_metadata__enq_qdepth=depth)
    run_pipeline(env, "egress")
    assert env.get("ipv4", "ecn") == expected


# v1model's @alias annotations: simple_switch fills these fields through the aliases.
V1MODEL_ALIASES = {
    "queueing_metadata.enq_timestamp": ["standard_metadata", "enq_timestamp"],
    "queueing_metadata.enq_qdepth": ["standard_metadata", "enq_qdepth"],
    "queueing_metadata.deq_timedelta": ["standard_metadata", "deq_timedelta"],
    "queueing_metadata.deq_qdepth": ["standard_metadata", "deq_qdepth"],
    "intrinsic_metadata.ingress_global_timestamp": [
        "standard_metadata",
        "ingress_global_timestamp",
    ],
    "intrinsic_metadata.egress_global_timestamp": ["standard_metadata", "egress_global_timestamp"],
    "intrinsic_metadata.mcast_grp": ["standard_metadata", "mcast_grp"],
    "intrinsic_metadata.egress_rid": ["standard_metadata", "egress_rid"],
    "intrinsic_metadata.priority": ["standard_metadata", "priority"],
}


@pytest.mark.parametrize("program", ["tutorials/ecn.p4", "tutorials/multicast.p4"])
def test_v1model_field_aliases(build: Builder, program: str) -> None:
    c = build(program)
    aliases = {alias: target for alias, target in c.json["field_aliases"]}
    assert aliases == V1MODEL_ALIASES


def test_ecn_header_split(build: Builder) -> None:
    c = build("tutorials/ecn.p4")
    widths = dict(field_widths(c, "ipv4_t"))
    assert widths["diffserv"] == 6
    assert widths["ecn"] == 2
    assert c.fields_of("standard_metadata")["enq_qdepth"][0] == 19
    calc = calculation(c, c.json["checksums"][0]["calculation"])
    assert ["ipv4", "ecn"] in [i["value"] for i in calc["input"]]


# ---- mri -----------------------------------------------------------------------------------


def test_mri_stack_and_parser_loop(build: Builder) -> None:
    c = build("tutorials/mri.p4")
    stack = c.named("header_stacks", "swtraces")
    assert stack["header_type"] == "switch_t"
    assert len(stack["header_ids"]) == 9
    assert field_widths(c, "switch_t") == [("swid", 32), ("qdepth", 32)]
    loops = c.states_extracting("swtraces")
    assert len(loops) == 1
    loop = loops[0]
    op = next(o for o in loop["parser_ops"] if o["op"] == "extract")
    assert op["parameters"][0] == {"type": "stack", "value": "swtraces"}
    env = env_for(c, meta__remaining=3)
    assert run_parse_state(loop, env) == loop["name"]
    assert meta(env, "remaining") == 2
    # the last record leaves the loop: the sub-parser returns to its caller, then accept
    env = env_for(c, meta__remaining=1)
    after = run_parse_state(loop, env)
    assert after != loop["name"]
    steps = 0
    while after is not None and steps < 5:
        assert after != loop["name"]
        after = run_parse_state(c.parse_state(after), env)
        steps += 1
    assert after is None


def test_mri_verify_and_error(build: Builder) -> None:
    c = build("tutorials/mri.p4")
    errors = dict(c.json["errors"])
    assert "IPHeaderTooShort" in errors
    assert errors["NoError"] == 0
    assert len(set(errors.values())) == len(errors)
    state = c.parse_state("parse_ipv4")
    verify = [o for o in state["parser_ops"] if o["op"] == "verify"]
    assert len(verify) == 1
    cond, err = verify[0]["parameters"]
    assert evaluate(err, env_for(c)) == errors["IPHeaderTooShort"]
    assert evaluate(cond, env_for(c, ipv4__ihl=4)) is False
    assert evaluate(cond, env_for(c, ipv4__ihl=5)) is True


def test_mri_egress_pushes_a_record(build: Builder) -> None:
    c = build("tutorials/mri.p4")
    a = c.action("MyEgress.add_swtrace")
    ops = c.primitive_ops(a)
    push = a["primitives"][ops.index("push")]
    assert push["parameters"][0] == {"type": "header_stack", "value": "swtraces"}
    assert hexval(push["parameters"][1]["value"]) == 1
    assert "add_header" in ops
    assert {"type": "header", "value": "swtraces[0]"} in [
        p["parameters"][0] for p in a["primitives"] if p["op"] == "add_header"
    ]
    pt = c.p4_table("MyEgress.swtrace")
    assert len(pt.match_fields) == 0
    assert [p.bitwidth for p in c.p4_action("MyEgress.add_swtrace").params] == [32]


# ---- source routing ------------------------------------------------------------------------


def test_source_routing(build: Builder) -> None:
    c = build("tutorials/source_routing.p4")
    stack = c.named("header_stacks", "srcRoutes")
    assert len(stack["header_ids"]) == 9
    assert field_widths(c, "srcRoute_t") == [("bos", 1), ("port", 15)]
    state = c.parse_state("parse_srcRouting")
    assert state["parser_ops"][0]["parameters"][0] == {"type": "stack", "value": "srcRoutes"}
    assert state["transition_key"] == [{"type": "stack_field", "value": ["srcRoutes", "bos"]}]
    targets = {t["next_state"] for t in state["transitions"]}
    assert targets == {"parse_ipv4", "parse_srcRouting"}
    nhop = c.action("MyIngress.srcRoute_nhop")
    pop = [p for p in nhop["primitives"] if p["op"] == "pop"]
    assert pop and pop[0]["parameters"][0] == {"type": "header_stack", "value": "srcRoutes"}
    assert hexval(pop[0]["parameters"][1]["value"]) == 1
    env = env_for(c, ("srcRoutes[0]",))
    env.set("srcRoutes[0]", "port", 0x7FFF)
    run_action(nhop, env)
    assert env.get("standard_metadata", "egress_spec") == 0x1FF  # (bit<9>) truncates
    assert c.json["deparsers"][0]["order"][:1] == ["ethernet"]
    assert [f"srcRoutes[{i}]" for i in range(9)] == c.json["deparsers"][0]["order"][1:10]


def test_source_routing_ingress(build: Builder) -> None:
    c = build("tutorials/source_routing.p4")
    env = env_for(c, ("ethernet", "srcRoutes[0]", "ipv4"), ipv4__ttl=5)
    env.set("srcRoutes[0]", "bos", 1)
    env.set("srcRoutes[0]", "port", 2)
    run_pipeline(env, "ingress")
    assert env.get("ethernet", "etherType") == 0x0800
    assert env.get("standard_metadata", "egress_spec") == 2
    assert env.get("ipv4", "ttl") == 4
    env = env_for(c, ("ethernet",))
    run_pipeline(env, "ingress")
    assert "mark_to_drop" in env.calls


# ---- qos -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("proto", "dscp"), [(17, 46), (6, 34), (1, 0)])
def test_qos_sets_dscp_by_protocol(build: Builder, proto: int, dscp: int) -> None:
    c = build("tutorials/qos.p4")
    env = env_for(c, ("ethernet", "ipv4"), ipv4__protocol=proto, ipv4__diffserv=63)
    run_pipeline(env, "ingress")
    assert env.get("ipv4", "diffserv") == dscp
    assert "MyIngress.ipv4_lpm" in env.trace


# ---- load balancing ------------------------------------------------------------------------


def test_load_balance_hash(build: Builder) -> None:
    c = build("tutorials/load_balance.p4")
    a = c.action("MyIngress.set_ecmp_select")
    assert [(r["name"], r["bitwidth"]) for r in a["runtime_data"]] == [
        ("ecmp_base", 16),
        ("ecmp_count", 32),
    ]
    hashes = [p for p in a["primitives"] if p["op"] == "modify_field_with_hash_based_offset"]
    assert len(hashes) == 1
    dest, base, calc_ref, size = hashes[0]["parameters"]
    assert dest["type"] == "field" and dest["value"][1].endswith("ecmp_select")
    assert base == {"type": "runtime_data", "value": 0}
    assert size == {"type": "runtime_data", "value": 1}
    assert calc_ref["type"] == "calculation"
    calc = calculation(c, calc_ref["value"])
    assert calc["algo"] == "crc16"
    assert [i["value"] for i in calc["input"]] == [
        ["ipv4", "srcAddr"], ["ipv4", "dstAddr"], ["ipv4", "protocol"],
        ["tcp", "srcPort"], ["tcp", "dstPort"],
    ]  # fmt: skip


def test_load_balance_tables(build: Builder) -> None:
    c = build("tutorials/load_balance.p4")
    nhop = c.p4_table("MyIngress.ecmp_nhop")
    assert [(m.name, m.bitwidth, m.match_type) for m in nhop.match_fields] == [
        ("meta.ecmp_select", 14, MT.EXACT)
    ]
    assert nhop.size == 2
    assert c.table("MyIngress.ecmp_nhop")["max_size"] == 2
    frame = c.p4_table("MyEgress.send_frame")
    assert [(m.name, m.bitwidth) for m in frame.match_fields] == [
        ("standard_metadata.egress_port", 9)
    ]
    assert key_targets(c.table("MyEgress.send_frame")) == [
        ("exact", ["standard_metadata", "egress_port"])
    ]
    assert [(p.name, p.bitwidth) for p in c.p4_action("MyIngress.set_nhop").params] == [
        ("nhop_dmac", 48), ("nhop_ipv4", 32), ("port", 9),
    ]  # fmt: skip
    # ecmp_group has no default_action: NoAction is the implicit default
    g = c.table("MyIngress.ecmp_group")
    assert default_action_name(c, g) == "NoAction"
    pg = c.p4_table("MyIngress.ecmp_group")
    refs = {c.p4_action_by_id(r.id).preamble.name: r for r in pg.action_refs}
    assert refs["NoAction"].scope == p4info_pb2.ActionRef.DEFAULT_ONLY


def test_load_balance_control_flow(build: Builder) -> None:
    c = build("tutorials/load_balance.p4")
    env = env_for(c, ("ethernet", "ipv4", "tcp"), ipv4__ttl=0)
    run_pipeline(env, "ingress")
    assert "MyIngress.ecmp_group" not in env.trace
    env = env_for(c, ("ethernet", "ipv4", "tcp"), ipv4__ttl=3)
    run_pipeline(
        env, "ingress", {"MyIngress.ecmp_nhop": Installed("MyIngress.set_nhop", [0xA, 0xB, 2])}
    )
    assert env.trace.index("MyIngress.ecmp_group") < env.trace.index("MyIngress.ecmp_nhop")
    assert env.get("ipv4", "ttl") == 2
    assert env.get("ipv4", "dstAddr") == 0xB


# ---- firewall ------------------------------------------------------------------------------


def test_firewall_registers_and_hashes(build: Builder) -> None:
    c = build("tutorials/firewall.p4")
    for name in ("MyIngress.bloom_filter_1", "MyIngress.bloom_filter_2"):
        reg = c.named("register_arrays", name)
        assert reg["size"] == 4096
        assert reg["bitwidth"] == 1
        p4 = c.p4_entity("registers", name)
        assert p4.size == 4096
        assert p4.type_spec.bitstring.bit.bitwidth == 1
        assert p4.preamble.id >> 24 == 0x16
    # compute_hashes is called with arguments from the apply block, so the compiler may
    # inline it into synthesized actions: look at every hash primitive of the program
    calcs = [
        calculation(c, p["parameters"][2]["value"])
        for p in primitives_named(c, "modify_field_with_hash_based_offset")
    ]
    assert sorted({k["algo"] for k in calcs}) == ["crc16", "crc32"]
    for k in calcs:
        assert len(k["input"]) == 5
    regops = primitives_named(c, "register_write") + primitives_named(c, "register_read")
    assert {p["parameters"][0 if p["op"] == "register_write" else 1]["value"] for p in regops} == {
        "MyIngress.bloom_filter_1",
        "MyIngress.bloom_filter_2",
    }


def test_firewall_direction_table(build: Builder) -> None:
    c = build("tutorials/firewall.p4")
    pt = c.p4_table("MyIngress.check_ports")
    assert [(m.name, m.bitwidth, m.match_type) for m in pt.match_fields] == [
        ("standard_metadata.ingress_port", 9, MT.EXACT),
        ("standard_metadata.egress_spec", 9, MT.EXACT),
    ]
    t = c.table("MyIngress.check_ports")
    assert set(t["next_tables"]) == {"__HIT__", "__MISS__"}


def test_firewall_behaviour(build: Builder) -> None:
    c = build("tutorials/firewall.p4")
    syn_out = env_for(c, ("ethernet", "ipv4", "tcp"), tcp__syn=1)
    run_pipeline(
        syn_out, "ingress", {"MyIngress.check_ports": Installed("MyIngress.set_direction", [0])}
    )
    assert syn_out.calls.count("register_write") == 2
    assert "register_read" not in syn_out.calls
    inbound = env_for(c, ("ethernet", "ipv4", "tcp"))
    run_pipeline(
        inbound, "ingress", {"MyIngress.check_ports": Installed("MyIngress.set_direction", [1])}
    )
    assert inbound.calls.count("register_read") == 2
    unknown = env_for(c, ("ethernet", "ipv4", "tcp"), tcp__syn=1)
    run_pipeline(unknown, "ingress")
    assert "register_write" not in unknown.calls
    assert "modify_field_with_hash_based_offset" not in unknown.calls


# ---- link monitoring -----------------------------------------------------------------------


def test_link_monitor_registers_and_stacks(build: Builder) -> None:
    c = build("tutorials/link_monitor.p4")
    byte_cnt = c.named("register_arrays", "MyEgress.byte_cnt_reg")
    last_time = c.named("register_arrays", "MyEgress.last_time_reg")
    assert (byte_cnt["size"], byte_cnt["bitwidth"]) == (8, 32)
    assert (last_time["size"], last_time["bitwidth"]) == (8, 48)
    assert c.p4_entity("registers", "MyEgress.last_time_reg").type_spec.bitstring.bit.bitwidth == 48
    for name in ("probe_data", "probe_fwd"):
        assert len(c.named("header_stacks", name)["header_ids"]) == 10
    assert field_widths(c, "probe_data_t") == [
        ("bos", 1), ("swid", 7), ("port", 8), ("byte_cnt", 32), ("last_time", 48), ("cur_time", 48),
    ]  # fmt: skip
    refs = str(c.pipeline("egress")) + str(c.json["actions"])
    assert "egress_global_timestamp" in refs
    assert "push" in [p["op"] for p in c.all_primitives()]


def test_link_monitor_parser(build: Builder) -> None:
    c = build("tutorials/link_monitor.p4")
    start = c.parse_state("start")
    assert run_parse_state(start, env_for(c, ethernet__etherType=0x812)) == "parse_probe"
    probe = c.parse_state("parse_probe")
    assert run_parse_state(probe, env_for(c, probe__hop_cnt=0)) == "parse_probe_fwd"
    env = env_for(c, probe__hop_cnt=2)
    assert run_parse_state(probe, env) == "parse_probe_data"
    assert meta(env, "remaining") == 3
    last = c.parse_state("use_probe_fwd")
    assert any(op["op"] == "set" for op in last["parser_ops"])


# ---- multicast -----------------------------------------------------------------------------


def test_multicast(build: Builder) -> None:
    c = build("tutorials/multicast.p4")
    t = c.table("MyIngress.mac_lookup")
    assert default_action_name(c, t) == "MyIngress.multicast"
    assert [hexval(x) for x in t["default_entry"]["action_data"]] == [1]
    env = env_for(c, ("ethernet",))
    run_pipeline(env, "ingress")
    assert env.get("standard_metadata", "mcast_grp") == 1
    assert [(p.name, p.bitwidth) for p in c.p4_action("MyIngress.multicast").params] == [
        ("mgid", 16)
    ]
    pruned = env_for(c, ("ethernet",), standard_metadata__egress_port=3, meta__ingress_port=3)
    run_pipeline(pruned, "egress")
    assert "mark_to_drop" in pruned.calls
    replica = env_for(c, ("ethernet",), standard_metadata__egress_port=4, meta__ingress_port=3,
                      standard_metadata__egress_rid=2)  # fmt: skip
    run_pipeline(
        replica, "egress", {"MyEgress.replica_rewrite": Installed("MyEgress.set_smac", [0x5])}
    )
    assert "MyEgress.replica_rewrite" in replica.trace
    assert replica.get("ethernet", "srcAddr") == 5
    first = env_for(c, ("ethernet",), standard_metadata__egress_port=4, meta__ingress_port=3)
    run_pipeline(first, "egress")
    assert "MyEgress.replica_rewrite" not in first.trace
    assert "mark_to_drop" not in first.calls


# ---- P4Runtime packet I/O ------------------------------------------------------------------


def test_controller_packet_metadata(build: Builder) -> None:
    c = build("tutorials/p4runtime_cpu.p4")
    cpm = {m.preamble.name: m for m in c.p4info.controller_packet_metadata}
    assert set(cpm) == {"packet_in", "packet_out"}
    for name, first in (("packet_in", "ingress_port"), ("packet_out", "egress_port")):
        m = cpm[name]
        assert m.preamble.id >> 24 == 0x04
        assert f'@controller_header("{name}")' in list(m.preamble.annotations)
        assert [(f.id, f.name, f.bitwidth) for f in m.metadata] == [(1, first, 9), (2, "_pad", 7)]


def test_packet_out_is_forwarded_and_exits(build: Builder) -> None:
    c = build("tutorials/p4runtime_cpu.p4")
    env = env_for(c, ("packet_out", "ethernet"), packet_out__egress_port=3)
    run_pipeline(env, "ingress")
    assert env.get("standard_metadata", "egress_spec") == 3
    assert env.valid["packet_out"] is False
    assert env.exited
    assert "MyIngress.l2_exact" not in env.trace
    cpu = env_for(
        c, ("ethernet",), standard_metadata__egress_port=255, standard_metadata__ingress_port=4
    )
    run_pipeline(cpu, "egress")
    assert cpu.valid.get("packet_in") is True
    assert cpu.get("packet_in", "ingress_port") == 4
    assert "exit" in [p["op"] for p in c.all_primitives()]


# ---- digests -------------------------------------------------------------------------------


def test_digest_learn_list_and_primitive(build: Builder) -> None:
    c = build("tutorials/digest_learn.p4")
    learn = [p for p in c.action("MyIngress.learn")["primitives"] if p["op"] == "generate_digest"]
    assert len(learn) == 1
    receiver, list_id = learn[0]["parameters"]
    assert hexval(receiver["value"]) == 1
    lists = {ll["id"]: ll for ll in c.json["learn_lists"]}
    ll = lists[hexval(list_id["value"])]
    values = [e["value"] for e in ll["elements"]]
    assert values[0] == ["ethernet", "srcAddr"]
    assert values[1] == ["standard_metadata", "ingress_port"]
    assert values[2][1].endswith("kind")


def test_digest_p4info_with_serializable_enum(build: Builder) -> None:
    c = build("tutorials/digest_learn.p4")
    (d,) = c.p4info.digests
    assert d.preamble.name == "mac_learn_digest_t"
    assert d.preamble.id >> 24 == 0x17
    assert d.type_spec.struct.name == "mac_learn_digest_t"
    st = c.p4info.type_info.structs["mac_learn_digest_t"]
    members = {m.name: m.type_spec for m in st.members}
    assert list(members) == ["srcAddr", "ingress_port", "kind"]
    assert members["srcAddr"].bitstring.bit.bitwidth == 48
    assert members["ingress_port"].bitstring.bit.bitwidth == 9
    assert members["kind"].serializable_enum.name == "FrameKind"
    enum = c.p4info.type_info.serializable_enums["FrameKind"]
    assert enum.underlying_type.bitwidth == 8
    assert [(m.name, int.from_bytes(m.value, "big")) for m in enum.members] == [
        ("UNICAST", 1), ("MULTICAST", 2), ("BROADCAST", 3),
    ]  # fmt: skip


# ---- clone / resubmit / recirculate --------------------------------------------------------


def _field_list_fields(c: Compiled, list_id: int) -> set[str]:
    fl = next(f for f in c.json["field_lists"] if f["id"] == list_id)
    return {e["value"][1].rsplit(".", 1)[-1] for e in fl["elements"]}


def test_field_lists(build: Builder) -> None:
    c = build("tutorials/clone_recirc.p4")
    resub = primitives_named(c, "resubmit")
    assert len(resub) == 1
    assert _field_list_fields(c, hexval(resub[0]["parameters"][0]["value"])) == {"resubmit_count"}
    recirc = primitives_named(c, "recirculate")
    assert len(recirc) == 1
    assert _field_list_fields(c, hexval(recirc[0]["parameters"][0]["value"])) == {
        "recirculate_count",
        "mirror_reason",
    }
    clones = primitives_named(c, "clone_ingress_pkt_to_egress")
    assert len(clones) == 2
    sessions = sorted(hexval(p["parameters"][0]["value"]) for p in clones)
    assert sessions == [5, 5]
    with_list = [
        p
        for p in c.action("MyIngress.do_clone")["primitives"]
        if p["op"] == "clone_ingress_pkt_to_egress"
    ]
    assert _field_list_fields(c, hexval(with_list[0]["parameters"][1]["value"])) == {
        "mirror_reason"
    }
    e2e = primitives_named(c, "clone_egress_pkt_to_egress")
    assert len(e2e) == 1 and hexval(e2e[0]["parameters"][0]["value"]) == 6
    trunc = primitives_named(c, "truncate")
    assert len(trunc) == 1 and hexval(trunc[0]["parameters"][0]["value"]) == 14


# ---- direct counters and meters ------------------------------------------------------------


def test_direct_counter(build: Builder) -> None:
    c = build("tutorials/direct_resources.p4")
    ctr = c.named("counter_arrays", "MyIngress.acl_stats")
    assert ctr["is_direct"] is True
    assert ctr["binding"] == "MyIngress.acl"
    acl = c.table("MyIngress.acl")
    assert acl["with_counters"] is True
    assert acl["match_type"] == "ternary"
    assert acl["max_size"] == 512
    pacl = c.p4_table("MyIngress.acl")
    dc = c.p4_entity("direct_counters", "MyIngress.acl_stats")
    assert dc.preamble.id >> 24 == 0x13
    assert dc.spec.unit == p4info_pb2.CounterSpec.BOTH
    assert dc.direct_table_id == pacl.preamble.id
    assert list(pacl.direct_resource_ids) == [dc.preamble.id]
    assert [m.match_type for m in pacl.match_fields] == [MT.TERNARY, MT.EXACT]
    # calls to count() on a direct counter are implicit in BMv2
    assert "count" not in [p["op"] for p in c.action("MyIngress.allow")["primitives"]]


def test_direct_meter(build: Builder) -> None:
    c = build("tutorials/direct_resources.p4")
    m = c.named("meter_arrays", "MyIngress.policer")
    assert m["is_direct"] is True
    assert m["binding"] == "MyIngress.policing"
    assert m["type"] == "bytes"
    assert m["rate_count"] == 2
    assert m["result_target"][1].endswith("meter_color")
    t = c.table("MyIngress.policing")
    assert t["direct_meters"] == "MyIngress.policer"
    pt = c.p4_table("MyIngress.policing")
    dm = c.p4_entity("direct_meters", "MyIngress.policer")
    assert dm.preamble.id >> 24 == 0x15
    assert dm.spec.unit == p4info_pb2.MeterSpec.BYTES
    assert dm.direct_table_id == pt.preamble.id
    assert list(pt.direct_resource_ids) == [dm.preamble.id]
    assert pt.size == 256


# ---- value sets ----------------------------------------------------------------------------


def test_value_set(build: Builder) -> None:
    c = build("tutorials/value_set.p4")
    (vs,) = c.json["parse_vsets"]
    assert vs["name"] == "MyParser.tunnel_ethertypes"
    assert vs["compressed_bitwidth"] == 16
    start = c.parse_state("start")
    vset_transitions = [t for t in start["transitions"] if t.get("type") == "parse_vset"]
    assert len(vset_transitions) == 1
    assert vset_transitions[0]["value"] == "MyParser.tunnel_ethertypes"
    assert vset_transitions[0]["next_state"] == "parse_tunnel"
    members = {"MyParser.tunnel_ethertypes": {0x9999, 0x88B5}}
    assert run_parse_state(start, env_for(c, ethernet__etherType=0x88B5), members) == "parse_tunnel"
    assert run_parse_state(start, env_for(c, ethernet__etherType=0x0800), members) is None
    p4 = c.p4_entity("value_sets", "MyParser.tunnel_ethertypes")
    assert p4.preamble.id >> 24 == 0x03
    assert p4.size == 4
    assert [(m.bitwidth, m.match_type) for m in p4.match] == [(16, MT.EXACT)]


# ---- header unions -------------------------------------------------------------------------


def test_header_union(build: Builder) -> None:
    c = build("tutorials/header_union.p4")
    (ut,) = c.json["header_union_types"]
    assert ut["name"] == "ip_t"
    assert ut["headers"] == [["v4", "ipv4_t"], ["v6", "ipv6_t"]]
    (u,) = c.json["header_unions"]
    assert u["union_type"] == "ip_t"
    by_id = {h["id"]: h for h in c.json["headers"]}
    members = [by_id[i] for i in u["header_ids"]]
    assert [m["header_type"] for m in members] == ["ipv4_t", "ipv6_t"]
    v4, v6 = (m["name"] for m in members)
    assert [s["name"] for s in c.states_extracting(v4)] == ["parse_ipv4"]
    assert [s["name"] for s in c.states_extracting(v6)] == ["parse_ipv6"]
    assert field_widths(c, "ipv6_t")[-1] == ("dstAddr", 128)

    env = env_for(c, ("ethernet", v6), ethernet__dstAddr=9)
    env.set(v6, "hopLimit", 10)
    run_pipeline(env, "ingress")
    assert env.get(v6, "hopLimit") == 9
    assert env.get("standard_metadata", "egress_spec") == 2
    assert env.get("ethernet", "srcAddr") == 9
    env = env_for(c, ("ethernet", v4))
    env.set(v4, "ttl", 1)
    run_pipeline(env, "ingress")
    assert env.get(v4, "ttl") == 0
    assert env.get("standard_metadata", "egress_spec") == 1
    env = env_for(c, ("ethernet",), ethernet__dstAddr=9)
    run_pipeline(env, "ingress")
    assert "mark_to_drop" in env.calls
    assert env.get("ethernet", "srcAddr") == 0
