"""Constant folding with P4 width semantics (wraparound, signed, saturating, slices)."""

from __future__ import annotations

import pytest
from frontend_helpers import check, error_of, find
from ratelab_p4c import consteval
from ratelab_p4c import types as T


def fold(type_text: str, expr: str, prelude: str = "") -> object:
    p = check(prelude + f"const {type_text} X = {expr};")
    return find(p, "X").value.const_value


@pytest.mark.parametrize(
    ("type_text", "expr", "value"),
    [
        ("bit<8>", "8w200 + 8w100", 44),
        ("bit<8>", "8w5 - 8w10", 251),
        ("bit<8>", "8w16 * 8w17", 16),
        ("bit<8>", "8w200 |+| 8w100", 255),
        ("bit<8>", "8w5 |-| 8w10", 0),
        ("int<8>", "8s100 |+| 8s100", 127),
        ("int<8>", "-8s100 |-| 8s100", -128),
        ("int<8>", "8s127 + 8s1", -128),
        ("int<8>", "-8s128", -128),
        ("int<8>", "8s0 - 8s1", -1),
        ("int<8>", "8s255", -1),
        ("bit<8>", "~8w0x0F", 0xF0),
        ("int<8>", "~8s0", -1),
        ("bit<8>", "8w1 << 7", 128),
        ("bit<8>", "8w1 << 8", 0),
        ("bit<8>", "8w0x80 >> 3", 0x10),
        ("int<8>", "-8s16 >> 2", -4),
        ("bit<8>", "8w0xF0 & 8w0x3C | 8w1 ^ 8w3", 0x32),
        ("bit<16>", "8w0xAB ++ 8w0xCD", 0xABCD),
        ("bit<12>", "4w0xF ++ 8w0x01", 0xF01),
        ("bit<4>", "16w0xABCD[11:8]", 0xB),
        ("bit<8>", "(bit<8>) 16w0x1234", 0x34),
        ("bit<16>", "(bit<16>) 8w0xFF", 0xFF),
        ("int<16>", "(int<16>) -8s1", -1),
        ("bit<8>", "(bit<8>) -8s1", 255),
        ("bit<8>", "(bit<8>) 300", 44),
        ("bit<8>", "100 + 200", 44),
        ("int", "2 ** 0 + 7 / 2 * 2 + 7 % 4", None),
        ("bit<32>", "1 << 31", 1 << 31),
        ("bit<8>", "true ? 8w1 : 8w2", 1),
        ("bit<8>", "false ? 1 : 2", 2),
        ("bool", "8w3 < 8w4 && 8w3 != 8w3 || !false", True),
        ("bool", "(bool) 1w1", True),
        ("bit<1>", "(bit<1>) true", 1),
        ("bit<8>", "8w255 + 1", 0),
        ("bit<48>", "48w0xFFFF_FFFF_FFFF + 48w1", 0),
    ],
)
def test_folding(type_text: str, expr: str, value: object) -> None:
    if value is None:
        # `**` is not a P4 operator
        error_of(f"const {type_text} X = {expr};")
        return
    assert fold(type_text, expr) == value


def test_int_arithmetic_is_unbounded_until_used() -> None:
    p = check("const int BIG = 1 << 70; const bit<8> LOW = BIG + 5; const int D = 7 / 2 + 7 % 4;")
    assert find(p, "BIG").value.const_value == 1 << 70
    assert find(p, "LOW").value.const_value == 5
    assert find(p, "D").value.const_value == 6


def test_constants_chain_and_references_carry_values() -> None:
    p = check(
        "const bit<16> A = 0x800; const bit<16> B = A + 1; const bit<8> C = B[7:0] ^ 8w1;"
        "typedef bit<(B[3:0])> w_t;"
    )
    assert find(p, "B").value.const_value == 0x801
    assert find(p, "C").value.const_value == 0
    assert find(p, "w_t").type_ref.resolved == T.BitsType(1)


def test_enum_and_error_values() -> None:
    p = check(
        "enum bit<16> E { A = 0x800, B = 0x86dd } const bit<16> V = (bit<16>) E.B + 1;"
        "const bool Q = E.A == E.A; const bool R = error.NoError != error.NoMatch;"
    )
    assert find(p, "V").value.const_value == 0x86DE
    assert find(p, "Q").value.const_value is True
    assert find(p, "R").value.const_value is True


def test_non_constant_initializer_is_an_error() -> None:
    err = error_of("extern bit<8> f(); const bit<8> X = f();")
    assert "not a compile-time constant" in err.message


@pytest.mark.parametrize(
    ("value", "width", "signed", "expected"),
    [(256, 8, False, 0), (-1, 8, False, 255), (128, 8, True, -128), (-129, 8, True, 127)],
)
def test_wrap(value: int, width: int, signed: bool, expected: int) -> None:
    assert consteval.wrap(value, T.BitsType(width, signed)) == expected


def test_signed_literal_out_of_range_warns() -> None:
    p = check("const int<4> X = 4s15;")
    assert find(p, "X").value.const_value == -1
    p = check("const bit<4> Y = 4w17;")
    assert find(p, "Y").value.const_value == 1
    assert any("4w17" in w for w in p.warnings)
