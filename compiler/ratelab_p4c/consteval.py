"""Compile-time evaluation with P4 integer semantics.

Values are Python ints holding the mathematical value of the typed result: bit<W> values
in [0, 2^W), int<W> values in [-2^(W-1), 2^(W-1)), `int` unbounded.  Every operation on
fixed-width values wraps (two's complement), except the saturating |+| and |-|.
"""

from __future__ import annotations

from .types import MAX_WIDTH, BitsType, BoolType, EnumType, EnumValue, IntType, NewType, Type


def wrap(value: int, t: BitsType) -> int:
    """Reduce value modulo 2^width into the range of t."""
    mask = (1 << t.width) - 1
    v = value & mask
    if t.signed and v >> (t.width - 1):
        v -= 1 << t.width
    return v


def fits(value: int, t: BitsType) -> bool:
    return t.min_value <= value <= t.max_value


def to_unsigned(value: int, width: int) -> int:
    return value & ((1 << width) - 1)


def saturate(value: int, t: BitsType) -> int:
    return max(t.min_value, min(t.max_value, value))


class EvalError(Exception):
    """An operation that is not defined on its constant operands (division by zero...)."""


def binary(op: str, a: int | bool, b: int | bool, t: Type, operand_type: Type) -> int | bool:
    """Fold `a op b`; t is the result type, operand_type the (common) operand type."""
    if op == "&&":
        return bool(a) and bool(b)
    if op == "||":
        return bool(a) or bool(b)
    if op == "==":
        return a == b
    if op == "!=":
        return a != b
    if op == "<":
        return a < b
    if op == ">":
        return a > b
    if op == "<=":
        return a <= b
    if op == ">=":
        return a >= b
    ia, ib = int(a), int(b)
    if op == "++":
        assert isinstance(t, BitsType)
        rt = operand_type
        assert isinstance(rt, BitsType)
        return wrap((ia << rt.width) | to_unsigned(ib, rt.width), t)
    if op in ("|+|", "|-|"):
        assert isinstance(t, BitsType)
        return saturate(ia + ib if op == "|+|" else ia - ib, t)
    if op == "+":
        r = ia + ib
    elif op == "-":
        r = ia - ib
    elif op == "*":
        r = ia * ib
    elif op in ("/", "%"):
        if ib == 0:
            raise EvalError("division by zero")
        if ia < 0 or ib < 0:
            raise EvalError(f"'{op}' is not defined on negative values")
        r = ia // ib if op == "/" else ia % ib
    elif op == "&":
        r = ia & ib
    elif op == "|":
        r = ia | ib
    elif op == "^":
        r = ia ^ ib
    elif op == "<<":
        if ib < 0:
            raise EvalError("negative shift amount")
        if isinstance(t, BitsType) and ib >= t.width:
            return 0
        if ib > MAX_WIDTH and ia != 0:
            # An int shifted that far fits no type, and would exhaust memory.
            raise EvalError(f"shift amount {ib} is over the maximum width, {MAX_WIDTH}")
        r = ia << ib
    elif op == ">>":
        if ib < 0:
            raise EvalError("negative shift amount")
        if isinstance(t, BitsType) and ib >= t.width:
            return -1 if ia < 0 else 0
        r = ia >> ib
    else:
        raise EvalError(f"unknown operator {op}")
    if isinstance(t, BitsType):
        return wrap(r, t)
    return r


def unary(op: str, a: int | bool, t: Type) -> int | bool:
    if op == "!":
        return not a
    if op == "+":
        return a
    if op == "-":
        r = -int(a)
    elif op == "~":
        r = ~int(a)
    else:
        raise EvalError(f"unknown operator {op}")
    return wrap(r, t) if isinstance(t, BitsType) else r


def cast(value: object, src: Type, dst: Type) -> object:
    """Fold `(dst) value` for value of type src; None when the result is not constant."""
    while isinstance(dst, NewType):
        dst = dst.underlying
    if isinstance(value, EnumValue):
        value = value.value
        if value is None:
            return None
    if isinstance(dst, BitsType):
        if isinstance(value, bool):
            return 1 if value else 0
        if isinstance(value, int):
            if (
                isinstance(src, BitsType)
                and src.signed
                and not dst.signed
                and src.width < dst.width
            ):
                # int<W1> -> bit<W2> goes through sign extension first
                return wrap(value, dst)
            return wrap(value, dst)
        return None
    if isinstance(dst, BoolType):
        if isinstance(value, bool):
            return value
        if isinstance(value, int):
            return value != 0
        return None
    if isinstance(dst, IntType):
        return value if isinstance(value, int) else None
    if isinstance(dst, EnumType) and isinstance(value, int):
        for name, v in dst.values.items():
            if v == value:
                return EnumValue(dst.name, name, v)
        return None
    return None


def slice_value(value: int, width: int, hi: int, lo: int) -> int:
    return (to_unsigned(value, width) >> lo) & ((1 << (hi - lo + 1)) - 1)
