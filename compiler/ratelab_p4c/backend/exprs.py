"""Lowering of P4 expressions to BMv2 JSON expression nodes, and of l-values to storage.

Arithmetic in BMv2 has infinite precision, so every operator whose P4 result can leave
the range of its type is reduced the way p4c does it: `& mask` for bit<N>, `two_comp_mod`
for int<N>.  Booleans and data are distinct in BMv2: `d2b` / `b2d` convert.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import ast as A
from .. import types as T
from ..errors import CompileError
from . import jsonutil as J
from .aliasing import has_call
from .scope import ExprVal, RuntimeData, Scope
from .storage import (
    FieldLoc,
    HeaderLoc,
    Loc,
    StackLoc,
    StructLoc,
    UnionLoc,
    is_signed,
    value_width,
)

if TYPE_CHECKING:
    from .lower import Lowering
    from .sinks import Sink

_COMPARE = {"==", "!=", "<", ">", "<=", ">="}


def width_hint(e: A.Expression) -> int | None:
    t = T.strip_newtype(e.type) if e.type is not None else None
    if t is None or isinstance(t, T.IntType):
        return None
    try:
        return value_width(t)
    except CompileError:
        return None


def const_node(value: Any, t: T.Type | None, lw: Lowering, width: int | None = None) -> J.Node:
    """A compile-time value as a JSON node."""
    if isinstance(value, bool):
        return J.boolean(value)
    if isinstance(value, int):
        w = width
        if w is None and t is not None:
            t0 = T.strip_newtype(t)
            if not isinstance(t0, T.IntType):
                try:
                    w = value_width(t0)
                except CompileError:
                    w = None
        if w is None:
            w = max(value.bit_length() + (1 if value < 0 else 0), 1)
        return J.hexstr(value, w)
    if isinstance(value, T.ErrorValue):
        return J.hexstr(lw.error_value(value.name), 32)
    if isinstance(value, T.EnumValue):
        if value.value is not None:
            return J.hexstr(value.value, width or lw.enum_width(value.enum_name))
        return J.hexstr(lw.enum_value(value.enum_name, value.member), 32)
    raise CompileError(f"cannot use the value {value!r} here")


class ExprLowering:
    """Lowers expressions in one scope; statements needed to compute a value (inlined
    function calls) go to the sink."""

    def __init__(self, lw: Lowering, scope: Scope, sink: Sink | None) -> None:
        self.lw = lw
        self.scope = scope
        self.sink = sink

    # ------------------------------------------------------------------ r-values
    def data(self, e: A.Expression, width: int | None = None) -> J.Node:
        """e as a data (integer) value."""
        node, is_bool = self._rv(e, width)
        if is_bool and node.get("type") == "bool":
            return J.hexstr(int(node["value"]), width or 1)
        return J.b2d(node) if is_bool else node

    def boolean(self, e: A.Expression) -> J.Node:
        """e as a boolean value."""
        node, is_bool = self._rv(e, None)
        return node if is_bool else J.d2b(node)

    def value(self, e: A.Expression, width: int | None = None) -> tuple[J.Node, bool]:
        return self._rv(e, width)

    def _rv(self, e: A.Expression, width: int | None) -> tuple[J.Node, bool]:
        cv = e.const_value
        if (
            cv is not None
            and isinstance(cv, bool | int | T.ErrorValue | T.EnumValue)
            and not isinstance(e, A.MethodCallExpression)
        ):
            if isinstance(cv, bool):
                return J.boolean(cv), True
            return const_node(cv, e.type, self.lw, width if width else width_hint(e)), False
        pre = self.scope.lookup(e)  # a value computed ahead (table applications, ...)
        if isinstance(pre, ExprVal):
            return pre.node, pre.is_bool
        if isinstance(e, A.PathExpression | A.Member | A.ArrayIndex):
            special = self._special_member(e)
            if special is not None:
                return special
            b = self.binding_of(e)
            if isinstance(b, FieldLoc):
                return self._scalar(b)
            if isinstance(b, ExprVal):
                return b.node, b.is_bool
            if isinstance(b, RuntimeData):
                node = {"type": "local", "value": b.index}
                if isinstance(T.strip_newtype(b.type), T.BoolType):
                    return J.d2b(node), True
                return node, False
            if isinstance(b, HeaderLoc | StructLoc | StackLoc | UnionLoc):
                raise CompileError("a header or struct cannot be used as a value here", e.loc)
            raise CompileError(f"cannot evaluate `{print_expr(e)}` on this target", e.loc)
        if isinstance(e, A.Slice):
            base = self.data(e.base)
            lo, hi = e.lo_value, e.hi_value
            if lo:
                base = J.op(">>", base, J.hexstr(lo, 32))
            return J.mask(base, hi - lo + 1), False
        if isinstance(e, A.UnaryOp):
            return self._unary(e)
        if isinstance(e, A.BinaryOp):
            return self._binary(e)
        if isinstance(e, A.Ternary):
            if has_call(e.then) or has_call(e.otherwise):
                return self._branching_ternary(e, width)
            cond = self.boolean(e.cond)
            rbool = isinstance(T.strip_newtype(e.type or T.VOID), T.BoolType)
            w = width_hint(e) or width
            left = self.data(e.then, w)
            right = self.data(e.otherwise, w)
            node = J.op("?", left, right, cond)
            return (J.d2b(node), True) if rbool else (node, False)
        if isinstance(e, A.Cast):
            return self._cast(e)
        if isinstance(e, A.MethodCallExpression):
            return self.lw.call_value(e, self.scope, self.sink)
        raise CompileError(f"unsupported expression `{print_expr(e)}` on this target", e.loc)

    def _special_member(self, e: A.Expression) -> tuple[J.Node, bool] | None:
        if not isinstance(e, A.Member):
            return None
        base_t = T.strip_newtype(e.expr.type) if e.expr.type is not None else None
        if isinstance(base_t, T.HeaderStackType):
            if e.member == "size":
                return J.hexstr(base_t.size, 32), False
            if e.member == "lastIndex":
                stack = self.lvalue(e.expr)
                assert isinstance(stack, StackLoc)
                node = J.op("last_stack_index", None, _stack_node(stack))
                return node, False
        return None

    def _unary(self, e: A.UnaryOp) -> tuple[J.Node, bool]:
        t = T.strip_newtype(e.type or T.VOID)
        if e.op == "!":
            return J.op("not", None, self.boolean(e.operand)), True
        if e.op == "+":
            return self._rv(e.operand, None)
        w = value_width(t)
        signed = is_signed(t)
        x = self.data(e.operand, w)
        if e.op == "~":
            return J.wrap(J.op("~", None, x), w, signed), False
        if e.op == "-":
            return J.wrap(J.op("-", J.hexstr(0, w), x), w, signed), False
        raise CompileError(f"unsupported operator {e.op}", e.loc)

    def _binary(self, e: A.BinaryOp) -> tuple[J.Node, bool]:
        o = e.op
        if o in ("&&", "||"):
            if has_call(e.right):
                return self._short_circuit(e)
            left = self.boolean(e.left)
            right = self.boolean(e.right)
            return J.op("and" if o == "&&" else "or", left, right), True
        if o in ("==", "!=") and _is_composite(e.left.type):
            eq = self._composite_eq(e.left, e.right)
            return (eq, True) if o == "==" else (J.op("not", None, eq), True)
        if o in _COMPARE:
            w = width_hint(e.left) or width_hint(e.right)
            left = self._ahead_of(e.right, e.left, self.data(e.left, w))
            right = self.data(e.right, w)
            return J.op(o, left, right), True
        t = T.strip_newtype(e.type or T.VOID)
        w = value_width(t)
        signed = is_signed(t)
        if o == "++":
            wl = width_hint(e.left) or 0
            wr = width_hint(e.right) or 0
            left = self._ahead_of(e.right, e.left, self.data(e.left, wl))
            right = self.data(e.right, wr)
            if is_signed(e.right.type or T.VOID):
                right = J.mask(right, wr)
            if is_signed(e.left.type or T.VOID):
                left = J.mask(left, wl)
            node = J.op("|", J.op("<<", left, J.hexstr(wr, 32)), right)
            return (J.wrap(node, w, True) if signed else node), False
        left = self._ahead_of(e.right, e.left, self.data(e.left, w))
        shift = o in ("<<", ">>")
        right = self.data(e.right, None if shift else w)
        if o in ("+", "-", "*", "<<"):
            return J.wrap(J.op(o, left, right), w, signed), False
        if o in ("|+|", "|-|"):
            node = J.op(o[1], left, right)
            return J.op("sat_cast" if signed else "usat_cast", node, J.hexstr(w, 32)), False
        if o in ("&", "|", "^", ">>", "/", "%"):
            return J.op(o, left, right), False
        raise CompileError(f"unsupported operator {o}", e.loc)

    # ------------------------------------------------------------------ side effects
    def snapshot(self, e: A.Expression, node: J.Node, is_bool: bool) -> J.Node:
        """An operand's value read now into a temporary: a call evaluated after it
        may change what the operand reads (P4 evaluates left to right)."""
        if self.sink is None or node.get("type") in ("hexstr", "bool", "local"):
            return node
        t = T.BOOL if is_bool else T.strip_newtype(e.type or T.VOID)
        if not isinstance(t, T.BitsType | T.BoolType | T.EnumType):
            return node
        tmp = self.lw.storage.new_scalar(self.lw.fresh("tmp"), t)
        field = self.lw.field_node(tmp)
        self.sink.assign(field, J.b2d(node) if is_bool else node)
        return J.d2b(field) if is_bool else field

    def _ahead_of(self, later: A.Expression, e: A.Expression, node: J.Node) -> J.Node:
        """node (the data value of e), read before `later` runs its calls."""
        return self.snapshot(e, node, False) if has_call(later) else node

    def _jumps(self, e: A.Expression) -> Sink:
        if self.sink is None or not self.sink.supports_jumps:
            raise CompileError(
                "a call that changes its arguments cannot be evaluated conditionally "
                "(in `&&`, `||` or `?:`) here on this target",
                e.loc,
            )
        return self.sink

    def _short_circuit(self, e: A.BinaryOp) -> tuple[J.Node, bool]:
        """`a && b` / `a || b` whose `b` runs a call: `b` is evaluated only when `a`
        does not decide the result, with a jump in the action."""
        sink = self._jumps(e)
        result = self.lw.storage.new_scalar(self.lw.fresh("tmp"), T.BOOL)
        field = self.lw.field_node(result)
        sink.assign(field, J.b2d(self.boolean(e.left)))
        decided = J.d2b(field) if e.op == "||" else J.op("not", None, J.d2b(field))
        j = sink.jump_if_zero(J.b2d(J.op("not", None, decided)), e.loc)
        sink.assign(field, J.b2d(self.boolean(e.right)))
        sink.patch(j, sink.here())
        return J.d2b(field), True

    def _branching_ternary(self, e: A.Ternary, width: int | None) -> tuple[J.Node, bool]:
        """`c ? x : y` with a call in x or y: only the chosen branch is evaluated."""
        sink = self._jumps(e)
        rbool = isinstance(T.strip_newtype(e.type or T.VOID), T.BoolType)
        t = T.BOOL if rbool else T.strip_newtype(e.type or T.VOID)
        result = self.lw.storage.new_scalar(self.lw.fresh("tmp"), t)
        field = self.lw.field_node(result)
        w = None if rbool else (width_hint(e) or width)
        j_else = sink.jump_if_zero(J.b2d(self.boolean(e.cond)), e.loc)
        sink.assign(field, self.data(e.then, w))
        j_end = sink.jump(e.loc)
        sink.patch(j_else, sink.here())
        sink.assign(field, self.data(e.otherwise, w))
        sink.patch(j_end, sink.here())
        return (J.d2b(field), True) if rbool else (field, False)

    def _composite_eq(self, left: A.Expression, right: A.Expression) -> J.Node:
        """Equality of headers, structs, unions, stacks and lists, expanded as p4c's
        RemoveComplexComparisons does: two headers are equal when both are invalid, or
        both valid with equal fields; the rest member by member."""
        return self._eq(self._side(left), self._side(right), left)

    def _side(self, e: A.Expression) -> Any:
        """One operand of a comparison: a list/struct expression stays an expression
        (compared element by element), a composite l-value becomes its storage."""
        if isinstance(e, A.ListExpression | A.StructExpression):
            return e
        if isinstance(e.const_value, T.StructValue | tuple):
            return e.const_value  # a constant of struct, header or tuple type
        if _is_composite(e.type):
            return self.lvalue(e)
        return e

    def _eq(self, a: Any, b: Any, where: A.Expression) -> J.Node:
        a = self._side(a) if isinstance(a, A.Expression) else a
        b = self._side(b) if isinstance(b, A.Expression) else b
        if _is_list(a) and not _is_list(b):
            a, b = b, a  # the list on the right, as p4c does
        if isinstance(a, HeaderLoc):
            lvalid = self.lw.valid_node(a)
            fields = lvalid
            if isinstance(b, HeaderLoc):
                rvalid = self.lw.valid_node(b)
                fields = J.op("and", lvalid, rvalid)
            for i, (name, f) in enumerate(a.fields.items()):
                fields = J.op("and", fields, self._eq(f, _member(b, name, i, where), where))
            if not isinstance(b, HeaderLoc):
                return fields  # a list or struct expression is a valid header
            both_invalid = J.op("and", J.op("not", None, lvalid), J.op("not", None, rvalid))
            return J.op("or", both_invalid, fields)
        if isinstance(a, StructLoc | UnionLoc):
            members = a.fields if isinstance(a, StructLoc) else a.members
            result: J.Node | None = None
            for i, (name, f) in enumerate(members.items()):
                term = self._eq(f, _member(b, name, i, where), where)
                result = term if result is None else J.op("and", result, term)
            return result if result is not None else J.boolean(True)
        if isinstance(a, StackLoc):
            if not isinstance(b, StackLoc) or len(b.elements) != len(a.elements):
                raise CompileError("cannot compare values of different types", where.loc)
            result = None
            for x, y in zip(a.elements, b.elements, strict=True):
                term = self._eq(x, y, where)
                result = term if result is None else J.op("and", result, term)
            return result if result is not None else J.boolean(True)
        if _is_list(a):
            assert _is_list(b)
            xs, ys = _list_items(a), _list_items(b)
            if len(xs) != len(ys):
                raise CompileError("cannot compare values of different types", where.loc)
            result = None
            for x, y in zip(xs, ys, strict=True):
                term = self._eq(x, y, where)
                result = term if result is None else J.op("and", result, term)
            return result if result is not None else J.boolean(True)
        if isinstance(a, HeaderLoc | StructLoc | UnionLoc | StackLoc) or isinstance(
            b, HeaderLoc | StructLoc | UnionLoc | StackLoc
        ):
            raise CompileError("cannot compare values of different types", where.loc)
        x, xb = self._scalar(a)
        y, yb = self._scalar(b, width_of(a))
        if xb or yb:
            return J.op("==", J.b2d(x) if xb else x, J.b2d(y) if yb else y)
        return J.op("==", x, y)

    def _scalar(self, v: Any, width: int | None = None) -> tuple[J.Node, bool]:
        if isinstance(v, FieldLoc):
            node = self.lw.field_node(v)
            if isinstance(T.strip_newtype(v.type), T.BoolType):
                return J.d2b(node), True
            return node, False
        if isinstance(v, bool):
            return J.boolean(v), True
        if not isinstance(v, A.Expression):
            return const_node(v, None, self.lw, width), False
        return self._rv(v, width_hint(v) or width)

    def _cast(self, e: A.Cast) -> tuple[J.Node, bool]:
        dst = T.strip_newtype(e.type or T.VOID)
        src = T.strip_newtype(e.expr.type or T.VOID)
        if isinstance(dst, T.BoolType):
            node, is_bool = self._rv(e.expr, 1)
            return (node, True) if is_bool else (J.d2b(node), True)
        if isinstance(src, T.BoolType):
            return J.b2d(self.boolean(e.expr)), False
        if isinstance(dst, T.BitsType | T.EnumType):
            dw = value_width(dst)
            dsigned = is_signed(dst)
            if isinstance(src, T.IntType):
                return self.data(e.expr, dw), False
            sw = value_width(src)
            ssigned = is_signed(src)
            x = self.data(e.expr, sw)
            if dsigned:
                if ssigned and sw <= dw:
                    return x, False
                if not ssigned and sw < dw:
                    return x, False
                return J.wrap(x, dw, True), False
            if ssigned or sw > dw:
                return J.mask(x, dw), False
            return x, False
        return self._rv(e.expr, None)

    # ------------------------------------------------------------------ l-values
    def binding_of(self, e: A.Expression) -> Any:
        """What an l-value-like expression denotes: a Loc, ExprVal, RuntimeData, ..."""
        if isinstance(e, A.Slice):
            pre = self.scope.lookup_lvalue(e)  # a slice written through a temporary
            if pre is not None:
                return pre
        if isinstance(e, A.PathExpression):
            b = self.scope.lookup(e.decl)
            if b is None:
                raise CompileError(f"`{e.name}` cannot be used here on this target", e.loc)
            return b
        if isinstance(e, A.Member):
            pre = self.scope.lookup_lvalue(e)
            if pre is not None:
                return pre
            base = self.binding_of(e.expr)
            return self.member_of(base, e)
        if isinstance(e, A.ArrayIndex):
            pre = self.scope.lookup_lvalue(e)
            if pre is not None:
                return pre
            base = self.binding_of(e.base)
            if not isinstance(base, StackLoc):
                raise CompileError("only header stacks can be indexed", e.loc)
            idx = e.index.const_value
            if isinstance(idx, int) and not isinstance(idx, bool):
                if not 0 <= idx < len(base.elements):
                    raise CompileError(
                        f"index {idx} is out of bounds for a stack of size {len(base.elements)}",
                        e.index.loc,
                    )
                return base.elements[idx]
            index = self.data(e.index)
            if index.get("type") == "hexstr":  # a loop variable: known here
                i = int(index["value"], 16)
                if 0 <= i < len(base.elements):
                    return base.elements[i]
            if base.is_union_stack:
                dyn = J.op("dereference_union_stack", _stack_node(base), index)
                return self.lw.dynamic_union(base, dyn)
            dyn = J.op(
                "dereference_header_stack", {"type": "header_stack", "value": base.name}, index
            )
            return self.lw.dynamic_header(base, dyn)
        raise CompileError(f"`{print_expr(e)}` is not an l-value", e.loc)

    def member_of(self, base: Any, e: A.Member) -> Any:
        if isinstance(base, StructLoc | HeaderLoc):
            f = base.fields.get(e.member)
            if f is None:
                raise CompileError(f"no field `{e.member}`", e.loc)
            return f
        if isinstance(base, UnionLoc):
            return base.members[e.member]
        if isinstance(base, StackLoc):
            if e.member == "last" and base.is_union_stack:
                last = J.op("last_stack_index", None, _stack_node(base))
                return self.lw.dynamic_union(
                    base, J.op("dereference_union_stack", _stack_node(base), last)
                )
            if e.member == "last":
                dyn = J.op(
                    "dereference_header_stack",
                    {"type": "header_stack", "value": base.name},
                    J.op("last_stack_index", None, {"type": "header_stack", "value": base.name}),
                )
                return self.lw.dynamic_header(base, dyn)
            raise CompileError(f"`{e.member}` of a header stack is not supported here", e.loc)
        raise CompileError(f"cannot access `{e.member}` here", e.loc)

    def lvalue(self, e: A.Expression) -> Loc:
        if isinstance(e, A.DontCare):
            # `_` as an `out` argument: somewhere to write that nothing reads.
            t = e.type
            if t is None or isinstance(T.strip_newtype(t), T.DontCareType):
                raise CompileError("cannot tell the type of `_` here", e.loc)
            return self.lw.storage.allocate(self.lw.fresh("dont_care"), t, e.loc)
        b = self.binding_of(e)
        if not isinstance(b, Loc):
            raise CompileError(f"`{print_expr(e)}` cannot be assigned or passed as out", e.loc)
        return b


# ---------------------------------------------------------------------- printing


def _stack_node(stack: StackLoc) -> J.Node:
    """The type-value object naming a header stack or a header union stack."""
    kind = "header_union_stack" if stack.is_union_stack else "header_stack"
    return {"type": kind, "value": stack.name}


def _is_list(v: Any) -> bool:
    """A list/struct expression or a constant struct/tuple value."""
    return isinstance(v, A.ListExpression | A.StructExpression | T.StructValue | tuple)


def _list_items(v: Any) -> list[Any]:
    if isinstance(v, A.ListExpression):
        return list(v.elements)
    if isinstance(v, A.StructExpression):
        return [f.value for f in v.fields]
    if isinstance(v, T.StructValue):
        return list(v.values())
    return list(v)


def _member(v: Any, name: str, index: int, where: A.Expression) -> Any:
    """Member `name` (position `index`) of a comparison operand."""
    if isinstance(v, HeaderLoc | StructLoc) and name in v.fields:
        return v.fields[name]
    if isinstance(v, UnionLoc) and name in v.members:
        return v.members[name]
    if isinstance(v, A.StructExpression):
        for f in v.fields:
            if f.name == name:
                return f.value
    if isinstance(v, A.ListExpression) and index < len(v.elements):
        return v.elements[index]
    if isinstance(v, T.StructValue) and name in v:
        return v[name]
    if isinstance(v, tuple) and index < len(v):
        return v[index]
    raise CompileError("cannot compare values of different types", where.loc)


def width_of(v: Any) -> int | None:
    """The width of a scalar comparison operand (a field or an expression)."""
    if isinstance(v, FieldLoc):
        t = T.strip_newtype(v.type)
        return None if isinstance(t, T.VarbitType | T.BoolType) else v.width
    if isinstance(v, A.Expression):
        return width_hint(v)
    return None


def _is_composite(t: T.Type | None) -> bool:
    t = T.strip_newtype(t) if t is not None else None
    return isinstance(t, T.StructLikeType | T.HeaderStackType | T.TupleType)


def print_expr(e: A.Expression | None) -> str:
    """The expression as p4c prints it in names (table keys)."""
    if e is None:
        return ""
    if isinstance(e, A.PathExpression):
        return ("." if e.top_level else "") + e.name
    if isinstance(e, A.Member):
        return f"{print_expr(e.expr)}.{e.member}"
    if isinstance(e, A.ArrayIndex):
        return f"{print_expr(e.base)}[{print_expr(e.index)}]"
    if isinstance(e, A.Slice):
        return f"{print_expr(e.base)}[{e.hi_value}:{e.lo_value}]"
    if isinstance(e, A.IntLiteral):
        return e.text or str(e.value)
    if isinstance(e, A.BoolLiteral):
        return "true" if e.value else "false"
    if isinstance(e, A.MethodCallExpression):
        args = ", ".join(print_expr(a.value) for a in e.args)
        return f"{print_expr(e.method)}({args})"
    if isinstance(e, A.UnaryOp):
        return f"{e.op}{print_expr(e.operand)}"
    if isinstance(e, A.BinaryOp):
        return f"{print_expr(e.left)} {e.op} {print_expr(e.right)}"
    if isinstance(e, A.Cast):
        return f"({e.type}){print_expr(e.expr)}"
    if isinstance(e, A.ListExpression):
        return "{" + ", ".join(print_expr(x) for x in e.elements) + "}"
    if isinstance(e, A.StructExpression):
        return "{" + ", ".join(f"{f.name} = {print_expr(f.value)}" for f in e.fields) + "}"
    if isinstance(e, A.Ternary):
        return f"{print_expr(e.cond)} ? {print_expr(e.then)} : {print_expr(e.otherwise)}"
    if isinstance(e, A.StringLiteral):
        return f'"{e.value}"'
    if isinstance(e, A.MaskExpression):
        return f"{print_expr(e.value)} &&& {print_expr(e.mask)}"
    if isinstance(e, A.RangeExpression):
        return f"{print_expr(e.lo)} .. {print_expr(e.hi)}"
    if isinstance(e, A.DefaultExpression):
        return "default"
    if isinstance(e, A.DontCare):
        return "_"
    return type(e).__name__
