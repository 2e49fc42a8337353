"""Lowering of the v1model parser (parse states, select transitions, value sets) and of
the deparser (emit order)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from .. import ast as A
from .. import types as T
from ..errors import CompileError
from . import jsonutil as J
from .exprs import ExprLowering, print_expr, width_hint
from .externs import declare_instance
from .lower import Lowering, source_info
from .model import MatchFieldInfo, ValueSetInfo
from .names import annotations_of, cp_name, id_annotation
from .scope import ExprVal, Scope
from .sinks import ParserSink
from .storage import (
    FieldLoc,
    HeaderLoc,
    Loc,
    StackLoc,
    StructLoc,
    UnionLoc,
    header_leaves,
    leaf_fields,
    value_width,
)


class PacketRef:
    """Binding of the packet_in / packet_out parameter."""


class ParserLowering:
    def __init__(self, lw: Lowering, decl: A.ParserDecl, scope: Scope, prefix: str) -> None:
        self.lw = lw
        self.decl = decl
        self.scope = scope
        self.prefix = prefix
        self.vsets: dict[A.ValueSetDecl, str] = {}
        self.vset_json: list[dict[str, Any]] = []

    def lower(self) -> dict[str, Any]:
        init = ParserSink()
        self.declare_locals(self.decl, self.scope, self.prefix, init)
        self.states: list[dict[str, Any]] = []
        self._state_names: set[str] = {st.name for st in self.decl.states}
        ctx = _Ctx({st: st.name for st in self.decl.states}, None)
        for st in self.decl.states:
            pre = init.items if st.name == "start" else []
            self.build(st.name, list(st.statements), st.transition, self.scope, ctx, pre)
        return {
            "name": "parser",
            "id": 0,
            "init_state": "start",
            "parse_states": self.states,
        }

    def declare_locals(
        self, decl: A.ParserDecl, scope: Scope, prefix: str, init: ParserSink
    ) -> None:
        lw = self.lw
        for d in decl.locals:
            if isinstance(d, A.VariableDecl):
                lw.declare_variable(d, scope, init if d.init is not None else None)
            elif isinstance(d, A.ValueSetDecl):
                self.value_set(d, prefix)
            elif isinstance(d, A.ConstDecl):
                pass
            elif isinstance(d, A.InstanceDecl) and isinstance(d.decl, A.ParserDecl):
                inst_scope = Scope(lw.global_scope, f"{prefix}{d.name}.")
                scope.bind(d, _SubParser(d.decl, f"{prefix}{d.name}.", d.name, inst_scope))
            elif isinstance(d, A.InstanceDecl) and isinstance(d.type, T.ExternType):
                scope.bind(d, declare_instance(lw, d, prefix, None))
            else:
                raise CompileError("this declaration is not supported in a parser", d.loc)

    def fresh_state(self, base: str) -> str:
        i = 0
        while f"{base}_{i}" in self._state_names:
            i += 1
        name = f"{base}_{i}"
        self._state_names.add(name)
        return name

    def build(
        self,
        name: str,
        stmts: list[A.Node],
        transition: Any,
        scope: Scope,
        ctx: _Ctx,
        prelude: list[dict[str, Any]] | None = None,
    ) -> None:
        """Lower one parse state; `if` statements and sub-parser calls split it into
        several BMv2 states."""
        sink = ParserSink()
        sink.items.extend(prelude or [])
        flat = _flatten(stmts)
        for i, s in enumerate(flat):
            rest = flat[i + 1 :]
            if (
                isinstance(s, A.MethodCallStatement)
                and s.call.call is not None
                and (s.call.call.kind == "parser_apply")
            ):
                cont = self.fresh_state(name)
                sub = scope.lookup(s.call.call.decl)
                if not isinstance(sub, _SubParser):
                    raise CompileError("unknown parser instance", s.loc)
                start = self.inline_subparser(sub, s.call, scope, cont, sink)
                self.finish(name, sink, ("goto", start), scope, ctx)
                self.build(cont, rest, transition, scope, ctx)
                return
            if isinstance(s, A.IfStatement) and not isinstance(s.cond.const_value, bool):
                cont = self.fresh_state(name)
                then_name = self.fresh_state(name)
                else_name = self.fresh_state(name) if s.otherwise is not None else cont
                self.hoist_lookaheads(s.cond, sink, scope)
                cond = ExprLowering(self.lw, scope, sink).boolean(s.cond)
                tmp = self.lw.storage.new_scalar(self.lw.fresh("tmp"), T.BitsType(1))
                sink.assign(self.lw.field_node(tmp), J.b2d(cond))
                self.finish(name, sink, ("if", tmp, then_name, else_name), scope, ctx)
                self.build(then_name, [s.then], ("goto", cont), scope, ctx)
                if s.otherwise is not None:
                    self.build(else_name, [s.otherwise], ("goto", cont), scope, ctx)
                self.build(cont, rest, transition, scope, ctx)
                return
            self.statement(s, sink, scope)
        self.finish(name, sink, transition, scope, ctx)

    def finish(self, name: str, sink: ParserSink, tr: Any, scope: Scope, ctx: _Ctx) -> None:
        key: list[J.Node] = []
        transitions: list[dict[str, Any]] = []
        loc = None
        if isinstance(tr, tuple) and tr[0] == "goto":
            transitions.append(_default(tr[1]))
        elif isinstance(tr, tuple) and tr[0] == "if":
            _, tmp, then_name, else_name = tr
            key = [self.lw.field_node(tmp)]
            transitions.append(
                {"type": "hexstr", "value": "0x01", "mask": None, "next_state": then_name}
            )
            transitions.append(_default(else_name))
        elif isinstance(tr, A.PathExpression):
            transitions.append(_default(ctx.target(tr)))
            loc = tr.loc
        elif isinstance(tr, A.SelectExpression):
            key, widths = self.select_key(tr, sink, scope)
            for case in tr.cases:
                transitions.extend(self.transition(case, widths, ctx))
            loc = tr.loc
        elif tr is None:
            transitions.append(_default(None))
        else:
            raise CompileError("unsupported transition", getattr(tr, "loc", None))
        self.states.append(
            {
                "name": name,
                "id": self.lw.next_parse_state_id(),
                "source_info": source_info(loc),
                "parser_ops": sink.items,
                "transition_key": key,
                "transitions": transitions,
            }
        )

    def inline_subparser(
        self,
        sub: _SubParser,
        mce: A.MethodCallExpression,
        scope: Scope,
        cont: str,
        sink: ParserSink,
    ) -> str:
        """Lower a sub-parser's states (renamed) whose accept continues at `cont`;
        returns the name of its start state."""
        if sub.applied and not _reapplicable(sub.decl):
            raise CompileError(
                "a parser instance with value sets or extern instances can be applied only "
                "once on this target",
                mce.loc,
            )
        sub.applied = True
        call = mce.call
        assert call is not None
        callee = sub.scope.child()
        params = sub.decl.params
        for p, a in zip(params, call.params_to_args, strict=False):
            if a is not None and isinstance(
                scope.lookup(getattr(a.value, "decl", None)), PacketRef
            ):
                callee.bind(p, PacketRef())
        rest_params = [p for p in params if callee.lookup(p) is None]
        rest_args = [
            a for p, a in zip(params, call.params_to_args, strict=False) if callee.lookup(p) is None
        ]
        self.lw.bind_params(rest_params, rest_args, scope, callee, sink, mce.loc)
        if callee.copy_back:
            where = next(
                (a.value.loc for a in rest_args if a is not None and isinstance(a.value, A.Slice)),
                mce.loc,
            )
            raise CompileError(
                "a bit slice, a stack element at a run-time index, or storage shared by two "
                "arguments cannot be passed as an `out`/`inout` argument of a sub-parser "
                "on this target",
                where,
            )
        init = ParserSink()
        self.declare_locals(sub.decl, callee, sub.prefix, init)
        sink.items.extend(init.items)
        names: dict[A.ParserState, str] = {}
        for st in sub.decl.states:
            n = f"{sub.inst_name}_{st.name}"
            while n in self._state_names:
                n = n + "_"
            self._state_names.add(n)
            names[st] = n
        ctx = _Ctx(names, cont)
        for st in sub.decl.states:
            self.build(names[st], list(st.statements), st.transition, callee, ctx)
        start = sub.decl.state("start")
        if start is None:
            raise CompileError("the sub-parser has no start state", sub.decl.loc)
        return names[start]

    def value_set(self, d: A.ValueSetDecl, prefix: str) -> None:
        name = cp_name(d, prefix)
        size = d.size.const_value
        if not isinstance(size, int):
            raise CompileError("value_set size must be a compile-time constant", d.size.loc)
        et = d.element.resolved
        fields: list[tuple[str, int]] = []
        et0 = T.strip_newtype(et) if et is not None else None
        if isinstance(et0, T.StructLikeType):
            fields = [(f.name, value_width(f.type)) for f in et0.fields]
        elif et0 is not None:
            fields = [("", value_width(et0))]
        width = sum(w for _, w in fields)
        self.vsets[d] = name
        self.vset_json.append(
            {"name": name, "id": len(self.lw_vsets()), "compressed_bitwidth": width}
        )
        self.lw_vsets().append(self.vset_json[-1])
        info = ValueSetInfo(
            name, size, explicit_id=id_annotation(d), annotations=annotations_of(d), loc=d.loc
        )
        for i, (fname, w) in enumerate(fields):
            info.match_fields.append(MatchFieldInfo(fname or name, w, "exact"))
            del i
        self.lw.cp.value_sets.append(info)

    def lw_vsets(self) -> list[dict[str, Any]]:
        return self.lw.parse_vsets

    def statement(self, s: A.Node, sink: ParserSink, scope: Scope) -> None:
        lw = self.lw
        lw.at(s)
        ex = ExprLowering(lw, scope, sink)
        if isinstance(s, A.BlockStatement):
            for x in s.statements:
                self.statement(x, sink, scope)
            return
        if isinstance(s, A.MethodCallStatement):
            mce = s.call
            call = mce.call
            self.hoist_lookaheads(s, sink, scope)
            if call is not None and call.kind == "verify":
                args = [a.value if a else None for a in call.params_to_args]
                if len(args) < 2 or args[0] is None or args[1] is None:
                    raise CompileError("verify needs a condition and an error", s.loc)
                sink.op("verify", [ex.boolean(args[0]), ex.data(args[1], 32)])
                return
            if call is not None and isinstance(scope.lookup(call.instance), PacketRef):
                self.packet_call(mce, sink, scope)
                return
            lw.stmt(s, scope, sink)
            return
        if isinstance(s, A.AssignmentStatement) and _is_lookahead(s.rhs):
            dst = ex.lvalue(s.lhs)
            self.lookahead_into(dst, s.rhs, sink)
            return
        if isinstance(s, A.VariableDecl) and s.init is not None and _is_lookahead(s.init):
            loc = lw.declare_variable(
                A.VariableDecl(name=s.name, type_ref=s.type_ref, loc=s.loc), scope, sink
            )
            scope.bind(s, loc)
            self.lookahead_into(loc, s.init, sink)
            return
        if isinstance(s, A.AssignmentStatement | A.VariableDecl):
            self.hoist_lookaheads(s, sink, scope)
        lw.stmt(s, scope, sink)

    def hoist_lookaheads(self, node: A.Node, sink: ParserSink, scope: Scope) -> None:
        """Reads `packet.lookahead<bit<N>>()` and `packet.lookahead<H>().f` nested inside
        expressions into temporaries ahead of the statement (BMv2 has lookahead only as
        the source of a `set` and as a select key), like p4c's side-effect ordering."""
        for e in _nested_lookaheads(node):
            t = T.strip_newtype(e.type) if e.type is not None else None
            if t is None or isinstance(t, T.StructLikeType):
                raise CompileError("unsupported lookahead", e.loc)
            la = _lookahead_field(e)
            if la is None:
                la = (0, value_width(t))
            tmp = self.lw.storage.new_scalar(self.lw.fresh("tmp"), t)
            sink.assign(self.lw.field_node(tmp), {"type": "lookahead", "value": list(la)})
            node_ = self.lw.field_node(tmp)
            if isinstance(t, T.BoolType):
                scope.bind(e, ExprVal(J.d2b(node_), t, True))
            else:
                scope.bind(e, ExprVal(node_, t, False))

    def packet_call(self, mce: A.MethodCallExpression, sink: ParserSink, scope: Scope) -> None:
        call = mce.call
        assert call is not None
        ex = ExprLowering(self.lw, scope, sink)
        args = [a.value if a else None for a in call.params_to_args]
        if call.name == "extract":
            if not args or args[0] is None:
                raise CompileError("extract needs a header", mce.loc)
            target = self.extract_target(args[0], scope)
            if len(args) > 1 and args[1] is not None:
                # BMv2 takes the length only as an `expression` parameter (as p4c
                # writes it), even when it is a plain field.
                length = ex.data(args[1], 32)
                sink.op("extract_VL", [target, {"type": "expression", "value": length}])
            else:
                sink.op("extract", [target])
        elif call.name == "advance":
            if not args or args[0] is None:
                raise CompileError("advance needs a bit count", mce.loc)
            sink.op("advance", [J.param(ex.data(args[0], 32))])
        else:
            raise CompileError(f"packet.{call.name} is not supported here", mce.loc)

    def extract_target(self, e: A.Expression, scope: Scope) -> J.Node:
        ex = ExprLowering(self.lw, scope, None)
        if isinstance(e, A.Member) and e.member == "next":
            stack = ex.lvalue(e.expr)
            if isinstance(stack, StackLoc) and not stack.is_union_stack:
                return {"type": "stack", "value": stack.name}
        if isinstance(e, A.Member) and isinstance(e.expr, A.Member) and e.expr.member == "next":
            # `us.next.m`: member m of a union stack's next element.
            stack = ex.lvalue(e.expr.expr)
            if isinstance(stack, StackLoc) and stack.is_union_stack:
                return {"type": "union_stack", "value": [stack.name, e.member]}
        loc = ex.lvalue(e)
        if isinstance(loc, HeaderLoc) and loc.dynamic is None:
            return {"type": "regular", "value": loc.name}
        raise CompileError("extract needs a header or `stack.next`", e.loc)

    def lookahead_into(self, dst: Loc, e: A.Expression, sink: ParserSink) -> None:
        t = T.strip_newtype(e.type) if e.type is not None else None
        if isinstance(dst, FieldLoc) and t is not None and not isinstance(t, T.StructLikeType):
            w = value_width(t)
            sink.assign(self.lw.field_node(dst), {"type": "lookahead", "value": [0, w]})
            return
        if (isinstance(dst, HeaderLoc) and isinstance(t, T.HeaderType)) or (
            isinstance(dst, StructLoc)
            and isinstance(t, T.StructType)
            and all(isinstance(f, FieldLoc | StructLoc) for f in dst.fields.values())
        ):
            # The fields in order from the packet's next bits (a header becomes valid).
            if isinstance(dst, HeaderLoc):
                sink.prim("add_header", [self.lw.header_node(dst)])
            off = 0
            for fl in leaf_fields(dst):
                w = value_width(fl.type)
                sink.assign(self.lw.field_node(fl), {"type": "lookahead", "value": [off, w]})
                off += w
            return
        raise CompileError("unsupported lookahead", e.loc)

    # ------------------------------------------------------------------ select
    def select_key(
        self, sel: A.SelectExpression, sink: ParserSink, scope: Scope
    ) -> tuple[list[J.Node], list[int]]:
        ex = ExprLowering(self.lw, scope, sink)
        key: list[J.Node] = []
        widths: list[int] = []
        for k in sel.keys:
            w = width_hint(k)
            if w is None:
                raise CompileError("select keys need a fixed width", k.loc)
            widths.append(w)
            if _is_lookahead(k):
                key.append({"type": "lookahead", "value": [0, w]})
                continue
            la = _lookahead_field(k)
            if la is not None:
                key.append({"type": "lookahead", "value": list(la)})
                continue
            self.hoist_lookaheads(k, sink, scope)
            node = self._key_field(k, ex)
            if node is None:
                t = k.type or T.INT
                tmp = self.lw.storage.new_scalar(self.lw.fresh("tmp"), t)
                sink.assign(self.lw.field_node(tmp), ex.data(k, tmp.width))
                node = self.lw.field_node(tmp)
            key.append(node)
        return key, widths

    def _key_field(self, k: A.Expression, ex: ExprLowering) -> J.Node | None:
        if isinstance(k, A.Member) and isinstance(k.expr, A.Member) and k.expr.member == "last":
            stack = ex.binding_of(k.expr.expr)
            if isinstance(stack, StackLoc):
                return {"type": "stack_field", "value": [stack.name, k.member]}
        if isinstance(k, A.PathExpression | A.Member | A.ArrayIndex):
            b = ex.binding_of(k)
            if (
                isinstance(b, FieldLoc)
                and b.dynamic is None
                and not isinstance(T.strip_newtype(b.type), T.BoolType)
            ):
                return self.lw.field_node(b)
        return None

    def transition(self, case: A.SelectCase, widths: list[int], ctx: _Ctx) -> list[dict[str, Any]]:
        """The BMv2 transitions of one select case (ranges expand into several masked
        transitions, as BMv2 has no range match in parsers)."""
        nxt = ctx.target(case.state)
        ks = case.keyset
        if isinstance(ks, A.DefaultExpression | A.DontCare):
            return [_default(nxt)]
        if isinstance(ks, A.PathExpression) and isinstance(ks.decl, A.ValueSetDecl):
            return [
                {
                    "type": "parse_vset",
                    "value": self.vsets[ks.decl],
                    "mask": None,
                    "next_state": nxt,
                }
            ]
        elems = ks.elements if isinstance(ks, A.ListExpression) else [ks]
        if len(elems) != len(widths):
            raise CompileError("keyset does not match the select key", ks.loc)
        # Each element gives a list of (value, mask) alternatives.
        alternatives: list[list[tuple[int, int]]] = []
        for e, w in zip(elems, widths, strict=True):
            full = (1 << w) - 1
            if isinstance(e, A.DontCare | A.DefaultExpression):
                alternatives.append([(0, 0)])
            elif isinstance(e, A.MaskExpression):
                m = _int(e.mask, self.lw) & full
                alternatives.append([(_int(e.value, self.lw) & m, m)])
            elif isinstance(e, A.RangeExpression):
                lo, hi = _int(e.lo, self.lw), _int(e.hi, self.lw)
                alternatives.append(range_to_masks(lo & full, hi & full, w))
            else:
                alternatives.append([(_int(e, self.lw) & full, full)])
        out = []
        combos: list[list[tuple[int, int]]] = [[]]
        for alts in alternatives:
            combos = [[*c, a] for c in combos for a in alts]
            if len(combos) > 4096:
                raise CompileError("select range expands into too many transitions", ks.loc)
        for combo in combos:
            value = ""
            mask = ""
            masked = False
            for (v, m), w in zip(combo, widths, strict=True):
                nbytes = (w + 7) // 8
                masked = masked or m != (1 << w) - 1
                value += format(v, "x").rjust(nbytes * 2, "0")
                mask += format(m, "x").rjust(nbytes * 2, "0")
            out.append(
                {
                    "type": "hexstr",
                    "value": "0x" + value,
                    "mask": ("0x" + mask) if masked else None,
                    "next_state": nxt,
                }
            )
        return out


@dataclass(eq=False)
class _SubParser:
    decl: A.ParserDecl
    prefix: str
    inst_name: str
    scope: Scope
    applied: bool = False


@dataclass
class _Ctx:
    """State naming inside one (possibly inlined) parser: state -> BMv2 name, and where
    `accept` goes (None: the end of parsing)."""

    names: dict[A.ParserState, str]
    accept: str | None

    def target(self, path: A.PathExpression) -> str | None:
        if path.name == "accept":
            return self.accept
        if path.name == "reject":
            return None
        st = path.decl
        if isinstance(st, A.ParserState) and st in self.names:
            return self.names[st]
        return path.name


def range_to_masks(lo: int, hi: int, width: int) -> list[tuple[int, int]]:
    """Cover [lo, hi] with aligned power-of-two blocks, as (value, mask) pairs."""
    out: list[tuple[int, int]] = []
    full = (1 << width) - 1
    while lo <= hi:
        size = 1
        while lo % (size * 2) == 0 and lo + size * 2 - 1 <= hi and size * 2 <= full + 1:
            size *= 2
        out.append((lo, full ^ (size - 1)))
        lo += size
    return out


def _default(nxt: str | None) -> dict[str, Any]:
    return {"type": "default", "value": None, "mask": None, "next_state": nxt}


def _flatten(stmts: list[A.Node]) -> list[A.Node]:
    out: list[A.Node] = []
    for s in stmts:
        if isinstance(s, A.BlockStatement):
            out.extend(_flatten(s.statements))
        else:
            out.append(s)
    return out


def _lookahead_field(e: A.Expression) -> tuple[int, int] | None:
    """`packet.lookahead<H>().f`: the (bit offset, width) of f."""
    if not (isinstance(e, A.Member) and _is_lookahead(e.expr)):
        return None
    ht = T.strip_newtype(e.expr.type) if e.expr.type is not None else None
    if not isinstance(ht, T.StructLikeType):
        return None
    off = 0
    for path, t in header_leaves(ht):
        w = value_width(t)
        if path == (e.member,):
            return off, w
        off += w
    return None


def _validity_only(e: A.Expression) -> bool:
    if isinstance(e, A.UnaryOp) and e.op == "!":
        return _validity_only(e.operand)
    if isinstance(e, A.BinaryOp) and e.op in ("&&", "||"):
        return _validity_only(e.left) and _validity_only(e.right)
    return (
        isinstance(e, A.MethodCallExpression)
        and e.call is not None
        and e.call.kind == "header_method"
        and e.call.name == "isValid"
    )


def _reapplicable(decl: A.ParserDecl) -> bool:
    """Whether a sub-parser instance can be inlined once per application (as p4c
    does): it owns no value sets and no extern instances, which exist once."""
    for d in decl.locals:
        if isinstance(d, A.ValueSetDecl):
            return False
        if isinstance(d, A.InstanceDecl) and (
            not isinstance(d.decl, A.ParserDecl) or not _reapplicable(d.decl)
        ):
            return False
    return True


_NOT_WALKED = frozenset({"decl", "type", "const_value", "type_ref", "type_args"})


def _nested_lookaheads(node: A.Node) -> list[A.Expression]:
    """Lookahead reads inside the expressions of one statement (not nested statements):
    `lookahead<H>().f` members and bare `lookahead<T>()` calls, outermost first."""
    found: list[A.Expression] = []

    def visit(x: Any) -> None:
        if isinstance(x, list | tuple):
            for y in x:
                visit(y)
            return
        if not isinstance(x, A.Node) or isinstance(x, A.Statement | A.Declaration):
            return
        if isinstance(x, A.Expression) and (_lookahead_field(x) is not None or _is_lookahead(x)):
            found.append(x)
            return
        for f in dataclasses.fields(x):
            if f.name not in _NOT_WALKED:
                visit(getattr(x, f.name))

    if isinstance(node, A.Statement | A.Declaration):
        for f in dataclasses.fields(node):
            if f.name not in _NOT_WALKED:
                visit(getattr(node, f.name))
    else:
        visit(node)
    return found


def _is_lookahead(e: A.Expression) -> bool:
    return (
        isinstance(e, A.MethodCallExpression) and e.call is not None and e.call.name == "lookahead"
    )


def _int(e: A.Expression, lw: Lowering) -> int:
    v = e.const_value
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, T.EnumValue):
        return v.value if v.value is not None else lw.enum_value(v.enum_name, v.member)
    if isinstance(v, T.ErrorValue):
        return lw.error_value(v.name)
    if isinstance(v, int):
        return v
    raise CompileError(f"`{print_expr(e)}` is not a compile-time constant", e.loc)


# ---------------------------------------------------------------------- deparser


def lower_deparser(lw: Lowering, decl: A.ControlDecl, scope: Scope) -> dict[str, Any]:
    order: list[str] = []

    def emit_loc(loc: Loc, where: A.Node) -> None:
        if isinstance(loc, HeaderLoc) and loc.dynamic is None:
            if loc.name not in order:
                order.append(loc.name)
        elif isinstance(loc, StackLoc):
            for el in loc.elements:
                emit_loc(el, where)
        elif isinstance(loc, UnionLoc):
            for m in loc.members.values():
                emit_loc(m, where)
        elif isinstance(loc, StructLoc):
            for f in loc.fields.values():
                if not isinstance(f, FieldLoc):
                    emit_loc(f, where)
        else:
            raise CompileError("emit needs a header, stack, union or struct of headers", where.loc)

    def walk(s: A.Node) -> None:
        if isinstance(s, A.BlockStatement):
            for x in s.statements:
                walk(x)
        elif isinstance(s, A.IfStatement):
            # Invalid headers are skipped by the deparser, so validity tests add nothing;
            # any other condition cannot be expressed in a BMv2 deparser.
            if not _validity_only(s.cond):
                raise CompileError(
                    "the BMv2 deparser emits unconditionally; only isValid() conditions are "
                    "supported here",
                    s.cond.loc,
                )
            walk(s.then)
            if s.otherwise is not None:
                walk(s.otherwise)
        elif isinstance(s, A.MethodCallStatement):
            call = s.call.call
            if (
                call is None
                or call.name != "emit"
                or not isinstance(scope.lookup(call.instance), PacketRef)
            ):
                raise CompileError("only packet.emit is supported in the deparser", s.loc)
            arg = call.params_to_args[0]
            assert arg is not None
            emit_loc(ExprLowering(lw, scope, None).lvalue(arg.value), s)
        elif isinstance(s, A.EmptyStatement):
            pass
        else:
            raise CompileError("only emit statements are supported in the deparser", s.loc)

    for d in decl.locals:
        raise CompileError("declarations in the deparser are not supported", d.loc)
    walk(decl.body)
    return {
        "name": "deparser",
        "id": 0,
        "source_info": source_info(decl.loc, decl.name),
        "order": order,
        "primitives": [],
    }


__all__ = ["PacketRef", "ParserLowering", "lower_deparser", "range_to_masks"]
