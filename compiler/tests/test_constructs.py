"""One focused program per group of language constructs, checked by evaluating the
compiled BMv2 JSON or by its structure where that is the contract."""

from __future__ import annotations

from typing import Any

import pytest
from finsy.proto.p4.config.v1 import p4info_pb2
from support.bmv2_eval import (
    Env,
    Installed,
    apply_table,
    evaluate,
    run_action,
    run_parse_state,
    run_pipeline,
    wrap,
)
from support.builder import Builder
from support.program import Compiled, hexval

MT = p4info_pb2.MatchField


def assigns(action: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """Destination field -> right-hand side of each assign primitive of an action."""
    out = {}
    for p in action["primitives"]:
        if p["op"] == "assign" and p["parameters"][0]["type"] == "field":
            h, f = p["parameters"][0]["value"]
            out[(h, f)] = p["parameters"][1]
    return out


def folded(c: Compiled, action: dict[str, Any], header: str, field: str) -> int:
    """The constant a field is assigned; fails unless the compiler folded it."""
    rhs = assigns(action)[(header, field)]
    assert rhs["type"] == "hexstr", f"{header}.{field} not folded to a constant: {rhs}"
    width, signed = Env(c.json).field_info(header, field)
    return wrap(hexval(rhs["value"]), width, signed)


# ---- types, constants, enums, errors -------------------------------------------------------


def test_types_header_fields(build: Builder) -> None:
    c = build("constructs/types.p4")
    fields = c.fields_of("h")
    assert fields["mac"] == (48, False)  # typedef bit<48>
    assert fields["delta"] == (8, True)  # int<8> is signed
    assert fields["proto"] == (8, False)
    env = Env(c.json)
    assert env.field_info(*env.scalar_named("seen")) == (1, False)  # bool metadata: 1 bit
    assert env.field_info(*env.scalar_named("signed_sum")) == (16, True)


def test_types_constants_are_folded(build: Builder) -> None:
    c = build("constructs/types.p4")
    a = c.action("MyIngress.set_constants")
    assert folded(c, a, "h", "proto") == 0x40
    assert folded(c, a, "h", "wide") == 0x1001
    assert folded(c, a, "h", "delta") == -3
    assert folded(c, a, "h", "product") == 65
    assert folded(c, a, "h", "neg_raw") == 0xFD
    assert folded(c, a, "h", "flag_bit") == 1


def test_types_errors_list(build: Builder) -> None:
    c = build("constructs/types.p4")
    errors = dict(c.json["errors"])
    core = ["NoError", "PacketTooShort", "NoMatch", "StackOutOfBounds", "HeaderTooShort",
            "ParserTimeout", "ParserInvalidArgument"]  # fmt: skip
    assert [e[0] for e in c.json["errors"]][: len(core)] == core
    assert errors["NoError"] == 0
    assert {"BadVersion", "TooManyTags"} <= set(errors)
    assert len(set(errors.values())) == len(errors)
    verify = [o for o in c.parse_state("start")["parser_ops"] if o["op"] == "verify"]
    assert evaluate(verify[0]["parameters"][1], Env(c.json)) == errors["BadVersion"]


@pytest.mark.parametrize(("proto", "code"), [(17, 17), (6, 3)])
def test_types_enums_and_new_types(build: Builder, proto: int, code: int) -> None:
    c = build("constructs/types.p4")
    env = Env(c.json)
    env.valid["h"] = True
    run_pipeline(
        env, "ingress", {"MyIngress.classify": Installed("MyIngress.use_types", [7, proto])}
    )
    assert env.get("h", "color_code") == code
    assert env.get(*env.scalar_named("tag")) == 7


def test_types_p4info(build: Builder) -> None:
    c = build("constructs/types.p4")
    t = c.p4_table("MyIngress.classify")
    assert [(m.name, m.bitwidth) for m in t.match_fields] == [("hdr.h.mac", 48), ("meta.proto", 8)]
    a = c.p4_action("MyIngress.use_types")
    assert [(p.name, p.bitwidth) for p in a.params] == [("tag", 32), ("p", 8)]


def test_types_parser_error_check(build: Builder) -> None:
    c = build("constructs/types.p4")
    errors = dict(c.json["errors"])
    env = Env(c.json)
    env.valid["h"] = True
    env.set("standard_metadata", "parser_error", errors["BadVersion"])
    run_pipeline(env, "ingress")
    assert "mark_to_drop" in env.calls
    env = Env(c.json)
    env.valid["h"] = True
    run_pipeline(env, "ingress")
    assert "mark_to_drop" not in env.calls


# ---- constant folding ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("sat_add", 255),
        ("sat_sub", 0),
        ("slice", 0xBC),
        ("concat", 0x1234),
        ("shift", 0x80),
        ("trunc", 0xF),
        ("neg", 0xFF),
        ("wrap", 4),
        ("cond", 7),
        ("arith", 34),
        ("ssat", 127),
        ("bool_cast", 1),
    ],
)
def test_constant_folding(build: Builder, field: str, value: int) -> None:
    c = build("constructs/folding.p4")
    assert folded(c, c.action("MyIngress.fold"), "r", field) == value


# ---- expressions ---------------------------------------------------------------------------


def _clamp(v: int, lo: int, hi: int) -> int:
    return max(lo, min(hi, v))


def expected_outputs(a: int, b: int, w: int, s: int, t: int) -> dict[str, int]:
    """P4 semantics of the compute() action, written out in Python."""
    return {
        "add": (a + b) % 256,
        "sub": (a - b) % 256,
        "sat_add": min(a + b, 255),
        "sat_sub": max(a - b, 0),
        "ssat_add": _clamp(s + t, -128, 127),
        "ssat_sub": _clamp(s - t, -128, 127),
        "slice_hi": w >> 12,
        "slice_mid": (w >> 4) & 0xFF,
        "concat": (a << 16) | w,
        "shl": (a << 4) & 0xFFFF,
        "shr": a >> 3,
        "sshr": s >> 2,
        "cond": max(a, b),
        "logic": int(a == 1 or (b != 2 and not w >= 100)),
        "widen": w,
        "narrow": a & 0xF,
        "sext": s,
        "bitops": ((a & 0xF0) | (b ^ 0x0F) | (~a & 0x01)) & 0xFF,
        "neg": (-a) % 256,
        "mul": (a * 3) % 256,
        "cmp": (1 if s < t else 0) + (2 if a <= b else 0),
    }


VECTORS = [
    (0, 0, 0, 0, 0),
    (200, 100, 0xABCD, 100, 100),
    (5, 10, 99, -100, 100),
    (1, 2, 0xFFFF, -128, 1),
    (255, 255, 100, 127, -128),
    (0x81, 2, 50, -1, -1),
]


@pytest.mark.parametrize("vector", VECTORS, ids=str)
def test_expressions_evaluate_like_p4(build: Builder, vector: tuple[int, ...]) -> None:
    c = build("constructs/expressions.p4")
    a, b, w, s, t = vector
    env = Env(c.json)
    env.valid.update(i=True, o=True)
    for name, value in zip("abwst", vector, strict=True):
        env.set("i", name, value)
    run_action(c.action("MyIngress.compute"), env)
    expected = expected_outputs(a, b, w, s, t)
    got = {name: env.get("o", name) for name in expected}
    assert got == expected


def test_expressions_signed_fields(build: Builder) -> None:
    c = build("constructs/expressions.p4")
    assert c.fields_of("i")["s"] == (8, True)
    assert c.fields_of("o")["sext"] == (16, True)
    assert c.fields_of("o")["concat"] == (24, False)


# ---- header stacks -------------------------------------------------------------------------


def test_stack_declaration(build: Builder) -> None:
    c = build("constructs/stacks.p4")
    st = c.named("header_stacks", "tags")
    assert st["header_type"] == "tag_t"
    by_id = {h["id"]: h["name"] for h in c.json["headers"]}
    assert [by_id[i] for i in st["header_ids"]] == [f"tags[{i}]" for i in range(4)]
    assert c.json["deparsers"][0]["order"] == ["info", "tags[0]", "tags[1]", "tags[2]", "tags[3]"]


def test_stack_parser_next_last_lastindex(build: Builder) -> None:
    c = build("constructs/stacks.p4")
    state = c.parse_state("parse_tag")
    ops = state["parser_ops"]
    assert ops[0]["op"] == "extract"
    assert ops[0]["parameters"][0] == {"type": "stack", "value": "tags"}
    assert state["transition_key"] == [{"type": "stack_field", "value": ["tags", "bos"]}]
    assert "last_stack_index" in str(ops[1:]), ops
    nexts = {t["next_state"] for t in state["transitions"]}
    assert nexts == {None, "parse_tag"}


def test_stack_push_pop(build: Builder) -> None:
    c = build("constructs/stacks.p4")
    push = c.action("MyIngress.push_tag")["primitives"]
    assert push[0]["op"] == "push"
    assert push[0]["parameters"][0] == {"type": "header_stack", "value": "tags"}
    assert hexval(push[0]["parameters"][1]["value"]) == 1
    assert {"type": "header", "value": "tags[0]"} in [
        p["parameters"][0] for p in push if p["op"] == "add_header"
    ]
    pop = c.action("MyIngress.pop_two")["primitives"]
    assert [p["op"] for p in pop] == ["pop"]
    assert hexval(pop[0]["parameters"][1]["value"]) == 2


def test_stack_indexing_and_size(build: Builder) -> None:
    c = build("constructs/stacks.p4")
    a = c.action("MyIngress.record_size")
    assert folded(c, a, "info", "depth") == 4  # .size is the capacity, a constant
    env = Env(c.json)
    env.valid.update({"info": True, "tags[2]": True, "tags[1]": True, "tags[3]": True})
    env.set("tags[2]", "value", 0x99)
    run_action(a, env)
    assert env.get("tags[1]", "value") == 0x99
    assert env.get("tags[3]", "kind") == 5
    dyn = c.action("MyIngress.pick_dynamic")
    assert "dereference_header_stack" in str(dyn["primitives"])


# ---- varbit --------------------------------------------------------------------------------


def test_varbit(build: Builder) -> None:
    c = build("constructs/varbit.p4")
    ht = c.header_type("ipv4_options_t")
    assert ht["fields"][0][:2] == ["options", "*"]
    assert ht["max_length"] == 40
    (state,) = c.states_extracting("ipv4_options")
    op = next(o for o in state["parser_ops"] if o["op"] == "extract_VL")
    assert op["parameters"][0] == {"type": "regular", "value": "ipv4_options"}
    assert op["parameters"][1]["type"] == "expression"
    for ihl, bits in ((6, 32), (7, 64), (15, 320)):
        env = Env(c.json)
        env.set("ipv4", "ihl", ihl)
        assert evaluate(op["parameters"][1], env) == bits
    start = c.parse_state("start")
    env = Env(c.json)
    env.set("ipv4", "ihl", 5)
    assert run_parse_state(start, env) is None
    env.set("ipv4", "ihl", 6)
    assert run_parse_state(start, env) == state["name"]
    calc = c.named("calculations", c.json["checksums"][0]["calculation"])
    assert ["ipv4_options", "options"] in [i["value"] for i in calc["input"]]


# ---- parser constructs ---------------------------------------------------------------------


def _parse_env(c: Compiled, **fields: int) -> Env:
    env = Env(c.json)
    for key, value in fields.items():
        h, f = key.split("__")
        env.set(h, f, value)
    return env


@pytest.mark.parametrize(
    ("ether_type", "dst_first_byte", "expected"),
    [
        (0x8100, 0x00, "parse_vlan"),
        (0x8100, 0x01, "parse_vlan"),
        (0x0800, 0x01, "parse_ipv4_multicast_dst"),
        (0x0800, 0x03, "parse_ipv4_multicast_dst"),
        (0x0800, 0x02, "parse_ipv4_or_pre"),
        (0x0600, 0x00, "parse_pre"),
        (0x0650, 0x01, "parse_pre"),
        (0x06FF, 0x00, "parse_pre"),
        (0x0700, 0x00, None),
        (0x05FF, 0x00, None),
    ],
)
def test_select_tuple_masks_ranges_default(
    build: Builder, ether_type: int, dst_first_byte: int, expected: str | None
) -> None:
    c = build("constructs/parser_features.p4")
    env = _parse_env(
        c, ethernet__etherType=ether_type, ethernet__dstAddr=dst_first_byte << 40 | 0x123456
    )
    assert run_parse_state(c.parse_state("start"), env) == expected


@pytest.mark.parametrize(
    ("vid", "ether_type", "expected"),
    [(0x0AB, 0x0800, "parse_ipv4_or_pre"), (0x150, 0x0800, "parse_ipv4_or_pre"),
     (0x250, 0x86DD, None)],
)  # fmt: skip
def test_select_masked_and_range_in_tuple(
    build: Builder, vid: int, ether_type: int, expected: str | None
) -> None:
    c = build("constructs/parser_features.p4")
    env = _parse_env(c, vlan__vid=vid, vlan__etherType=ether_type)
    assert run_parse_state(c.parse_state("parse_vlan"), env) == expected


def test_lookahead_select(build: Builder) -> None:
    c = build("constructs/parser_features.p4")
    state = c.parse_state("parse_ipv4_or_pre")
    for first, expected in ((0x45, "parse_ipv4"), (0x46, "parse_pre"), (0x00, "parse_pre")):
        env = Env(c.json)
        env.lookahead, env.lookahead_bits = first, 8
        assert run_parse_state(state, env) == expected


def test_lookahead_nested_in_expressions(build: Builder) -> None:
    """lookahead inside an extract's bit count, an assignment and a select key is read
    into a temporary ahead of its use (BMv2 knows lookahead only in `set` and keys)."""
    c = build("constructs/lookahead_exprs.p4")
    state = c.parse_state("start")
    ops = state["parser_ops"]
    (vl,) = [o for o in ops if o["op"] == "extract_VL"]
    # The lookahead for the bit count is read by a `set` placed before the extract.
    first_extract = ops.index(vl)
    assert first_extract > 0
    # Header bits 0x2? : kind 2, words 3 -> 96 bits of options.
    env = Env(c.json)
    env.lookahead, env.lookahead_bits = 0x23, 8
    for o in ops[:first_extract]:
        assert o["op"] == "set"
        h, f = o["parameters"][0]["value"]
        env.set(h, f, int(evaluate(o["parameters"][1], env)))
    assert evaluate(vl["parameters"][1], env) == 96
    # The whole state: the assignment sees the same first byte, the select its low nibble.
    for first, expected in ((0x31, "parse_tag"), (0x32, None)):
        env = Env(c.json)
        env.lookahead, env.lookahead_bits = first, 8
        assert run_parse_state(state, env) == expected
        assert env.get(*env.scalar_named("peek_plus_one")) == first + 1


def test_lookahead_in_verify_condition(build: Builder) -> None:
    c = build("constructs/lookahead_exprs.p4")
    ops = c.parse_state("start")["parser_ops"]
    (verify,) = [o for o in ops if o["op"] == "verify"]
    before = ops[: ops.index(verify)]
    for first, ok in ((0xEE, False), (0x31, True)):
        env = Env(c.json)
        env.lookahead, env.lookahead_bits = first, 8
        for o in before:
            if o["op"] == "set":
                h, f = o["parameters"][0]["value"]
                env.set(h, f, int(evaluate(o["parameters"][1], env)))
        assert bool(evaluate(verify["parameters"][0], env)) is ok


@pytest.mark.parametrize(("first", "zero"), [(0x00, 1), (0x07, 0)])
def test_lookahead_in_parser_if_condition(build: Builder, first: int, zero: int) -> None:
    c = build("constructs/lookahead_exprs.p4")
    env = Env(c.json)
    env.lookahead, env.lookahead_bits = first, 8
    state: str | None = "parse_tag"
    seen = []
    while state is not None:
        seen.append(state)
        state = run_parse_state(c.parse_state(state), env)
    assert len(seen) > 1  # the if split the state
    assert env.get(*env.scalar_named("zero_tag")) == zero


@pytest.mark.parametrize(
    ("first", "second", "marked"),
    [((1, 7), (0, 9), 7), ((0, 7), (1, 9), 9), ((1, 7), (1, 9), 9), ((0, 7), (0, 9), 0)],
)
def test_sub_parser_applied_twice(
    build: Builder, first: tuple[int, int], second: tuple[int, int], marked: int
) -> None:
    """One sub-parser instance applied in two states: two inlined copies, each with its
    own `out` header and its own copy of the local variable."""
    c = build("constructs/subparser_reapply.p4")
    assert len(c.states_extracting("first")) == 1
    assert len(c.states_extracting("second")) == 1
    env = Env(c.json)
    for h, (kind, value) in (("first", first), ("second", second)):
        env.set(h, "kind", kind)
        env.set(h, "value", value)
    state: str | None = c.parser()["init_state"]
    steps = 0
    while state is not None:
        steps += 1
        assert steps < 20
        state = run_parse_state(c.parse_state(state), env)
    assert env.valid["first"] and env.valid["second"]
    assert env.get(*env.scalar_named("marked")) == marked


def test_advance_and_assignment_in_state(build: Builder) -> None:
    c = build("constructs/parser_features.p4")
    state = c.parse_state("parse_pre")
    adv = [o for o in state["parser_ops"] if o["op"] == "advance"]
    assert len(adv) == 1
    env = _parse_env(c, pre__len=3)
    assert evaluate(adv[0]["parameters"][0], env) == 24
    env = _parse_env(c, pre__kind=0x5A)
    assert run_parse_state(state, env) == "parse_ipv4"
    assert env.get(*env.scalar_named("pre_kind")) == 0x5A


def test_verify_with_user_error(build: Builder) -> None:
    c = build("constructs/parser_features.p4")
    errors = dict(c.json["errors"])
    (state,) = c.states_extracting("ipv4")
    (verify,) = [o for o in state["parser_ops"] if o["op"] == "verify"]
    cond, err = verify["parameters"]
    assert evaluate(err, Env(c.json)) == errors["BadIpVersion"]
    assert evaluate(cond, _parse_env(c, ipv4__version=4)) is True
    assert evaluate(cond, _parse_env(c, ipv4__version=6)) is False


@pytest.mark.parametrize(("port", "low"), [(0, True), (80, True), (1023, True), (1024, False)])
def test_sub_parser_with_range(build: Builder, port: int, low: bool) -> None:
    """The L4 sub-parser is inlined: follow it from the state that extracts IPv4."""
    c = build("constructs/parser_features.p4")
    (ipv4_state,) = c.states_extracting("ipv4")
    env = _parse_env(c, ipv4__protocol=17, ipv4__version=4, udp__dstPort=port)
    name = run_parse_state(ipv4_state, env)
    visited = []
    while name is not None and len(visited) < 10:
        visited.append(name)
        name = run_parse_state(c.parse_state(name), env)
    assert any(s["name"] in visited for s in c.states_extracting("udp")), visited
    assert env.get(*env.scalar_named("low_port")) == int(low)
    assert env.get(*env.scalar_named("l4_dport")) == port


# ---- tables --------------------------------------------------------------------------------


def test_table_match_kinds(build: Builder) -> None:
    c = build("constructs/tables.p4")
    kinds = {
        "MyIngress.t_exact": ("exact", ["exact", "exact"]),
        "MyIngress.t_lpm": ("lpm", ["exact", "lpm"]),
        "MyIngress.t_ternary": ("ternary", ["ternary", "ternary"]),
        "MyIngress.t_range": ("range", ["range", "exact"]),
        "MyIngress.t_optional": ("ternary", ["ternary", "ternary"]),  # optional -> ternary
    }
    for name, (table_kind, key_kinds) in kinds.items():
        t = c.table(name)
        assert t["match_type"] == table_kind, name
        assert [k["match_type"] for k in t["key"]] == key_kinds, name
    p4 = {
        "MyIngress.t_exact": [MT.EXACT, MT.EXACT],
        "MyIngress.t_lpm": [MT.EXACT, MT.LPM],
        "MyIngress.t_ternary": [MT.TERNARY, MT.TERNARY],
        "MyIngress.t_range": [MT.RANGE, MT.EXACT],
        "MyIngress.t_optional": [MT.OPTIONAL, MT.OPTIONAL],
    }
    for name, match_types in p4.items():
        assert [m.match_type for m in c.p4_table(name).match_fields] == match_types, name
    widths = [(m.name, m.bitwidth) for m in c.p4_table("MyIngress.t_range").match_fields]
    assert widths == [("hdr.h.port", 16), ("hdr.h.proto", 8)]


def test_table_sizes(build: Builder) -> None:
    c = build("constructs/tables.p4")
    assert c.table("MyIngress.t_exact")["max_size"] == 2048
    assert c.p4_table("MyIngress.t_exact").size == 2048
    assert c.table("MyIngress.t_lpm")["max_size"] == 4096
    assert c.table("MyIngress.t_optional")["max_size"] == 64
    assert c.p4_table("MyIngress.t_optional").size == 64


def test_default_actions(build: Builder) -> None:
    c = build("constructs/tables.p4")
    lpm = c.table("MyIngress.t_lpm")["default_entry"]
    assert c.action_by_id(lpm["action_id"])["name"] == "MyIngress.set_port_and_result"
    assert [hexval(x) for x in lpm["action_data"]] == [7, 0x77]
    assert lpm["action_const"] is False
    tern = c.table("MyIngress.t_ternary")["default_entry"]
    assert c.action_by_id(tern["action_id"])["name"] == "MyIngress.drop"
    assert tern["action_const"] is True
    p4t = c.p4_table("MyIngress.t_ternary")
    assert p4t.const_default_action_id == c.p4_action("MyIngress.drop").preamble.id
    assert p4t.is_const_table
    assert c.p4_table("MyIngress.t_lpm").const_default_action_id == 0
    assert not c.p4_table("MyIngress.t_lpm").is_const_table


def test_action_scopes(build: Builder) -> None:
    c = build("constructs/tables.p4")
    t = c.p4_table("MyIngress.t_exact")
    scopes = {c.p4_action_by_id(r.id).preamble.name: r.scope for r in t.action_refs}
    assert scopes == {
        "MyIngress.set_result": p4info_pb2.ActionRef.TABLE_AND_DEFAULT,
        "MyIngress.only_in_table": p4info_pb2.ActionRef.TABLE_ONLY,
        "MyIngress.miss_action": p4info_pb2.ActionRef.DEFAULT_ONLY,
    }
    params = c.p4_action("MyIngress.set_port_and_result").params
    assert [(p.name, p.bitwidth) for p in params] == [("port", 9), ("r", 8)]


def test_const_entries_priorities_follow_source_order(build: Builder) -> None:
    c = build("constructs/tables.p4")
    t = c.table("MyIngress.t_ternary")
    prios = [e["priority"] for e in t["entries"]]
    assert prios == sorted(prios) and len(set(prios)) == 4  # first entry wins in BMv2
    assert t["max_size"] == 4  # a table with const entries holds exactly those
    first = t["entries"][0]["match_key"]
    assert [(hexval(k["key"]), hexval(k["mask"])) for k in first] == [(6, 0xFF), (2, 2)]
    dont_care = t["entries"][1]["match_key"][1]
    assert hexval(dont_care["mask"]) == 0


def test_explicit_priorities(build: Builder) -> None:
    c = build("constructs/tables.p4")
    t = c.table("MyIngress.t_priorities")
    assert [e["priority"] for e in t["entries"]] == [3, 2, 1]


@pytest.mark.parametrize(
    ("proto", "flags", "result"),
    [(6, 0x02, 1), (6, 0x12, 1), (6, 0x00, 2), (17, 0x80, 3), (1, 0x80, 4), (1, 0x00, None)],
)
def test_ternary_const_entries_behave(
    build: Builder, proto: int, flags: int, result: int | None
) -> None:
    c = build("constructs/tables.p4")
    env = Env(c.json)
    env.set("h", "proto", proto)
    env.set("h", "flags", flags)
    hit, action = apply_table(c.table("MyIngress.t_ternary"), env)
    if result is None:
        assert (hit, action) == (False, "MyIngress.drop")
    else:
        assert hit and env.get("h", "result") == result


@pytest.mark.parametrize(
    ("port", "proto", "result"),
    [(0, 6, 10), (1023, 6, 10), (1024, 6, 11), (49151, 6, 11), (49152, 6, None), (80, 17, 12),
     (81, 17, None)],
)  # fmt: skip
def test_range_const_entries_behave(
    build: Builder, port: int, proto: int, result: int | None
) -> None:
    c = build("constructs/tables.p4")
    env = Env(c.json)
    env.set("h", "port", port)
    env.set("h", "proto", proto)
    env.set("h", "result", 0xCC)
    hit, _ = apply_table(c.table("MyIngress.t_range"), env)
    assert hit == (result is not None)
    assert env.get("h", "result") == (0xCC if result is None else result)


# ---- control flow --------------------------------------------------------------------------


def _cf_run(c: Compiled, installed: dict[str, Installed], **fields: int) -> Env:
    env = Env(c.json)
    env.valid["h"] = True
    for k, v in fields.items():
        env.set("h", k, v)
    run_pipeline(env, "ingress", installed)
    return env


def test_switch_on_action_run(build: Builder) -> None:
    c = build("constructs/control_flow.p4")
    first = _cf_run(c, {"MyIngress.choose": Installed("MyIngress.first", [5])}, a=1, b=1)
    assert first.get("h", "path") == 5 + 10 + 50
    second = _cf_run(c, {"MyIngress.choose": Installed("MyIngress.second")}, a=1, b=1)
    assert second.get("h", "path") == 2 + 20 + 50
    third = _cf_run(c, {}, a=1, b=1)  # default action third()
    assert third.get("h", "path") == 3 + 20 + 50


def test_hit_and_miss(build: Builder) -> None:
    c = build("constructs/control_flow.p4")
    hit = _cf_run(c, {"MyIngress.probe": Installed("NoAction")}, a=1, b=1)
    assert hit.get("h", "path") == 3 + 20 + 100
    assert "MyIngress.probe_again" not in hit.trace
    missed_both = _cf_run(c, {}, a=1, b=1)
    assert missed_both.get("h", "path") == 3 + 20 + 50
    second_hits = _cf_run(c, {"MyIngress.probe_again": Installed("NoAction")}, a=1, b=1)
    assert second_hits.get("h", "path") == 3 + 20


@pytest.mark.parametrize(("a", "b"), [(1, 2), (9, 3), (255, 0), (7, 7)])
def test_function_call(build: Builder, a: int, b: int) -> None:
    c = build("constructs/control_flow.p4")
    env = _cf_run(c, {}, a=a, b=b)
    assert env.get("h", "fn") == (max(a, b) + 1) % 256


def test_sub_control_and_return(build: Builder) -> None:
    c = build("constructs/control_flow.p4")
    env = _cf_run(c, {}, a=2, b=1)
    # local_var = 3 + a = 5 is passed as the tag; marks misses -> mark(0x55)
    assert env.get("h", "sub") == 0x55 + 5
    assert "MyIngress.marker.marks" in env.trace
    ret = _cf_run(c, {}, a=0, b=1)
    assert ret.get("h", "sub") == 0  # returned before touching h.sub
    assert "MyIngress.marker.marks" not in ret.trace


@pytest.mark.parametrize(("sel", "a", "b"), [(1, 0x12, 0x34), (0, 0x12, 0x34), (1, 0, 7)])
def test_sub_control_applied_more_than_once(build: Builder, sel: int, a: int, b: int) -> None:
    """A table-less sub-control instance applied three times: each application is
    inlined with its own arguments and a fresh copy of the local variable."""
    c = build("constructs/subcontrol_reapply.p4")
    env = _cf_run(c, {}, sel=sel, a=a, b=b)

    def packed(hi: int, lo: int) -> int:
        return (hi << 8) | ((lo + 1) % 256 if hi == 0 else lo)

    assert env.get("h", "packed") == (packed(a, b) if sel == 1 else packed(0xAB, a))
    assert env.get("h", "packed_again") == packed(0, b)


@pytest.mark.parametrize("x", [0, 5, 0xFFFA])
def test_direct_type_invocation(build: Builder, x: int) -> None:
    """`add_seven.apply(...)` twice: two anonymous instances inlined in order."""
    c = build("constructs/direct_invocation.p4")
    env = _cf_run(c, {}, x=x, y=0)
    assert env.get("h", "y") == (x + 14) % 0x10000
    tagged = _cf_run(c, {"MyIngress.tagger.tags": Installed("MyIngress.tagger.set_tag", [9])}, x=x)
    assert tagged.get("h", "tag") == 9


def test_direct_type_invocation_names(build: Builder) -> None:
    """The anonymous instance is named after the control type, like p4c's
    `@name("tagger") tagger() tagger_inst;`."""
    c = build("constructs/direct_invocation.p4")
    t = c.p4_table("MyIngress.tagger.tags")
    assert c.p4_table_action_names(t) == ["MyIngress.tagger.set_tag", "NoAction"]
    assert c.table("MyIngress.tagger.tags")["key"][0]["target"] == ["h", "x"]


def test_header_struct_fields_are_flattened(build: Builder) -> None:
    """Struct-typed header fields become header fields named like p4c's FlattenHeaders
    (`_<path>_<index>`, every field renamed), in layout order."""
    c = build("constructs/header_struct_fields.p4")
    (ht,) = [t for t in c.json["header_types"] if t["name"] == "q_h"]
    assert ht["fields"] == [
        ["_tag0", 8, False], ["_q_first_hi1", 4, False], ["_q_first_lo2", 4, False],
        ["_q_second_hi3", 4, False], ["_q_second_lo4", 4, False], ["_flag5", 1, False],
        ["_pad6", 7, False],
    ]  # fmt: skip


@pytest.mark.parametrize(("b_tag", "flag"), [(0, 0), (1, 1), (0x80, 1)])
def test_header_struct_fields_access(build: Builder, b_tag: int, flag: int) -> None:
    c = build("constructs/header_struct_fields.p4")
    env = Env(c.json)
    a = {"_tag0": 0x80, "_q_first_hi1": 3, "_q_first_lo2": 9, "_q_second_hi3": 5,
         "_q_second_lo4": 6, "_flag5": flag, "_pad6": 0}  # fmt: skip
    for h, tag in (("a", a["_tag0"]), ("b", b_tag)):
        env.valid[h] = True
        for f, v in a.items():
            env.set(h, f, v)
        env.set(h, "_tag0", tag)
    run_pipeline(env, "ingress")
    # header equality compares every flattened field
    assert env.get(*env.scalar_named("same")) == int(b_tag == 0x80)
    # struct copied out of a and into b
    assert env.get(*env.scalar_named("saved.hi")) == 5
    assert env.get(*env.scalar_named("saved.lo")) == 6
    assert (env.get("b", "_q_first_hi1"), env.get("b", "_q_first_lo2")) == (5, 6)
    # leaf read and write in a nested struct
    assert env.get("a", "_q_first_lo2") == 4
    assert env.get("a", "_tag0") == (1 if flag else 0x80)
    # st[0] = a is a whole-header copy; st[b.tag & 1].q.second.hi = 0xF by run-time index
    assert "assign_header" in env.calls
    idx = b_tag & 1
    assert env.get(f"st[{idx}]", "_q_second_hi3") == 0xF


@pytest.mark.parametrize(("x_a", "y_valid", "x_valid"), [(0, False, True), (1, True, True),
                                                      (2, True, False)])  # fmt: skip
def test_out_header_parameters_start_invalid(
    build: Builder, x_a: int, y_valid: bool, x_valid: bool
) -> None:
    c = build("constructs/out_header_params.p4")
    env = Env(c.json)
    env.valid["x"] = env.valid["y"] = True
    env.set("x", "a", x_a)
    env.set("y", "a", 0x11)
    run_pipeline(env, "ingress")
    assert env.valid["y"] is y_valid  # maker returned before writing its out header
    if y_valid:
        assert env.get("y", "a") == 0x5A
    assert env.valid["x"] is x_valid  # forget() never writes its out header


@pytest.mark.parametrize(("a", "c"), [(0x12, 0x1234), (0xF0, 0xFFFF), (0x00, 0x0000)])
def test_slices_as_out_and_inout_arguments(build: Builder, a: int, c: int) -> None:
    c_ = build("constructs/slice_arguments.p4")
    env = Env(c_.json)
    env.valid["h"] = True
    env.set("h", "a", a)
    env.set("h", "b", 0x5A)
    env.set("h", "c", c)
    env.set("h", "d", 0xAB)
    installed = {"MyIngress.t": Installed("MyIngress.set_low", [0x7])}
    run_pipeline(env, "ingress", installed)
    # bump(a[7:4]): only the high nibble changes, wrapping at 4 bits
    assert env.get("h", "a") == ((((a >> 4) + 1) & 0xF) << 4) | (a & 0xF)
    # b[3:0] = 9 through the function's out parameter, b[7:4] = its result 0xA
    assert env.get("h", "b") == 0xA9
    # the sub-control adds 3 to c[11:8]
    assert env.get("h", "c") == (c & ~0x0F00) | ((((c >> 8) + 3) & 0xF) << 8)
    # the table's action writes its bound out slice d[3:0]
    assert env.get("h", "d") == 0xA7


def test_exit(build: Builder) -> None:
    c = build("constructs/control_flow.p4")
    exited = _cf_run(c, {}, a=1, b=0xFF)
    assert exited.exited
    assert exited.get("h", "after_exit") == 0
    normal = _cf_run(c, {}, a=1, b=2)
    assert not normal.exited
    assert normal.get("h", "after_exit") == 1


def test_directional_action_parameter(build: Builder) -> None:
    c = build("constructs/control_flow.p4")
    env = _cf_run(c, {"MyIngress.directional": Installed("MyIngress.copy_into", [7])}, a=1, b=2)
    assert env.get("h", "dir") == 8
    env = _cf_run(c, {}, a=1, b=2)
    assert env.get("h", "dir") == 0
    # only the action-data parameter is visible to the control plane
    params = c.p4_action("MyIngress.copy_into").params
    assert [(p.id, p.name, p.bitwidth) for p in params] == [(1, "v", 8)]
    (json_action,) = [
        a for a in c.json["actions"]
        if a["id"] in c.table("MyIngress.directional")["action_ids"] and a["name"] != "NoAction"
    ]  # fmt: skip
    assert [(r["name"], r["bitwidth"]) for r in json_action["runtime_data"]] == [("v", 8)]


def test_control_flow_p4info_names(build: Builder) -> None:
    c = build("constructs/control_flow.p4")
    names = sorted(t.preamble.name for t in c.p4info.tables)
    assert names == [
        "MyIngress.choose",
        "MyIngress.directional",
        "MyIngress.marker.marks",
        "MyIngress.probe",
        "MyIngress.probe_again",
    ]
    assert c.p4_table("MyIngress.marker.marks").preamble.alias == "marks"
    assert c.p4_action("MyIngress.marker.mark").params[0].bitwidth == 8


# ---- externs -------------------------------------------------------------------------------


def _prims(c: Compiled, action: str, op: str) -> list[dict[str, Any]]:
    return [p for p in c.action(action)["primitives"] if p["op"] == op]


def test_register_read_write(build: Builder) -> None:
    c = build("constructs/externs.p4")
    reg = c.named("register_arrays", "MyIngress.flow_bytes")
    assert (reg["size"], reg["bitwidth"]) == (1024, 32)
    (read,) = _prims(c, "MyIngress.account", "register_read")
    assert read["parameters"][0]["type"] == "field"
    assert read["parameters"][1] == {"type": "register_array", "value": "MyIngress.flow_bytes"}
    (write,) = _prims(c, "MyIngress.account", "register_write")
    assert write["parameters"][0] == {"type": "register_array", "value": "MyIngress.flow_bytes"}
    p4 = c.p4_entity("registers", "MyIngress.flow_bytes")
    assert p4.size == 1024 and p4.type_spec.bitstring.bit.bitwidth == 32


def test_counters(build: Builder) -> None:
    c = build("constructs/externs.p4")
    units = {"port_packets": (512, "PACKETS"), "class_bytes": (128, "BYTES"),
             "both_stats": (64, "BOTH")}  # fmt: skip
    for name, (size, unit) in units.items():
        full = f"MyIngress.{name}"
        arr = c.named("counter_arrays", full)
        assert arr["size"] == size and arr["is_direct"] is False
        p4 = c.p4_entity("counters", full)
        assert p4.size == size
        assert p4.spec.unit == p4info_pb2.CounterSpec.Unit.Value(unit)
        assert p4.preamble.id >> 24 == 0x12
    counted = {p["parameters"][0]["value"] for p in _prims(c, "MyIngress.account", "count")}
    assert counted == {f"MyIngress.{n}" for n in units}
    (class_count,) = [
        p for p in _prims(c, "MyIngress.account", "count")
        if p["parameters"][0]["value"] == "MyIngress.class_bytes"
    ]  # fmt: skip
    assert evaluate(class_count["parameters"][1], Env(c.json)) == 7


def test_meters(build: Builder) -> None:
    c = build("constructs/externs.p4")
    for name, size, kind in (("rate_limiter", 256, "packets"), ("byte_limiter", 32, "bytes")):
        arr = c.named("meter_arrays", f"MyIngress.{name}")
        assert (arr["size"], arr["type"], arr["is_direct"], arr["rate_count"]) == (
            size, kind, False, 2,
        )  # fmt: skip
        p4 = c.p4_entity("meters", f"MyIngress.{name}")
        assert p4.size == size
        assert p4.spec.unit == p4info_pb2.MeterSpec.Unit.Value(kind.upper())
        assert p4.preamble.id >> 24 == 0x14
    execs = _prims(c, "MyIngress.police", "execute_meter")
    assert {p["parameters"][0]["value"] for p in execs} == {
        "MyIngress.rate_limiter",
        "MyIngress.byte_limiter",
    }
    for p in execs:
        assert p["parameters"][0]["type"] == "meter_array"
        assert p["parameters"][2] == {"type": "field", "value": ["h", "color"]}


def test_hash_algorithms_and_random(build: Builder) -> None:
    c = build("constructs/externs.p4")
    hashes = _prims(c, "MyIngress.hashing", "modify_field_with_hash_based_offset")
    by_dest = {p["parameters"][0]["value"][1]: p["parameters"] for p in hashes}
    algos = {d: c.named("calculations", p[2]["value"])["algo"] for d, p in by_dest.items()}
    assert algos == {
        "hashed_crc32": "crc32",
        "hashed_crc16": "crc16",
        "hashed_identity": "identity",
    }
    assert hexval(by_dest["hashed_crc16"][1]["value"]) == 100
    assert hexval(by_dest["hashed_crc16"][3]["value"]) == 1000
    assert hexval(by_dest["hashed_crc32"][3]["value"]) == 0xFFFFFFFF
    inputs = c.named("calculations", by_dest["hashed_crc32"][2]["value"])["input"]
    assert [i["value"] for i in inputs] == [["h", "key"], ["h", "idx"]]
    (rnd,) = _prims(c, "MyIngress.hashing", "modify_field_rng_uniform")
    assert rnd["parameters"][0]["value"] == ["h", "rnd"]
    assert [hexval(p["value"]) for p in rnd["parameters"][1:]] == [10, 20]


def test_log_assert_assume(build: Builder) -> None:
    c = build("constructs/externs.p4")
    logs = _prims(c, "MyIngress.diagnostics", "log_msg")
    assert [p["parameters"][0] for p in logs] == [
        {"type": "string", "value": "plain message"},
        {"type": "string", "value": "key={} idx={}"},
    ]
    assert logs[1]["parameters"][1]["type"] == "parameters_vector"
    assert [v["value"] for v in logs[1]["parameters"][1]["value"]] == [["h", "key"], ["h", "idx"]]
    # the condition may be a boolean or (as p4c writes it) b2d of one
    (asrt,) = _prims(c, "MyIngress.diagnostics", "assert")
    env = Env(c.json)
    env.set("h", "idx", 0xFFFF)
    assert not evaluate(asrt["parameters"][0], env)
    env.set("h", "idx", 3)
    assert evaluate(asrt["parameters"][0], env)
    (assume,) = _prims(c, "MyIngress.diagnostics", "assume")
    assert not evaluate(assume["parameters"][0], env)  # key == 0
    env.set("h", "key", 1)
    assert evaluate(assume["parameters"][0], env)


def test_truncate_and_mark_to_drop(build: Builder) -> None:
    c = build("constructs/externs.p4")
    env = Env(c.json)
    env.valid["h"] = True
    run_pipeline(env, "egress")
    assert "truncate" in env.calls
    (trunc,) = [p for p in c.all_primitives() if p["op"] == "truncate"]
    assert hexval(trunc["parameters"][0]["value"]) == 64
    env = Env(c.json)
    env.valid["h"] = True
    env.set("h", "key", 1)
    run_pipeline(env, "egress")
    assert "truncate" not in env.calls


def test_atomic_block_keeps_register_order(build: Builder) -> None:
    c = build("constructs/externs.p4")
    ops = c.primitive_ops(c.action("MyIngress.account"))
    assert ops.index("register_read") < ops.index("register_write")


# ---- checksums -----------------------------------------------------------------------------


def test_checksums_with_payload(build: Builder) -> None:
    c = build("constructs/checksums.p4")
    sums = c.json["checksums"]
    assert len(sums) == 4
    udp = [s for s in sums if s["target"] == ["udp", "checksum"]]
    ipv4 = [s for s in sums if s["target"] == ["ipv4", "hdrChecksum"]]
    assert len(udp) == 2 and len(ipv4) == 2
    for s in udp:
        calc = c.named("calculations", s["calculation"])
        assert calc["algo"] == "csum16"
        assert calc["input"][-1]["type"] == "payload"
        first = calc["input"][:3]
        assert [i.get("value") for i in first[:2]] == [["ipv4", "srcAddr"], ["ipv4", "dstAddr"]]
        assert first[2]["type"] == "hexstr" and first[2]["bitwidth"] == 8
        env = Env(c.json)
        assert evaluate(s["if_cond"], env) is False
        env.valid["udp"] = True
        assert evaluate(s["if_cond"], env) is True
    for s in ipv4:
        calc = c.named("calculations", s["calculation"])
        assert all(i["type"] != "payload" for i in calc["input"])
    assert sorted((s.get("verify", True), s.get("update", True)) for s in udp) == [
        (False, True),
        (True, False),
    ]


def test_checksum_control_applied_directly(build: Builder) -> None:
    """`ipv4_checksum.apply(hdr.outer)` in the checksum block inlines that control's
    update_checksum, once per application with its own header."""
    c = build("constructs/checksum_subcontrol.p4")
    sums = c.json["checksums"]
    assert sorted(s["target"][0] for s in sums) == ["inner", "outer"]
    for s in sums:
        h = s["target"][0]
        assert s["target"] == [h, "hdrChecksum"]
        calc = c.named("calculations", s["calculation"])
        assert calc["algo"] == "csum16"
        assert [i["value"][0] for i in calc["input"]] == [h] * 11
        env = Env(c.json)
        env.set("inner", "ttl", 1)
        assert evaluate(s["if_cond"], env) is False
        env.valid[h] = True
        assert evaluate(s["if_cond"], env) is True
        if h == "outer":  # `in bool on` bound to `hdr.inner.ttl != 0`
            env.set("inner", "ttl", 0)
            assert evaluate(s["if_cond"], env) is False


def test_max_group_size_is_a_p4info_field(build: Builder) -> None:
    c = build("constructs/checksum_subcontrol.p4")
    sel = c.p4_entity("action_profiles", "MyIngress.spread")
    assert sel.with_selector and sel.size == 64
    assert sel.max_group_size == 4
    assert not any("max_group_size" in a for a in sel.preamble.annotations)


def test_checksum_error_is_read_in_ingress(build: Builder) -> None:
    c = build("constructs/checksums.p4")
    env = Env(c.json)
    env.valid["ipv4"] = True
    env.set("standard_metadata", "checksum_error", 1)
    run_pipeline(env, "ingress")
    assert "mark_to_drop" in env.calls
    env = Env(c.json)
    env.valid["ipv4"] = True
    env.set("ipv4", "ttl", 3)
    run_pipeline(env, "ingress")
    assert env.get("ipv4", "ttl") == 2


# ---- annotations and validity --------------------------------------------------------------


def test_name_annotations(build: Builder) -> None:
    c = build("constructs/annotations.p4")
    tables = {t.preamble.name for t in c.p4info.tables}
    assert tables == {"MyIngress.with_id", "MyIngress.friendly_table", "top_level_table"}
    assert "MyIngress.friendly_table" in c.all_tables()
    assert "top_level_table" in c.all_tables()
    actions = {a.preamble.name for a in c.p4info.actions}
    assert {"MyIngress.renamed_action", "global_action", "MyIngress.set_y"} <= actions
    assert c.p4_action("global_action").preamble.alias == "global_action"
    key = c.p4_table("MyIngress.friendly_table").match_fields[0]
    assert (key.name, key.bitwidth) == ("x_key", 16)
    assert c.p4_entity("registers", "MyIngress.flow_state").size == 8
    assert c.named("register_arrays", "MyIngress.flow_state")["bitwidth"] == 16


def test_id_annotations(build: Builder) -> None:
    c = build("constructs/annotations.p4")
    assert c.p4_table("MyIngress.with_id").preamble.id == 0x02000202
    assert c.p4_action("MyIngress.set_y").preamble.id == 0x01000101
    assert c.p4_entity("counters", "MyIngress.hits").preamble.id == 0x12000042
    assert c.p4_entity("registers", "MyIngress.flow_state").preamble.id == 0x16000099


def test_hidden_table(build: Builder) -> None:
    c = build("constructs/annotations.p4")
    assert "MyIngress.invisible" not in {t.preamble.name for t in c.p4info.tables}
    assert any(name.endswith("invisible") for name in c.all_tables())


def test_validity_builtins(build: Builder) -> None:
    c = build("constructs/annotations.p4")
    add = c.action("MyIngress.add_b")["primitives"]
    assert add[0]["op"] == "add_header"
    assert add[0]["parameters"] == [{"type": "header", "value": "b"}]
    rem = c.action("MyIngress.remove_a")["primitives"]
    assert rem[0]["op"] == "remove_header"
    assert rem[0]["parameters"] == [{"type": "header", "value": "a"}]
    env = Env(c.json)
    env.valid["b"] = True
    run_pipeline(env, "ingress")
    assert any(n.endswith("invisible") for n in env.trace)
    assert env.valid["a"] is False
    env = Env(c.json)
    env.valid.update(a=True, b=True)
    run_pipeline(env, "ingress")
    assert not any(n.endswith("invisible") for n in env.trace)


# ---- action profiles and selectors ---------------------------------------------------------


def test_action_selector_table(build: Builder) -> None:
    c = build("constructs/action_profiles.p4")
    t = c.table("MyIngress.ecmp")
    assert t["type"] == "indirect_ws"
    assert t["action_profile"] == "MyIngress.ecmp_selector"
    # selector fields feed the hash; they are not part of the match key
    assert [k["target"] for k in t["key"]] == [["ipv4", "dstAddr"]]
    assert t["match_type"] == "lpm"
    (prof,) = [
        p for p in c.pipeline("ingress")["action_profiles"] if p["name"] == t["action_profile"]
    ]
    assert prof["max_size"] == 128
    assert prof["selector"]["algo"] == "crc16"
    assert [i["value"] for i in prof["selector"]["input"]] == [
        ["ipv4", "srcAddr"], ["ipv4", "protocol"], ["l4", "srcPort"], ["l4", "dstPort"],
    ]  # fmt: skip


def test_action_profile_table(build: Builder) -> None:
    c = build("constructs/action_profiles.p4")
    t = c.table("MyIngress.rewrite")
    assert t["type"] == "indirect"
    assert t["action_profile"] == "MyIngress.nexthops"
    (prof,) = [
        p for p in c.pipeline("ingress")["action_profiles"] if p["name"] == t["action_profile"]
    ]
    assert prof["max_size"] == 64
    assert "selector" not in prof


def test_action_profiles_constructed_in_the_table(build: Builder) -> None:
    """`implementation = action_profile(N)` creates an instance named like p4c names it:
    the property's @name as written, else "implementation" (no control prefix)."""
    c = build("constructs/inline_profiles.p4")
    profiles = {p["name"]: p for p in c.pipeline("ingress")["action_profiles"]}
    assert sorted(profiles) == ["flow_selector", "implementation"]
    by_dst = c.table("MyIngress.by_dst")
    assert (by_dst["type"], by_dst["action_profile"]) == ("indirect", "implementation")
    assert profiles["implementation"]["max_size"] == 32
    assert "selector" not in profiles["implementation"]
    balanced = c.table("MyIngress.balanced")
    assert (balanced["type"], balanced["action_profile"]) == ("indirect_ws", "flow_selector")
    sel = profiles["flow_selector"]
    assert sel["max_size"] == 64
    assert sel["selector"]["algo"] == "crc16"
    assert [i["value"] for i in sel["selector"]["input"]] == [["h", "flow"]]
    for table, name, with_selector, size in (
        ("MyIngress.by_dst", "implementation", False, 32),
        ("MyIngress.balanced", "flow_selector", True, 64),
    ):
        t = c.p4_table(table)
        prof = c.p4_entity("action_profiles", name)
        assert prof.preamble.id >> 24 == 0x11
        assert (prof.with_selector, prof.size) == (with_selector, size)
        assert t.implementation_id == prof.preamble.id
        assert list(prof.table_ids) == [t.preamble.id]


def test_action_profiles_p4info(build: Builder) -> None:
    c = build("constructs/action_profiles.p4")
    ecmp = c.p4_table("MyIngress.ecmp")
    sel = c.p4_entity("action_profiles", "MyIngress.ecmp_selector")
    assert sel.preamble.id >> 24 == 0x11
    assert sel.with_selector
    assert sel.size == 128
    assert list(sel.table_ids) == [ecmp.preamble.id]
    assert ecmp.implementation_id == sel.preamble.id
    assert [(m.name, m.match_type) for m in ecmp.match_fields] == [("hdr.ipv4.dstAddr", MT.LPM)]
    assert ecmp.size == 256
    rewrite = c.p4_table("MyIngress.rewrite")
    prof = c.p4_entity("action_profiles", "MyIngress.nexthops")
    assert not prof.with_selector
    assert prof.size == 64
    assert rewrite.implementation_id == prof.preamble.id
    assert list(prof.table_ids) == [rewrite.preamble.id]
