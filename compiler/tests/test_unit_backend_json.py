"""BMv2 JSON emitted by the back end, checked per construct (structure and, through the
small BMv2 evaluator of the test support, behaviour)."""

from __future__ import annotations

from pathlib import Path

import pytest
from backend_helpers import compile_ingress, compile_text, program
from ratelab_p4c.backend.jsonutil import hexstr_digits
from ratelab_p4c.backend.parser import range_to_masks
from ratelab_p4c.errors import CompileError
from support.bmv2_eval import Env, Installed, evaluate, run_action, run_parse_state, run_pipeline


def _only_act(r) -> dict:  # type: ignore[no-untyped-def]
    acts = [a for a in r.json["actions"] if a["name"].startswith("act")]
    assert len(acts) == 1, [a["name"] for a in r.json["actions"]]
    return acts[0]


# ---------------------------------------------------------------- layout


def test_header_types_instances_and_scalars(tmp_path: Path) -> None:
    r = compile_ingress(tmp_path, "bit<5> local5;", "local5 = 1; meta.m = 2;")
    types = {t["name"]: t for t in r.json["header_types"]}
    assert r.json["header_types"][0]["name"] == "scalars_0"
    assert types["h_t"]["fields"][3] == ["s", 8, True]  # int<8> is signed
    sm = types["standard_metadata"]["fields"]
    names = [f[0] for f in sm]
    for f in (
        "ingress_port",
        "egress_spec",
        "enq_qdepth",
        "deq_timedelta",
        "parser_error",
        "priority",
        "mcast_grp",
        "egress_rid",
        "checksum_error",
    ):
        assert f in names
    assert sum(f[1] for f in sm) % 8 == 0  # padded like p4c
    scal = types["scalars_0"]["fields"]
    scal_names = [f[0] for f in scal]
    assert "local5" in scal_names and "userMetadata.m" in scal_names
    assert sum(f[1] for f in scal) % 8 == 0
    headers = {h["name"]: h for h in r.json["headers"]}
    assert headers["scalars"]["metadata"] and headers["standard_metadata"]["metadata"]
    assert headers["h"]["header_type"] == "h_t" and not headers["h"]["metadata"]
    assert [h["id"] for h in r.json["headers"]] == list(range(len(r.json["headers"])))
    assert r.json["__meta__"]["version"] == [2, 23]
    assert ["NoError", 0] in r.json["errors"]


def test_field_aliases_for_v1model(tmp_path: Path) -> None:
    r = compile_ingress(tmp_path)
    aliases = dict((a, tuple(b)) for a, b in r.json["field_aliases"])
    assert aliases["queueing_metadata.enq_qdepth"] == ("standard_metadata", "enq_qdepth")
    assert aliases["intrinsic_metadata.mcast_grp"] == ("standard_metadata", "mcast_grp")


# ---------------------------------------------------------------- expressions


@pytest.mark.parametrize(
    ("stmt", "inputs", "field", "expected"),
    [
        ("hdr.h.a = hdr.h.a + 1;", {"a": 255}, "a", 0),
        ("hdr.h.a = hdr.h.a - 1;", {"a": 0}, "a", 255),
        ("hdr.h.a = hdr.h.a * hdr.h.b;", {"a": 16, "b": 17}, "a", 16),
        ("hdr.h.a = hdr.h.a << 4;", {"a": 0x1F}, "a", 0xF0),
        ("hdr.h.a = hdr.h.a >> 3;", {"a": 0x80}, "a", 0x10),
        ("hdr.h.a = ~hdr.h.a;", {"a": 0x0F}, "a", 0xF0),
        ("hdr.h.a = -hdr.h.a;", {"a": 1}, "a", 255),
        ("hdr.h.a = hdr.h.a |+| hdr.h.b;", {"a": 200, "b": 100}, "a", 255),
        ("hdr.h.a = hdr.h.a |-| hdr.h.b;", {"a": 10, "b": 100}, "a", 0),
        ("hdr.h.s = hdr.h.s |+| 100;", {"s": 100}, "s", 127),
        ("hdr.h.s = hdr.h.s + 100;", {"s": 100}, "s", -56),
        ("hdr.h.c = hdr.h.a ++ hdr.h.b;", {"a": 0x12, "b": 0x34}, "c", 0x1234),
        ("hdr.h.a = hdr.h.c[11:4];", {"c": 0xABCD}, "a", 0xBC),
        ("hdr.h.c[7:4] = 0xF;", {"c": 0x1234}, "c", 0x12F4),
        ("hdr.h.a = (bit<8>)hdr.h.c;", {"c": 0x1234}, "a", 0x34),
        ("hdr.h.w = (bit<32>)(int<32>)hdr.h.s;", {"s": -1}, "w", 0xFFFFFFFF),
        ("hdr.h.s = (int<8>)hdr.h.a;", {"a": 0xFF}, "s", -1),
        ("hdr.h.a = hdr.h.a > hdr.h.b ? hdr.h.a : hdr.h.b;", {"a": 3, "b": 9}, "a", 9),
        ("hdr.h.a = (bit<8>)(bit<1>)(hdr.h.a == 3);", {"a": 3}, "a", 1),
        ("hdr.h.a = hdr.h.w[31:24] & 0xf0 | 1;", {"w": 0xAB000000}, "a", 0xA1),
    ],
)
def test_expression_semantics(
    tmp_path: Path, stmt: str, inputs: dict[str, int], field: str, expected: int
) -> None:
    r = compile_ingress(tmp_path, "", stmt)
    env = Env(r.json)
    env.valid["h"] = True
    for k, v in inputs.items():
        env.set("h", k, v)
    run_pipeline(env, "ingress")
    assert env.get("h", field) == expected


def test_arithmetic_is_masked_like_p4c(tmp_path: Path) -> None:
    r = compile_ingress(tmp_path, "", "hdr.h.a = hdr.h.a + 1;")
    (prim,) = _only_act(r)["primitives"]
    value = prim["parameters"][1]
    assert value["type"] == "expression"  # an operator node is wrapped once more
    inner = value["value"]["value"]
    assert inner["op"] == "&" and inner["right"] == {"type": "hexstr", "value": "0xff"}


def test_signed_arithmetic_uses_two_comp_mod(tmp_path: Path) -> None:
    r = compile_ingress(tmp_path, "", "hdr.h.s = hdr.h.s + 1;")
    (prim,) = _only_act(r)["primitives"]
    assert prim["parameters"][1]["value"]["value"]["op"] == "two_comp_mod"


def test_bool_metadata_uses_b2d_and_d2b(tmp_path: Path) -> None:
    r = compile_ingress(tmp_path, "", "meta.flag = hdr.h.a == 1;\n if (meta.flag) { hdr.h.b = 7; }")
    env = Env(r.json)
    env.valid["h"] = True
    env.set("h", "a", 1)
    run_pipeline(env, "ingress")
    assert env.get("h", "b") == 7
    cond = r.pipeline()["conditionals"][0]["expression"]
    assert cond["value"]["op"] == "d2b"


def test_hexstr_formatting() -> None:
    assert hexstr_digits(1, 9) == "0x0001"
    assert hexstr_digits(0x800, 16) == "0x0800"
    assert hexstr_digits(-1, 8) == "-0x01"


# ---------------------------------------------------------------- control flow


def test_if_else_becomes_conditional_and_synthesized_tables(tmp_path: Path) -> None:
    r = compile_ingress(
        tmp_path, "", "if (hdr.h.a == 1) { hdr.h.b = 1; } else { hdr.h.b = 2; }\n hdr.h.c = 3;"
    )
    pipe = r.pipeline()
    (cond,) = pipe["conditionals"]
    assert pipe["init_table"] == cond["name"]
    then_t = r.node(cond["true_next"])
    else_t = r.node(cond["false_next"])
    assert then_t["name"].startswith("tbl_") and else_t["name"].startswith("tbl_")
    assert then_t["default_entry"]["action_const"] is True
    assert then_t["key"] == [] and then_t["base_default_next"] == else_t["base_default_next"]
    for b, expect in ((1, 1), (0, 2)):
        env = Env(r.json)
        env.set("h", "a", b)
        run_pipeline(env, "ingress")
        assert (env.get("h", "b"), env.get("h", "c")) == (expect, 3)


TABLES = """
    action set_b(bit<8> v) { hdr.h.b = v; }
    action other() { hdr.h.b = 99; }
    table t {
        key = { hdr.h.a: exact; }
        actions = { set_b; other; NoAction; }
        default_action = NoAction();
    }
"""


def test_hit_miss_branches(tmp_path: Path) -> None:
    r = compile_ingress(
        tmp_path, TABLES, "if (t.apply().hit) { hdr.h.c = 1; } else { hdr.h.c = 2; }"
    )
    t = r.table("I.t")
    assert set(t["next_tables"]) == {"__HIT__", "__MISS__"}
    env = Env(r.json)
    run_pipeline(env, "ingress", {"I.t": Installed("I.set_b", [5])})
    assert (env.get("h", "b"), env.get("h", "c")) == (5, 1)
    env = Env(r.json)
    run_pipeline(env, "ingress")
    assert env.get("h", "c") == 2


def test_switch_on_action_run(tmp_path: Path) -> None:
    r = compile_ingress(
        tmp_path,
        TABLES,
        "switch (t.apply().action_run) { set_b: { hdr.h.c = 1; } default: { hdr.h.c = 2; } }"
        "\n hdr.h.w = 7;",
    )
    nt = r.table("I.t")["next_tables"]
    assert set(nt) == {"I.set_b", "I.other", "NoAction"}
    assert nt["I.other"] == nt["NoAction"] != nt["I.set_b"]
    env = Env(r.json)
    run_pipeline(env, "ingress", {"I.t": Installed("I.set_b", [5])})
    assert (env.get("h", "c"), env.get("h", "w")) == (1, 7)
    env = Env(r.json)
    run_pipeline(env, "ingress", {"I.t": Installed("I.other")})
    assert (env.get("h", "c"), env.get("h", "w")) == (2, 7)


def test_table_json_fields(tmp_path: Path) -> None:
    r = compile_ingress(tmp_path, TABLES, "t.apply();")
    t = r.table("I.t")
    assert t["key"] == [{"match_type": "exact", "name": "hdr.h.a", "target": ["h", "a"],
                         "mask": None}]  # fmt: skip
    assert t["match_type"] == "exact" and t["type"] == "simple" and t["max_size"] == 1024
    assert t["actions"] == ["I.set_b", "I.other", "NoAction"]
    assert t["action_ids"] == [r.action(n)["id"] for n in t["actions"]]
    assert r.action("I.set_b")["runtime_data"] == [{"name": "v", "bitwidth": 8}]
    assert t["default_entry"]["action_id"] == r.action("NoAction")["id"]
    assert t["with_counters"] is False and t["direct_meters"] is None


def test_direct_action_call_gets_its_own_table(tmp_path: Path) -> None:
    r = compile_ingress(tmp_path, "action seta(bit<8> v) { hdr.h.a = v; }", "seta(42);")
    t = r.table("tbl_seta")
    assert t["actions"] == ["I.seta"]
    assert t["default_entry"]["action_data"] == ["0x2a"]
    assert "I.seta" not in {a.preamble.name for a in r.p4info.actions}  # hidden table
    env = Env(r.json)
    run_pipeline(env, "ingress")
    assert env.get("h", "a") == 42


def test_exit_stops_the_pipeline(tmp_path: Path) -> None:
    r = compile_ingress(tmp_path, "", "if (hdr.h.a == 0) { exit; }\n hdr.h.b = 5;")
    env = Env(r.json)
    run_pipeline(env, "ingress")
    assert env.exited and env.get("h", "b") == 0
    assert any(p["op"] == "exit" for p in r.primitives())


def test_if_inside_action_uses_jumps(tmp_path: Path) -> None:
    r = compile_ingress(
        tmp_path,
        "action a() { if (hdr.h.a == 1) { hdr.h.b = 1; } else { hdr.h.b = 2; } hdr.h.c = 9; }"
        "\n table t { key = { hdr.h.a: exact; } actions = { a; } default_action = a(); }",
        "t.apply();",
    )
    act = r.action("I.a")
    ops = [p["op"] for p in act["primitives"]]
    assert ops == ["_jump_if_zero", "assign", "_jump", "assign", "assign"]
    for a, b in ((1, 1), (0, 2)):
        env = Env(r.json)
        env.set("h", "a", a)
        run_action(act, env)
        assert (env.get("h", "b"), env.get("h", "c")) == (b, 9)


def test_function_return_and_sub_control_return(tmp_path: Path) -> None:
    top = """
bit<8> pick(in bit<8> x, in bit<8> y) {
    if (x > y) { return x; }
    return y;
}
control Sub(inout h_t h) {
    apply {
        if (h.a == 0) { return; }
        h.b = 77;
    }
}
"""
    r = compile_text(
        tmp_path,
        program(
            "Sub() sub;",
            "hdr.h.c = (bit<16>)pick(hdr.h.a, hdr.h.b);\n sub.apply(hdr.h);\n hdr.h.w = 1;",
            top=top,
        ),
    )
    for a, b, c, bout in ((5, 3, 5, 77), (0, 9, 9, 9)):
        env = Env(r.json)
        env.set("h", "a", a)
        env.set("h", "b", b)
        run_pipeline(env, "ingress")
        assert (env.get("h", "c"), env.get("h", "b"), env.get("h", "w")) == (c, bout, 1)


def test_table_applied_twice_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(CompileError, match="applied more than once") as err:
        compile_ingress(tmp_path, TABLES, "t.apply();\n t.apply();")
    assert err.value.location is not None


def test_const_entries_and_priorities(tmp_path: Path) -> None:
    locals_ = """
    action set_b(bit<8> v) { hdr.h.b = v; }
    table t {
        key = { hdr.h.a: ternary; hdr.h.c: range; }
        actions = { set_b; }
        const entries = {
            (0x01 &&& 0x0f, 1 .. 10): set_b(1);
            (_, _): set_b(2);
        }
    }
"""
    r = compile_ingress(tmp_path, locals_, "t.apply();")
    t = r.table("I.t")
    assert t["match_type"] == "range"
    e0, e1 = t["entries"]
    assert e0["match_key"] == [
        {"match_type": "ternary", "key": "0x01", "mask": "0x0f"},
        {"match_type": "range", "start": "0x0001", "end": "0x000a"},
    ]
    assert e1["match_key"][1] == {"match_type": "range", "start": "0x0000", "end": "0xffff"}
    assert [e0["priority"], e1["priority"]] == [1, 2]
    assert t["max_size"] == 2
    env = Env(r.json)
    env.set("h", "a", 0x31)
    env.set("h", "c", 5)
    run_pipeline(env, "ingress")
    assert env.get("h", "b") == 1
    (tm,) = r.p4info.tables
    assert tm.is_const_table


# ---------------------------------------------------------------- externs


def test_register_counter_meter_primitives(tmp_path: Path) -> None:
    locals_ = """
    register<bit<32>>(16) r;
    counter(8, CounterType.packets) c;
    meter(4, MeterType.bytes) mt;
    action go() {
        r.read(hdr.h.w, meta.idx);
        r.write(meta.idx, hdr.h.w + 1);
        c.count(32w3);
        mt.execute_meter(32w2, hdr.h.a);
    }
"""
    r = compile_ingress(tmp_path, locals_, "go();")
    assert r.json["register_arrays"] == [
        {"name": "I.r", "id": 0, "source_info": r.json["register_arrays"][0]["source_info"],
         "size": 16, "bitwidth": 32}
    ]  # fmt: skip
    assert r.json["counter_arrays"][0]["size"] == 8
    assert r.json["meter_arrays"][0]["type"] == "bytes"
    ops = {p["op"]: p["parameters"] for p in r.action("I.go")["primitives"]}
    assert ops["register_read"][1] == {"type": "register_array", "value": "I.r"}
    assert ops["register_write"][0] == {"type": "register_array", "value": "I.r"}
    assert ops["count"][0] == {"type": "counter_array", "value": "I.c"}
    assert ops["execute_meter"][0] == {"type": "meter_array", "value": "I.mt"}
    assert ops["execute_meter"][2] == {"type": "field", "value": ["h", "a"]}


def test_direct_counter_and_meter_bind_to_their_table(tmp_path: Path) -> None:
    locals_ = """
    direct_counter(CounterType.packets_and_bytes) dc;
    direct_meter<bit<8>>(MeterType.packets) dm;
    action a() { dm.read(hdr.h.a); }
    table t {
        key = { hdr.h.a: exact; }
        actions = { a; }
        counters = dc;
        meters = dm;
        size = 64;
    }
"""
    r = compile_ingress(tmp_path, locals_, "t.apply();")
    t = r.table("I.t")
    assert t["with_counters"] is True and t["direct_meters"] == "I.dm"
    (ctr,) = r.json["counter_arrays"]
    assert ctr["is_direct"] and ctr["binding"] == "I.t"
    (mtr,) = r.json["meter_arrays"]
    assert mtr["binding"] == "I.t" and mtr["result_target"] == ["h", "a"] and mtr["size"] == 64


def test_hash_checksum_and_digest(tmp_path: Path) -> None:
    locals_ = """
    action go() {
        hash(hdr.h.c, HashAlgorithm.crc16, (bit<16>)0, { hdr.h.a, hdr.h.b }, (bit<32>)1024);
        digest<metadata>(1, meta);
        random(hdr.h.a, 1, 10);
    }
"""
    r = compile_ingress(tmp_path, locals_, "go();")
    (calc,) = r.json["calculations"]
    assert calc["algo"] == "crc16"
    assert calc["input"] == [{"type": "field", "value": ["h", "a"]},
                             {"type": "field", "value": ["h", "b"]}]  # fmt: skip
    ops = {p["op"]: p["parameters"] for p in r.action("I.go")["primitives"]}
    assert ops["modify_field_with_hash_based_offset"][2] == {"type": "calculation",
                                                            "value": calc["name"]}  # fmt: skip
    (ll,) = r.json["learn_lists"]
    assert ll["name"] == "metadata" and len(ll["elements"]) == 3
    assert ops["generate_digest"][1] == {"type": "hexstr", "value": "0x00000001"}
    assert "modify_field_rng_uniform" in ops
    (dg,) = r.p4info.digests
    assert dg.preamble.name == "metadata"


def test_checksum_update_and_verify(tmp_path: Path) -> None:
    text = program().replace(
        "control CC(inout headers hdr, inout metadata meta) { apply { } }",
        "control CC(inout headers hdr, inout metadata meta) { apply {"
        " update_checksum(hdr.h.isValid(), { hdr.h.a, hdr.h.b }, hdr.h.c,"
        " HashAlgorithm.csum16); } }",
    )
    r = compile_text(tmp_path, text)
    (ck,) = r.json["checksums"]
    assert ck["update"] and not ck["verify"] and ck["target"] == ["h", "c"]
    assert ck["if_cond"]["value"]["op"] == "d2b"
    assert r.json["calculations"][0]["algo"] == "csum16"


def test_checksum_call_outside_checksum_control_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(CompileError, match="ComputeChecksum"):
        compile_ingress(
            tmp_path, "", "update_checksum(true, { hdr.h.a }, hdr.h.c, HashAlgorithm.csum16);"
        )


def test_header_validity_and_assignments(tmp_path: Path) -> None:
    r = compile_ingress(
        tmp_path,
        "",
        "hdr.h2.setValid(); hdr.h2 = hdr.h; hdr.h.setInvalid();"
        " if (hdr.h2.isValid()) { hdr.h2.a = 1; }",
    )
    ops = [p["op"] for p in r.primitives()]
    assert ops[:3] == ["add_header", "assign_header", "remove_header"]


# ---------------------------------------------------------------- parser


def test_parser_select_masks_ranges_and_lookahead(tmp_path: Path) -> None:
    parser = """
parser P(packet_in pkt, out headers hdr, inout metadata meta,
         inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.a, hdr.h.b) {
            (1, 0x10 &&& 0xf0): two;
            (2 .. 5, _): two;
            default: three;
        }
    }
    state two {
        transition select(pkt.lookahead<bit<8>>()) {
            0x45: accept;
            default: reject;
        }
    }
    state three {
        meta.m = hdr.h.a + 1;
        verify(hdr.h.b == 0, error.NoMatch);
        pkt.advance(16);
        transition accept;
    }
}
"""
    r = compile_text(tmp_path, program(parser=parser))
    start = r.state("start")
    assert start["transition_key"] == [{"type": "field", "value": ["h", "a"]},
                                       {"type": "field", "value": ["h", "b"]}]  # fmt: skip
    first = start["transitions"][0]
    assert (first["value"], first["mask"]) == ("0x0110", "0xfff0")
    for a, b, nxt in ((1, 0x1F, "two"), (3, 0, "two"), (6, 0, "three"), (1, 0x20, "three")):
        env = Env(r.json)
        env.set("h", "a", a)
        env.set("h", "b", b)
        assert run_parse_state(start, env) == nxt, (a, b)
    two = r.state("two")
    assert two["transition_key"] == [{"type": "lookahead", "value": [0, 8]}]
    assert two["transitions"][1]["next_state"] is None
    three_ops = [op["op"] for op in r.state("three")["parser_ops"]]
    assert three_ops == ["set", "verify", "advance"]


def test_range_to_masks_covers_exactly() -> None:
    for lo, hi in ((0, 1023), (2, 5), (0x100, 0x1FF), (7, 7), (1, 254)):
        blocks = range_to_masks(lo, hi, 16)
        covered = {v for v in range(1 << 12) if any(v & m == b for b, m in blocks)}
        assert covered == set(range(lo, min(hi, (1 << 12) - 1) + 1))


def test_if_in_parser_state_splits_it(tmp_path: Path) -> None:
    parser = """
parser P(packet_in pkt, out headers hdr, inout metadata meta,
         inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        if (hdr.h.a == 1) { meta.m = 5; } else { meta.m = 6; }
        hdr.h.b = meta.m;
        transition accept;
    }
}
"""
    r = compile_text(tmp_path, program(parser=parser))
    states = {s["name"]: s for s in r.json["parsers"][0]["parse_states"]}
    for a, m in ((1, 5), (0, 6)):
        env = Env(r.json)
        env.set("h", "a", a)
        name: str | None = "start"
        while name is not None:
            name = run_parse_state(states[name], env)
        assert env.get("h", "b") == m


def test_sub_parser_is_inlined(tmp_path: Path) -> None:
    top = """
parser Sub(packet_in pkt, inout headers hdr) {
    state start {
        pkt.extract(hdr.h2);
        transition accept;
    }
}
"""
    parser = """
parser P(packet_in pkt, out headers hdr, inout metadata meta,
         inout standard_metadata_t sm) {
    Sub() sub;
    state start {
        pkt.extract(hdr.h);
        sub.apply(pkt, hdr);
        meta.m = 1;
        transition accept;
    }
}
"""
    r = compile_text(tmp_path, program(top=top, parser=parser))
    states = {s["name"]: s for s in r.json["parsers"][0]["parse_states"]}
    start = states["start"]
    sub_start = start["transitions"][0]["next_state"]
    assert states[sub_start]["parser_ops"][0]["parameters"] == [{"type": "regular",
                                                                "value": "h2"}]  # fmt: skip
    cont = states[sub_start]["transitions"][0]["next_state"]
    assert states[cont]["parser_ops"][0]["op"] == "set"
    assert states[cont]["transitions"][0]["next_state"] is None


def test_deparser_order(tmp_path: Path) -> None:
    r = compile_ingress(tmp_path)
    assert r.json["deparsers"][0]["order"] == ["h", "h2"]


def test_conditional_expression_evaluates(tmp_path: Path) -> None:
    r = compile_ingress(tmp_path, "", "if (hdr.h.isValid() && hdr.h.a != 3) { hdr.h.b = 1; }")
    (cond,) = r.pipeline()["conditionals"]
    env = Env(r.json)
    env.valid["h"] = True
    env.set("h", "a", 4)
    assert evaluate(cond["expression"], env) is True
    env.set("h", "a", 3)
    assert evaluate(cond["expression"], env) is False


def test_table_hit_as_a_value(tmp_path: Path) -> None:
    r = compile_ingress(
        tmp_path,
        TABLES,
        "bool found = t.apply().hit;\n if (found && hdr.h.a == 1) { hdr.h.c = 1; }",
    )
    assert set(r.table("I.t")["next_tables"]) == {"__HIT__", "__MISS__"}
    for installed, a, c in (({"I.t": Installed("I.set_b", [5])}, 1, 1), ({}, 1, 0)):
        env = Env(r.json)
        env.set("h", "a", a)
        run_pipeline(env, "ingress", installed)
        assert env.get("h", "c") == c


@pytest.mark.parametrize(
    ("cond", "a", "installed", "applied", "c"),
    [
        ("hdr.h.a == 1 && t.apply().hit", 1, True, True, 1),
        ("hdr.h.a == 1 && t.apply().hit", 0, True, False, 0),
        ("hdr.h.a == 1 || t.apply().miss", 1, False, False, 1),
        ("hdr.h.a == 1 || t.apply().miss", 0, False, True, 1),
        ("hdr.h.a == 1 || t.apply().miss", 0, True, True, 0),
        ("(hdr.h.a == 1 ? t.apply().hit : false)", 1, True, True, 1),
    ],
)
def test_table_applied_only_when_its_operand_is_evaluated(
    tmp_path: Path, cond: str, a: int, installed: bool, applied: bool, c: int
) -> None:
    r = compile_ingress(tmp_path, TABLES, f"if ({cond}) {{ hdr.h.c = 1; }}")
    env = Env(r.json)
    env.set("h", "a", a)
    run_pipeline(env, "ingress", {"I.t": Installed("I.set_b", [5])} if installed else {})
    assert ("I.t" in env.trace) == applied
    assert env.get("h", "c") == c


def test_exit_inside_an_action_skips_the_rest_of_it(tmp_path: Path) -> None:
    r = compile_ingress(
        tmp_path,
        "action a() { if (hdr.h.a == 0) { exit; } hdr.h.b = 1; }",
        "a();\n hdr.h.c = 2;",
    )
    for a, b, c in ((0, 0, 0), (1, 1, 2)):
        env = Env(r.json)
        env.set("h", "a", a)
        run_pipeline(env, "ingress")
        assert (env.exited, env.get("h", "b"), env.get("h", "c")) == (a == 0, b, c)


def test_header_equality_compares_validity_and_fields(tmp_path: Path) -> None:
    r = compile_ingress(tmp_path, "", "if (hdr.h == hdr.h2) { hdr.h.c = 1; }")
    cases = ((True, True, 1, 1, 1), (True, True, 1, 2, 0), (False, False, 1, 2, 1),
             (True, False, 0, 0, 0))  # fmt: skip
    for v1, v2, a1, a2, expected in cases:
        env = Env(r.json)
        env.valid.update({"h": v1, "h2": v2})
        env.set("h", "a", a1)
        env.set("h2", "a", a2)
        run_pipeline(env, "ingress")
        assert env.get("h", "c") == expected, (v1, v2, a1, a2)


def test_in_arguments_are_copied_in(tmp_path: Path) -> None:
    top = """
control Sub(inout h_t h, in bit<8> v) {
    apply {
        h.a = 0;
        h.b = v;
    }
}
"""
    r = compile_text(tmp_path, program("Sub() sub;", "sub.apply(hdr.h, hdr.h.a);", top=top))
    env = Env(r.json)
    env.set("h", "a", 9)
    run_pipeline(env, "ingress")
    assert (env.get("h", "a"), env.get("h", "b")) == (0, 9)


def test_resubmit_recirculate_clone3_build_field_lists(tmp_path: Path) -> None:
    r = compile_ingress(
        tmp_path,
        "",
        "if (hdr.h.a == 1) { resubmit(meta); }\n"
        " else { clone3(CloneType.I2E, 32w5, { meta.m, sm.ingress_port }); }",
        egress_apply="recirculate({ meta.idx });",
    )
    lists = {fl["id"]: [e["value"] for e in fl["elements"]] for fl in r.json["field_lists"]}
    ops = {p["op"]: p["parameters"] for p in r.primitives()}
    resub = lists[int(ops["resubmit"][0]["value"], 16)]
    assert ["scalars", "userMetadata.m"] in resub and len(resub) == 3
    clone = ops["clone_ingress_pkt_to_egress"]
    assert clone[0] == {"type": "hexstr", "value": "0x00000005"}
    assert lists[int(clone[1]["value"], 16)] == [
        ["scalars", "userMetadata.m"],
        ["standard_metadata", "ingress_port"],
    ]
    assert lists[int(ops["recirculate"][0]["value"], 16)] == [["scalars", "userMetadata.idx"]]


def test_synthesized_names_avoid_user_names(tmp_path: Path) -> None:
    r = compile_text(
        tmp_path,
        program(
            "table t { key = { hdr.h.a: exact; } actions = { act; } }",
            "hdr.h.b = 1;\n t.apply();",
            top="action act() { }\n",
        ),
    )
    names = [a["name"] for a in r.json["actions"]]
    assert len(names) == len(set(names)) and "act" in names
    assert r.table("I.t")["actions"] == ["act", "NoAction"]  # NoAction: the default


def test_varbit_header_and_copy(tmp_path: Path) -> None:
    text = program("", "hdr.o2.opts = hdr.o.opts;")
    text = text.replace(
        "struct headers {\n    h_t h;\n    h_t h2;\n}",
        "header o_t { varbit<320> opts; }\nstruct headers { h_t h; h_t h2; o_t o; o_t o2; }",
    )
    text = text.replace(
        "pkt.extract(hdr.h);", "pkt.extract(hdr.h); pkt.extract(hdr.o, (bit<32>)hdr.h.a * 8);"
    )
    r = compile_text(tmp_path, text)
    ot = next(t for t in r.json["header_types"] if t["name"] == "o_t")
    assert ot["fields"] == [["opts", "*"]] and ot["max_length"] == 40
    ops = [op["op"] for op in r.state("start")["parser_ops"]]
    assert ops == ["extract", "extract_VL"]
    assert "assign_VL" in [p["op"] for p in r.primitives()]
