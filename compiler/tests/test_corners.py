"""P4 corners where ratelab-p4c once differed from p4c + BMv2 (issue 13): each program
under programs/corners/ is compiled and run on ratelab's engine, packets in and
packets out. The expected bytes are worked out by hand from the P4_16 specification
and BMv2's documented semantics, in the comments next to them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.builder import Builder
from support.integrity import check_bmv2_json
from support.runner import PROGRAMS_DIR, compile_file

ratelab_engine = pytest.importorskip("ratelab_engine")


def engine_for(build: Builder, rel: str) -> Any:
    return ratelab_engine.Switch(json.dumps(build(rel).json).encode())


def forward(build: Builder, rel: str, frame: bytes, port: int = 1) -> list[tuple[int, bytes]]:
    """(egress port, bytes) of every packet the program sends for one frame."""
    out = engine_for(build, rel).process([(port, frame)], 10)
    return [(p, bytes(data)) for p, data, *_ in out]


def one_packet(build: Builder, rel: str, frame: bytes) -> bytes:
    [(port, data)] = forward(build, rel, frame)
    assert port == 2
    return data


# ---- compound assignment ----------------------------------------------------------------


def test_compound_assignment_operators(build: Builder) -> None:
    frame = bytes(
        [
            0x10,  # add  += 3          -> 0x13
            0x10,  # sub  -= 0x20       -> 0xf0 (wraps)
            0x56,  # mul  *= 3          -> 0x02 (0x102 & 0xff)
            0xAB,  # and_ &= 0x0f       -> 0x0b
            0x01,  # or_  |= 0x80       -> 0x81
            0x0F,  # xor_ ^= 0xff       -> 0xf0
            0x21,  # shl  <<= 3         -> 0x08 (0x108 & 0xff)
            0x81,  # shr  >>= 2         -> 0x20
            0x90,  # sadd |+|= 0x80     -> 0xff (saturates)
            0x10,  # ssub |-|= 0x80     -> 0x00 (saturates)
            0xF3,  # slice[7:4] += 1    -> 0x03 (the nibble wraps, the low one stays)
            0x05,  # local: x += x; x *= 2 -> 0x14
            0x84,  # int<8> -124 >>= 1  -> -62 = 0xc2 (arithmetic shift)
            0x00,  # calls: the index call runs once -> 1
            0x01,  # s[0]
            0x02,  # s[1] += 0x10 (index 1) -> 0x12
            0x03,  # s[2]
        ]
    )
    out = one_packet(build, "corners/compound_assign.p4", frame)
    assert out.hex() == "13f0020b81f00820ff000314c201011203"


# ---- header equality ----------------------------------------------------------------------


def _ops(node: Any) -> set[str]:
    """The operators of a JSON expression tree."""
    if not isinstance(node, dict):
        return set()
    found: set[str] = set()
    if node.get("type") == "expression":
        value = node["value"]
        found.add(value["op"])
        for part in ("left", "right", "cond"):
            found |= _ops(value.get(part))
    return found


@pytest.mark.parametrize(
    ("frame", "result"),
    [
        # x = y = 0102, z = 0103, s[0] = t[0] = 0102: everything equal but x/z and the
        # pairs {x, y} / {x, z}: bits 1 1 1 0 1 1 1 1.
        ("00 0102 0102 0103 0102 0102", 0xEF),
        # x = y = z = 0102, t[0] = 0103: x != z false, pairs equal, stacks differ.
        ("00 0102 0102 0102 0102 0103", 0xBB),
    ],
)
def test_header_equality(build: Builder, frame: str, result: int) -> None:
    out = one_packet(build, "corners/header_equality.p4", bytes.fromhex(frame))
    assert out[0] == result
    assert out[1] == 0xEE  # `if (hdr.x == hdr.y)` took its branch
    assert out[2:] == bytes.fromhex(frame)[2:]


def test_header_equality_is_validity_and_fields(build: Builder) -> None:
    """As p4c lowers it: (both invalid) or (both valid and each field equal), with no
    arithmetic on the fields, for BMv2 to load (fields of a varbit too)."""
    c = build("corners/header_equality_varbit.p4")
    [cond] = c.pipeline("ingress")["conditionals"]
    expr = cond["expression"]
    assert _ops(expr) == {"or", "and", "not", "d2b", "=="}
    text = json.dumps(expr)
    assert '["p", "data"]' in text and '["q", "data"]' in text
    assert '["p", "$valid$"]' in text and '["q", "$valid$"]' in text


# ---- copy-in / copy-out -------------------------------------------------------------------


def test_copy_in_copy_out(build: Builder) -> None:
    frame = bytes.fromhex("11220304050607080900")
    out = one_packet(build, "corners/copy_in_out.p4", frame)
    # touch(hdr.x): p.a = 1; hdr.x.a = 2; p.b = hdr.x.a (2); copy-out x = p = 01 02.
    assert out[0:2].hex() == "0102"
    # twice(y.a, y.a): a = 3 + 1, b = 3 + 10, copied out left to right: 0x0d.
    # add_to(y.b, increment(y.b)): acc = 4 (copied in first), n = 5: y.b = 9.
    assert out[2:4].hex() == "0d09"
    # rebuilder.apply(z, z): `from` is z (05 06), `o` a fresh invalid header: 06 06.
    assert out[4:6].hex() == "0606"
    # set_element(s[meta.i]) with meta.i = 0 at the call: s[0].a = 0x77, s[1] unchanged;
    # then shrink(s.last): pop_front moves s[1] (09 00) to s[0], and the copy-out of
    # p (09 99) goes to s[1], last at the call.
    assert out[6:].hex() == "09000999"


# ---- order of side effects ----------------------------------------------------------------


def test_side_effects_left_to_right(build: Builder) -> None:
    # h: sum same concat(2) and_skip or_skip cond_then t e idx a b reg; s[0] s[1]
    frame = bytes.fromhex("00 00 0000 00 00 00 10 20 0a 0b 00 00aa bb")
    out = one_packet(build, "corners/side_effect_order.p4", frame)
    assert out[0] == 0x0B  # v + bump(v): 5 read before bump makes it 6
    assert out[1] == 0x00  # v == bump(v): 5 == 6
    assert out[2:4].hex() == "0506"  # v ++ bump(v)
    assert out[4] == 0x07  # `and_skip == 1 && bump(w) > 0`: bump skipped, w = 7
    assert out[5] == 0x0C  # `or_skip == 0 || bump(w2) > 0`: bump skipped, 3 + 9
    assert out[6:9].hex() == "111120"  # `?:` ran bump(t) only: t = 0x11, e = 0x20
    assert out[9] == 0x01  # s[i] = set_index(i): the target taken with i = 0 ...
    assert out[13:].hex() == "55bb"  # ... so s[0] = 0x55, s[1] unchanged
    assert out[10:12].hex() == "000b"  # h = {..., h.b, h.a, ...} swapped a and b
    assert out[12] == 0x03  # r.write(i, bump(i)) wrote at the old i (2) the value 3


# ---- parser errors ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("frame", "code"),
    [
        ("0108aabb", 0),  # an 8-bit varbit: NoError
        ("0240aabbccddeeff0011", 4),  # 64 bits into varbit<32>: HeaderTooShort
        ("03000102", 3),  # a third element into a 2-element stack: StackOutOfBounds
        ("0400aabb", 1),  # a 32-bit header from 2 bytes: PacketTooShort
        ("0500", 2),  # no select case: NoMatch
        ("0601", 7),  # verify(false, error.Custom): the first program error, 7
        ("070c0102", 6),  # advance(12): not whole bytes, ParserInvalidArgument
        ("0800", 0),
    ],
)
def test_parser_error_values(build: Builder, frame: str, code: int) -> None:
    out = one_packet(build, "corners/parser_errors.p4", bytes.fromhex(frame))
    assert out[0] == code


def test_errors_list_and_varbit_length(build: Builder) -> None:
    c = build("corners/parser_errors.p4")
    # p4c's order, which fixes the values BMv2 gives its own errors: core.p4 first.
    assert c.json["errors"] == [
        ["NoError", 0], ["PacketTooShort", 1], ["NoMatch", 2], ["StackOutOfBounds", 3],
        ["HeaderTooShort", 4], ["ParserTimeout", 5], ["ParserInvalidArgument", 6],
        ["Custom", 7],
    ]  # fmt: skip
    # BMv2 reads extract_VL's length only from an `expression` parameter.
    [op] = [o for o in c.parse_state("varbit_len")["parser_ops"] if o["op"] == "extract_VL"]
    assert op["parameters"][1] == {
        "type": "expression",
        "value": {"type": "field", "value": ["sel", "len"]},
    }


# ---- for loops ----------------------------------------------------------------------------


def test_for_loops_unrolled(build: Builder) -> None:
    out = one_packet(build, "corners/for_loops.p4", bytes(8) + bytes([3, 5, 0, 7]))
    assert out[0] == 3 + 5 + 0 + 7  # for (i in 0 .. 3): both ends included
    assert out[1] == 4  # for (i = 0; i < 8; i = i + 2)
    assert out[2] == 1 + 2 + 5  # for (x in {1, 2, s[1].v})
    assert out[3] == 2  # break at the first zero element
    assert out[4] == 3 + 5 + 7  # continue past the even ones
    assert out[5] == 1 + 2 + 3  # triangle(3): the function's loop breaks at k = 4
    assert out[6] == 5  # a variable declared outside keeps the loop's last value
    assert out[7] == 3 + 5 + 0 + 7  # for (elem_t e in hdr.s): every element valid


PRELUDE = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; }
struct headers { h_t h; }
struct metadata { }
parser P(packet_in pkt, out headers hdr, inout metadata meta,
         inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control EG(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
control IG(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
"""
MAIN = "V1Switch(P(), VC(), IG(), EG(), CC(), D()) main;\n"


def compile_error(tmp_path: Path, ingress: str) -> str:
    """The one-line error for a program whose ingress body is `ingress`."""
    return compile_error_text(tmp_path, PRELUDE + ingress + "\n}\n" + MAIN)


def compile_error_text(tmp_path: Path, text: str) -> str:
    """The one-line error for a whole program."""
    src = tmp_path / "prog.p4"
    src.write_text(text)
    result = compile_file(src, tmp_path / "out")
    assert result.returncode == 1, result.describe()
    assert "Traceback" not in result.stderr
    first = result.stderr.splitlines()[0]
    assert first.startswith(f"{src}:"), first
    return first


@pytest.mark.parametrize(
    ("ingress", "words"),
    [
        (
            "apply { for (bit<8> i = 0; i < hdr.h.a; i = i + 1) { sm.egress_spec = 1; } }",
            ("cannot be unrolled", "compile time"),
        ),
        (
            "apply { for (bit<8> i in 0 .. 3) { i = 2; } }",
            ("cannot be unrolled", "assigns the loop variable"),
        ),
        (
            "apply { for (bit<8> i in 0 .. 3) { if (hdr.h.a == i) { break; } } }",
            ("`break`", "actions and functions"),
        ),
        ("apply { for (bit<32> i = 0; true; i = i + 1) { } }", ("more than 1024",)),
        ("apply { break; }", ("outside a for loop",)),
    ],
)
def test_for_loops_that_cannot_be_unrolled(tmp_path: Path, ingress: str, words: tuple) -> None:
    line = compile_error(tmp_path, ingress)
    for w in words:
        assert w in line, line


# ---- constants of struct type -------------------------------------------------------------


def test_struct_constants_as_values(build: Builder) -> None:
    out = one_packet(build, "corners/struct_constants.p4", bytes(5))
    assert out.hex() == "03070b3407"  # 1+2, 3+4, 5+6, 0x34, 1 + 2 + 4 (every comparison)


# ---- `_` as an out argument; masks on enum keys -------------------------------------------


def test_dont_care_out_arguments(build: Builder) -> None:
    out = one_packet(build, "corners/dont_care_out.p4", bytes.fromhex("aabbccddeeff"))
    # two(h.a, _) -> a = 1; two(_, h.b) -> b = 2; mark.apply(_, h) -> c = 0x66; g kept.
    assert out.hex() == "010266ddeeff"


@pytest.mark.parametrize(
    ("kind", "result"),
    [(0x11, 0x44), (0xF2, 0x44), (0x01, 0x55), (0x02, 0x77), (0x03, 0x66)],
)
def test_masks_on_an_enum_key(build: Builder, kind: int, result: int) -> None:
    out = one_packet(build, "corners/enum_masks.p4", bytes([kind, 0]))
    assert out == bytes([kind, result])


# ---- header unions --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("frame", "expected"),
    [
        # opts[0].s only: opts[1] invalid (0xbb), members: opts[0].s and opts[0] valid.
        ("00000177", "bb110177"),
        # opts[0].s and opts[1].l: 0xaa, members 0x19, opts[1].l.v incremented.
        ("0000027712ff", "aa1902771300"),
        ("0000097766", "bb00097766"),
    ],
)
def test_union_stack_and_union_validity_key(build: Builder, frame: str, expected: str) -> None:
    out = one_packet(build, "corners/header_unions.p4", bytes.fromhex(frame))
    assert out.hex() == expected.replace(" ", "")


@pytest.mark.parametrize(
    ("frame", "expected"),
    [
        # cmd (op, idx), then options: tag 1 + short, tag 2 + long, tag 0 ends (the tag is
        # metadata, not emitted), payload ee. Out: cmd, report (lastIndex, validity bits of
        # us[idx]: the element, its s member), us[0..2] (s, l), saved[0..2], payload.
        # op 0, idx 1: us = [s 11, l 2233]; us[1].l is valid, so it becomes 2234.
        # lastIndex 1; us[1] valid, its s not: 01.
        ("0001011102223300ee", "00010101112234ee"),
        # op 1 (push_front(1)), idx 0: us = [-, s 11, l 2233] (nextIndex 3, lastIndex 2);
        # us[0] is invalid after the push.
        ("0100011102223300ee", "01000200112233ee"),
        # op 2 (pop_front(1)), idx 0: us = [l 2233] (lastIndex 0); us[0] valid, s not.
        ("0200011102223300ee", "020000012233ee"),
        # A short option 0xff ends the list (select on us.last.s.v): the rest is payload.
        # us = [s ff]: lastIndex 0, us[0] and its s valid: 03.
        ("000001ff022233", "00000003ff022233"),
        # op 3, idx 1: us[1].l becomes 2234, saved = us = [s 11, l 2234, s 44], then
        # us.pop_front(2) leaves us = [s 44] (lastIndex 0; us[1] invalid). saved keeps all.
        (
            "03010111022233014400ee",
            "030100004411223444ee",
        ),
    ],
)
def test_union_stack_next_last_index_push_pop_and_copy(
    build: Builder, frame: str, expected: str
) -> None:
    out = one_packet(build, "corners/union_stacks.p4", bytes.fromhex(frame))
    assert out.hex() == expected


def test_union_stacks_are_header_union_stacks_in_the_json(build: Builder) -> None:
    # As p4c: one header_union_stacks entry per stack of unions, elements in order.
    prog = build("corners/union_stacks.p4").json
    stacks = {s["name"]: s for s in prog["header_union_stacks"]}
    assert set(stacks) == {"us", "saved"}
    names = {u["id"]: u["name"] for u in prog["header_unions"]}
    assert [names[i] for i in stacks["us"]["header_union_ids"]] == ["us[0]", "us[1]", "us[2]"]
    assert stacks["us"]["union_type"] == "opt_t" and stacks["us"]["size"] == 3


UNION_STACK_LOOP = """
#include <core.p4>
#include <v1model.p4>
header a_t { bit<8> v; }
header_union u_t { a_t a; }
struct headers { u_t[2] us; a_t o; }
struct metadata { }
parser P(packet_in pkt, out headers hdr, inout metadata meta,
         inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.us.next.a); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control IG(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action count() { for (u_t x in hdr.us) { hdr.o.v = hdr.o.v + 1; } }
    apply { count(); }
}
control EG(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
"""


def test_a_loop_over_a_union_stack_is_refused(tmp_path: Path) -> None:
    line = compile_error_text(tmp_path, UNION_STACK_LOOP + MAIN)
    assert "prog.p4:14:36:" in line and "stack of header unions is not supported" in line, line


# ---- signed stack index -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("frame", "expected"),
    [
        ("01010203", "01031203"),  # s[1] += 0x10, then s[0] = s[2]
        ("02010203", "02130213"),  # s[2] += 0x10 (0x13), then s[0] = s[2]
    ],
)
def test_signed_stack_index(build: Builder, frame: str, expected: str) -> None:
    out = one_packet(build, "corners/signed_stack_index.p4", bytes.fromhex(frame))
    assert out.hex() == expected


# ---- lookahead of wide, header, struct and bool types -------------------------------------


def test_lookahead_types(build: Builder) -> None:
    rest = "d5667788990011223344556677889900aabb"  # 18 bytes: room for 128 bits
    out = one_packet(build, "corners/lookahead_types.p4", bytes.fromhex("11223344" + rest))
    # h.d = the struct's y[7:0] (0x33); h's lookahead field b is 0x66; the 128-bit
    # lookahead starts with 0xd5, whose first bit makes the bool true: g.a = 1.
    assert out.hex() == "11223333" + "01" + rest[2:]


# ---- varbit variables ---------------------------------------------------------------------


def test_varbit_local_and_argument(build: Builder) -> None:
    out = one_packet(build, "corners/varbit_local.p4", bytes.fromhex("03aabbccff"))
    # src (3 bytes) copied through a local into `copy`, and through a function's `in`
    # parameter into `copy2`; the payload byte 0xff follows.
    assert out.hex() == "03" + "aabbcc" * 3 + "ff"


# ---- every program's JSON is whole ----------------------------------------------------------

CORNERS = sorted(f"corners/{p.name}" for p in (PROGRAMS_DIR / "corners").glob("*.p4"))


@pytest.mark.parametrize("program", CORNERS)
def test_json_references_resolve(build: Builder, program: str) -> None:
    """Every field a JSON names is in its header's type (or is `$valid$`), every id and
    name resolves: what BMv2's loader checks."""
    assert check_bmv2_json(build(program).json) == []


# ---- slices of slices -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("frame", "expected"),
    [
        # a[5:4] = 3; b[5:3] += 1 (0xe0 -> 0xe8); c[7:6] inverted (0x40 -> 0x80); the key
        # d[5:4] = 3 hits 0x33; s[1].v[3:0] = 0xf; s[i = 0].v[7:4] |+|= 8: 0x10 -> 0x90.
        ("00e04030000110f0", "30e88030003390ff"),
        # d[5:4] = 2 hits 0x22; at i = 1, s[1] = 0xf0 -> 0xff, then 0xf |+| 8 saturates.
        ("00e04020010010f0", "30e88020012210ff"),
    ],
)
def test_nested_slices(build: Builder, frame: str, expected: str) -> None:
    out = one_packet(build, "corners/nested_slices.p4", bytes.fromhex(frame))
    assert out.hex() == expected


def test_slices_as_extern_out_arguments(build: Builder) -> None:
    out = one_packet(build, "corners/extern_out_slices.p4", bytes.fromhex("1183"))
    # r.read(a[7:4], 1) after r.write(1, 0xa): 0x11 -> 0xa1; random(b[5:2], 5, 5):
    # 0x83 = 10 0000 11 -> 10 0101 11 = 0x97.
    assert out.hex() == "a197"


def test_for_over_a_stack_sees_validity(build: Builder) -> None:
    # Two elements only: s[2] and s[3] are invalid and left out of the sum.
    out = one_packet(build, "corners/for_loops.p4", bytes(8) + bytes([3, 5]))
    assert out[7] == 3 + 5


PARSER_CALL = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; }
struct headers { h_t h; }
struct metadata { bit<8> m; }
bit<8> bump(inout bit<8> v) { v = v + 1; return v; }
parser P(packet_in pkt, out headers hdr, inout metadata meta,
         inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        bool b = hdr.h.a == 1 && bump(meta.m) == 2;
        transition accept;
    }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control IG(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control EG(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
"""


def test_a_conditional_call_in_a_parser_is_refused(tmp_path: Path) -> None:
    line = compile_error_text(tmp_path, PARSER_CALL + MAIN)
    assert "cannot be evaluated conditionally" in line, line
