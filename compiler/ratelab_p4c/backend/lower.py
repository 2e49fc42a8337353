"""Program-wide lowering state and the lowering of statements and calls into BMv2
primitives (shared by actions, synthesized control-flow actions and parser states)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .. import ast as A
from .. import types as T
from ..errors import CompileError, SourceLocation
from . import jsonutil as J
from .aliasing import OuterStorage, has_call, is_dynamic, storage_keys
from .exprs import ExprLowering, const_node, print_expr, width_hint
from .loops import LoopControl, StackElement, iterations
from .model import ActionInfo, ActionParamInfo, ControlPlaneModel, DigestInfo
from .names import annotations_of, cp_name, id_annotation
from .scope import ExprVal, ExternRef, Owner, RuntimeData, Scope
from .sinks import ActionSink, Sink
from .storage import (
    STANDARD_METADATA,
    FieldLoc,
    HeaderLoc,
    Loc,
    StackLoc,
    Storage,
    StructLoc,
    UnionLoc,
    header_field_locs,
    is_scalar_type,
    value_width,
)

HASH_ALGOS = {
    "crc32": "crc32",
    "crc32_custom": "crc32_custom",
    "crc16": "crc16",
    "crc16_custom": "crc16_custom",
    "random": "random",
    "identity": "identity",
    "csum16": "csum16",
    "xor16": "xor16",
}


@dataclass
class ReturnInfo:
    """Where `return` goes inside an inlined action/function: jumps to patch to the end,
    and the location receiving a function's result."""

    jumps: list[int] = field(default_factory=list)
    result: Loc | None = None
    last_stmt: A.Node | None = None


def source_info(loc: SourceLocation | None, fragment: str = "") -> J.Node | None:
    if loc is None:
        return None
    info: J.Node = {"filename": loc.file, "line": loc.line, "column": loc.col}
    if fragment:
        info["source_fragment"] = fragment
    return info


class Lowering:
    """Global state of one compilation: storage, actions, externs, calculations."""

    def __init__(self, program: A.Program) -> None:
        self.program = program
        self.storage = Storage()
        self.cp = ControlPlaneModel()
        self.errors = {name: i for i, name in enumerate(program.errors)}
        self.enums: dict[str, dict[str, int]] = {}
        self.enum_types: dict[str, T.EnumType] = {}
        self.actions_json: list[dict[str, Any]] = []
        self.calculations: list[dict[str, Any]] = []
        self._calc_keys: dict[str, str] = {}
        self.field_lists: list[dict[str, Any]] = []
        self._field_list_ids: dict[int, int] = {}
        self.learn_lists: list[dict[str, Any]] = []
        self._learn_ids: dict[str, int] = {}
        self.counter_arrays: list[dict[str, Any]] = []
        self.meter_arrays: list[dict[str, Any]] = []
        self.register_arrays: list[dict[str, Any]] = []
        self.checksums: list[dict[str, Any]] = []
        self.extern_instances: list[dict[str, Any]] = []
        self._counters: dict[str, int] = {}
        self.meta_loc: Loc | None = None
        self.meta_type: T.Type | None = None
        self.checksum_mode: str | None = None  # "verify" / "update" inside checksum controls
        self.global_scope = Scope()
        self._reserved: set[str] = set()
        self._reserve_user_names()
        self.cur_loc: SourceLocation | None = program.main.loc if program.main else None
        self._table_actions: dict[Any, ActionInfo] = {}
        self._table_names: set[str] = set()
        self._table_count = 0
        self._cond_count = 0
        self._profile_count = 0
        self._state_count = 0
        self.parse_vsets: list[dict[str, Any]] = []
        self.outer_storage = OuterStorage()
        self._collect_enums()

    # ------------------------------------------------------------------ actions / tables
    def add_action_json(
        self,
        name: str,
        params: list[ActionParamInfo],
        prims: list[dict[str, Any]],
        loc: SourceLocation | None,
        hidden: bool = True,
    ) -> ActionInfo:
        ident = len(self.actions_json)
        self.actions_json.append(
            {
                "name": name,
                "id": ident,
                "runtime_data": [{"name": p.name, "bitwidth": p.width} for p in params],
                "primitives": prims,
            }
        )
        return ActionInfo(name, ident, params, hidden=hidden, loc=loc)

    def table_action_json(
        self,
        decl: A.ActionDecl,
        owner: Scope,
        directed_params: list[A.Param],
        directed_args: list[A.Argument],
        caller: Scope | None = None,
    ) -> ActionInfo:
        """The JSON action for a table's action (lowered once per control instance and
        binding of directed parameters)."""
        key = (decl, id(owner), tuple(print_expr(a.value) for a in directed_args))
        cached = self._table_actions.get(key)
        if cached is not None:
            return cached
        scope = owner.child()
        sink = ActionSink()
        params: list[ActionParamInfo] = []
        for p in decl.params:
            if p.direction:
                continue
            t = p.type
            if t is None:
                raise CompileError(f"parameter `{p.name}` has no type", p.loc)
            scope.bind(p, RuntimeData(len(params), t))
            tn = t.name if isinstance(t, T.NewType) else None
            params.append(ActionParamInfo(p.name, value_width(t), annotations_of(p), tn))
        if directed_params:
            self.bind_params(
                directed_params,
                list(directed_args),
                caller or owner,
                scope,
                sink,
                decl.loc,
                decl,
            )
        elif any(p.direction for p in decl.params):
            raise CompileError(
                f"action `{decl.name}` has directed parameters that the table does not bind",
                decl.loc,
            )
        self.inline_body(decl.body, scope, sink, None)
        self.copy_back(scope, sink)
        name = cp_name(decl, owner.prefix)
        hidden = decl.has_annotation("hidden")
        info = self.add_action_json(name, params, sink.finish(), decl.loc, hidden)
        info.explicit_id = id_annotation(decl)
        info.annotations = annotations_of(decl)
        self._table_actions[key] = info
        return info

    def publish_action(self, info: ActionInfo) -> None:
        """List an action in the P4Info (once), unless it is @hidden."""
        if not info.hidden and all(a.name != info.name for a in self.cp.actions):
            self.cp.actions.append(info)

    def new_table_json(self, name: str) -> dict[str, Any]:
        if name in self._table_names:
            raise CompileError(f"two tables are named `{name}`")
        self._table_names.add(name)
        self._table_count += 1
        return {"name": name, "id": self._table_count - 1}

    def next_parse_state_id(self) -> int:
        self._state_count += 1
        return self._state_count - 1

    def next_profile_id(self) -> int:
        self._profile_count += 1
        return self._profile_count - 1

    def next_conditional_id(self) -> int:
        self._cond_count += 1
        return self._cond_count - 1

    # ------------------------------------------------------------------ names
    def fresh(self, base: str) -> str:
        """A new compiler-made name (act, act_0, ...) that no user object has."""
        while True:
            n = self._counters.get(base)
            self._counters[base] = 0 if n is None else n + 1
            name = base if n is None else f"{base}_{n}"
            if name not in self._reserved:
                return name

    def _reserve_user_names(self) -> None:
        """Top-level and absolutely named objects keep their names: synthesized actions
        and tables must not collide with them (the control plane looks names up)."""

        def visit(node: A.Node, top: bool) -> None:
            if isinstance(node, A.Declaration):
                n = node.name_annotation
                if n is not None and n.startswith("."):
                    self._reserved.add(n[1:])
                elif top:
                    self._reserved.add(n or node.name)
            for child in getattr(node, "locals", []):
                visit(child, False)

        for d in self.program.declarations:
            visit(d, True)

    # ------------------------------------------------------------------ enums / errors
    def _collect_enums(self) -> None:
        for d in self.program.declarations:
            if isinstance(d, A.EnumDecl) and isinstance(d.resolved, T.EnumType):
                et = d.resolved
                self.enum_types[et.name] = et
                if et.underlying is None:
                    self.enums[et.name] = {m: i for i, m in enumerate(et.members)}

    def error_value(self, name: str) -> int:
        if name not in self.errors:
            self.errors[name] = len(self.errors)
        return self.errors[name]

    def enum_value(self, enum: str, member: str) -> int:
        et = self.enum_types.get(enum)
        if et is None:
            table = self.enums.setdefault(enum, {})
            return table.setdefault(member, len(table))
        return et.members.index(member)

    def enum_width(self, enum: str) -> int:
        et = self.enum_types.get(enum)
        if et is not None and et.underlying is not None:
            return et.underlying.width
        return 32

    # ------------------------------------------------------------------ storage nodes
    def field_node(self, f: FieldLoc) -> J.Node:
        if f.dynamic is not None:
            hdr_node, index = f.dynamic
            return J.op("access_field", hdr_node, index)
        return J.field(f.header, f.field)

    def header_node(self, h: HeaderLoc) -> J.Node:
        if h.dynamic is not None:
            return h.dynamic
        return {"type": "header", "value": h.name}

    def dynamic_header(self, stack: StackLoc, dyn: J.Node) -> HeaderLoc:
        elem = stack.elements[0]
        assert isinstance(elem, HeaderLoc)
        return HeaderLoc(
            stack.name, elem.type, header_field_locs(stack.name, elem.type, dyn), dynamic=dyn
        )

    def dynamic_union(self, stack: StackLoc, dyn: J.Node) -> UnionLoc:
        """The element of a union stack that `dyn` (dereference_union_stack) picks."""
        elem = stack.elements[0]
        assert isinstance(elem, UnionLoc)
        loc = UnionLoc(stack.name, elem.type, dynamic=dyn)
        for i, (name, m) in enumerate(elem.members.items()):
            hdyn = {
                "type": "expression",
                "value": {"op": "access_union_header", "left": dyn, "right": i},
            }
            loc.members[name] = HeaderLoc(
                stack.name, m.type, header_field_locs(stack.name, m.type, hdyn), dynamic=hdyn
            )
        return loc

    def valid_node(self, loc: Loc) -> J.Node:
        """A boolean node: is the header (or union) valid."""
        if isinstance(loc, HeaderLoc):
            if loc.dynamic is not None:
                return J.op("valid", None, loc.dynamic)
            return J.d2b(J.field(loc.name, "$valid$"))
        if isinstance(loc, UnionLoc):
            if loc.dynamic is not None:
                return J.op("valid_union", None, loc.dynamic)
            return J.op("valid_union", None, {"type": "header_union", "value": loc.name})
        raise CompileError("isValid() needs a header or header union")

    # ------------------------------------------------------------------ statements
    def stmts(self, body: list[A.Node], scope: Scope, sink: Sink) -> None:
        for s in body:
            self.stmt(s, scope, sink)

    def at(self, node: A.Node | None) -> None:
        """Remember where lowering is, for errors raised without a location."""
        if node is not None and node.loc is not None:
            self.cur_loc = node.loc

    def stmt(self, s: A.Node, scope: Scope, sink: Sink) -> None:
        self.at(s)
        ex = ExprLowering(self, scope, sink)
        src = source_info(s.loc)
        if isinstance(s, A.AssignmentStatement):
            if s.compound is not None:
                scope = self.compound_scope(s.lhs, scope, sink)
            self.assign(s.lhs, s.rhs, scope, sink, src)
        elif isinstance(s, A.MethodCallStatement):
            self.call_stmt(s.call, scope, sink)
        elif isinstance(s, A.BlockStatement):
            self.stmts(s.statements, scope, sink)
        elif isinstance(s, A.IfStatement):
            cv = s.cond.const_value
            if isinstance(cv, bool):
                branch = s.then if cv else s.otherwise
                if branch is not None:
                    self.stmt(branch, scope, sink)
                return
            cond = J.b2d(ex.boolean(s.cond))
            j_else = sink.jump_if_zero(cond, s.loc)
            self.stmt(s.then, scope, sink)
            if s.otherwise is not None:
                j_end = sink.jump(s.loc)
                sink.patch(j_else, sink.here())
                self.stmt(s.otherwise, scope, sink)
                sink.patch(j_end, sink.here())
            else:
                sink.patch(j_else, sink.here())
        elif isinstance(s, A.SwitchStatement):
            self.value_switch(s, scope, sink)
        elif isinstance(s, A.ExitStatement):
            sink.exit(src)
        elif isinstance(s, A.ReturnStatement):
            self.return_stmt(s, scope, sink)
        elif isinstance(s, A.VariableDecl):
            self.declare_variable(s, scope, sink)
        elif isinstance(s, A.ConstDecl):
            # A struct/tuple constant has no storage: its uses carry its value.
            if not isinstance(s.value.const_value, T.StructValue | tuple):
                scope.bind(s, ExprVal(ex.data(s.value), s.type or T.INT))
        elif isinstance(s, A.EmptyStatement):
            pass
        elif isinstance(s, A.ForStatement | A.ForInStatement):
            self.unroll(s, scope, lambda: sink, lambda inner: self.stmt(s.body, inner, sink))
        elif isinstance(s, A.BreakStatement | A.ContinueStatement):
            self.loop_jump(s, scope, sink)
        else:
            raise CompileError(
                f"statement `{type(s).__name__}` is not supported on this target", s.loc
            )

    def unroll(
        self,
        s: A.ForStatement | A.ForInStatement,
        scope: Scope,
        sink_for: Callable[[], Sink],
        body: Callable[[Scope], bool | None],
    ) -> bool:
        """Lower a for loop as one copy of its body per iteration (loops.py). body
        lowers one copy in a scope binding the loop variables; it returns False when
        control cannot go on after it (return/exit). Returns the same for the loop."""
        ctl = LoopControl()
        final: dict[A.Node, Any] = {}
        goes_on = True
        for env in iterations(s, final):
            inner = scope.child()
            inner.loop = ctl
            for decl, value in env.items():
                self.bind_loop_value(decl, value, inner, sink_for)
            ctl.continues = []
            goes_on = body(inner) is not False
            if ctl.continues:
                sink = sink_for()
                for j in ctl.continues:
                    sink.patch(j, sink.here())
            if not goes_on:
                break
        if ctl.breaks:
            sink = sink_for()
            for j in ctl.breaks:
                sink.patch(j, sink.here())
        for decl, value in final.items():
            # A variable declared before the loop keeps the value the loop left in it.
            dst = scope.lookup(decl)
            if isinstance(dst, FieldLoc):
                if isinstance(value, bool):
                    node = J.hexstr(int(value), 1)
                else:
                    node = const_node(value, dst.type, self, dst.width)
                sink_for().assign(self.field_node(dst), node)
        return goes_on

    def bind_loop_value(
        self, decl: A.Node, value: Any, scope: Scope, sink_for: Callable[[], Sink]
    ) -> None:
        t = getattr(decl, "type", None) or T.INT
        if isinstance(value, StackElement):
            stack = ExprLowering(self, scope, sink_for()).lvalue(value.stack)
            if isinstance(stack, StackLoc) and stack.is_union_stack:
                raise CompileError(
                    "a for loop over a stack of header unions is not supported on this target",
                    value.stack.loc,
                )
            if not isinstance(stack, StackLoc):
                raise CompileError("a for loop iterates over a header stack here", value.stack.loc)
            loc = self.storage.allocate(getattr(decl, "name", "v"), t, value.stack.loc)
            scope.bind(decl, loc)
            self.copy(loc, stack.elements[value.index], sink_for(), None, value.stack.loc)
        elif isinstance(value, A.Expression):
            # A list element known only at run time: the variable holds a copy of it.
            loc = self.storage.allocate(getattr(decl, "name", "v"), t, value.loc)
            scope.bind(decl, loc)
            self.assign_to(loc, value, scope, sink_for())
        elif isinstance(value, bool):
            scope.bind(decl, ExprVal(J.boolean(value), t, True))
        else:
            scope.bind(decl, ExprVal(const_node(value, t, self), t))

    def loop_jump(self, s: A.Node, scope: Scope, sink: Sink) -> None:
        word = "break" if isinstance(s, A.BreakStatement) else "continue"
        ctl = scope_loop(scope)
        if ctl is None or not sink.supports_jumps:
            raise CompileError(
                f"`{word}` is supported only in a for loop inside an action or a function "
                "on this target (a control's apply block has no jumps in BMv2)",
                s.loc,
            )
        (ctl.breaks if word == "break" else ctl.continues).append(sink.jump(s.loc))

    def value_switch(self, s: A.SwitchStatement, scope: Scope, sink: Sink) -> None:
        """switch on a value inside an action: a chain of comparisons with jumps."""
        ex = ExprLowering(self, scope, sink)
        w = width_hint(s.expr)
        value = ex.data(s.expr, w)
        end_jumps: list[int] = []
        pending: list[A.Expression] = []
        default_body: A.BlockStatement | None = None
        for case in s.cases:
            if isinstance(case.label, A.DefaultExpression):
                default_body = case.body
                continue
            pending.append(case.label)
            if case.body is None:
                continue
            conds = [J.op("==", value, ex.data(lbl, w)) for lbl in pending]
            pending = []
            cond = conds[0]
            for c in conds[1:]:
                cond = J.op("or", cond, c)
            j = sink.jump_if_zero(J.b2d(cond), case.loc)
            self.stmt(case.body, scope, sink)
            end_jumps.append(sink.jump(case.loc))
            sink.patch(j, sink.here())
        if default_body is not None:
            self.stmt(default_body, scope, sink)
        for j in end_jumps:
            sink.patch(j, sink.here())

    def return_stmt(self, s: A.ReturnStatement, scope: Scope, sink: Sink) -> None:
        ret = scope_return(scope)
        if ret is None:
            raise CompileError("`return` is not supported here on this target", s.loc)
        if s.value is not None:
            if ret.result is None:
                raise CompileError("unexpected return value", s.loc)
            self.assign_to(ret.result, s.value, scope, sink, source_info(s.loc))
        if s is not ret.last_stmt:
            ret.jumps.append(sink.jump(s.loc))

    def declare_variable(self, d: A.VariableDecl, scope: Scope, sink: Sink | None) -> Loc:
        t = d.type
        if t is None:
            raise CompileError(f"variable `{d.name}` has no type", d.loc)
        loc = self.storage.allocate(d.name, t, d.loc)
        scope.bind(d, loc)
        if isinstance(loc, HeaderLoc | StackLoc | UnionLoc) and sink is not None:
            self._invalidate(loc, sink)
        if d.init is not None:
            if sink is None:
                raise CompileError("initializers are not supported here", d.loc)
            self.assign_to(loc, d.init, scope, sink, source_info(d.loc))
        return loc

    def _invalidate(self, loc: Loc, sink: Sink) -> None:
        # Local headers start invalid every time the declaration executes.
        if isinstance(loc, HeaderLoc):
            sink.prim("remove_header", [self.header_node(loc)])
        elif isinstance(loc, StackLoc):
            for el in loc.elements:
                self._invalidate(el, sink)
        elif isinstance(loc, UnionLoc):
            for m in loc.members.values():
                self._invalidate(m, sink)

    # ------------------------------------------------------------------ assignment
    def assign(
        self,
        lhs: A.Expression,
        rhs: A.Expression,
        scope: Scope,
        sink: Sink,
        src: J.Node | None = None,
    ) -> None:
        ex = ExprLowering(self, scope, sink)
        # The target is evaluated before the value (left to right): a run-time stack
        # index is read before a call in the value can change it.
        fixed = has_call(rhs) and is_dynamic(lhs)
        if isinstance(lhs, A.Slice):
            base, lo, hi = flat_slice(lhs)
            dst = self.fixed_lvalue(base, scope, sink) if fixed else ex.lvalue(base)
            if not isinstance(dst, FieldLoc):
                raise CompileError("slices can only be assigned in fields", lhs.loc)
            self.assign_slice(dst, lo, hi, ex.data(rhs, hi - lo + 1), sink, src)
            return
        if isinstance(rhs, A.DontCare):
            return
        dst = self.fixed_lvalue(lhs, scope, sink) if fixed else ex.lvalue(lhs)
        self.assign_to(dst, rhs, scope, sink, src)

    def compound_scope(self, lhs: A.Expression, scope: Scope, sink: Sink) -> Scope:
        """For `lhs op= rhs`: a scope in which the field `lhs` names (the base of a slice)
        is lowered once, so an index with side effects runs once, not for the read and
        again for the write."""
        base = flat_slice(lhs)[0] if isinstance(lhs, A.Slice) else lhs
        if not isinstance(base, A.Member):
            return scope  # a local variable: nothing to evaluate
        dst = ExprLowering(self, scope, sink).lvalue(base)
        if not isinstance(dst, FieldLoc):
            raise CompileError("compound assignment needs a scalar target", lhs.loc)
        inner = scope.child()
        node = self.field_node(dst)
        is_bool = isinstance(T.strip_newtype(dst.type), T.BoolType)
        inner.bind(base, ExprVal(J.d2b(node) if is_bool else node, dst.type, is_bool))
        inner.bind_lvalue(base, dst)
        return inner

    def assign_to(
        self, dst: Loc, rhs: A.Expression, scope: Scope, sink: Sink, src: J.Node | None = None
    ) -> None:
        ex = ExprLowering(self, scope, sink)
        if isinstance(dst, FieldLoc) and isinstance(T.strip_newtype(dst.type), T.VarbitType):
            source = (
                ex.binding_of(rhs)
                if isinstance(rhs, A.Member | A.PathExpression | A.ArrayIndex)
                else None
            )
            if not isinstance(source, FieldLoc) or not isinstance(
                T.strip_newtype(source.type), T.VarbitType
            ):
                raise CompileError("a varbit field can only be copied from a varbit field", rhs.loc)
            sink.prim("assign_VL", [self.field_node(dst), self.field_node(source)], src)
            return
        if isinstance(dst, FieldLoc):
            sink.assign(self.field_node(dst), ex.data(rhs, dst.width), src)
            return
        if isinstance(rhs.const_value, T.StructValue | tuple):
            self.assign_const(dst, rhs.const_value, sink, src, rhs.loc)
            return
        if isinstance(rhs, A.StructExpression | A.ListExpression):
            if self._reads_any(rhs, storage_keys(dst), scope):
                # `h = {h.b, h.a}`: every element is read before anything is written.
                tmp = self.storage.allocate(self.fresh("tmp"), dst.type, rhs.loc)
                self.assign_to(tmp, rhs, scope, sink, src)
                self.copy(dst, tmp, sink, src, rhs.loc)
                return
            if isinstance(rhs, A.StructExpression):
                items = [(nf.name, nf.value) for nf in rhs.fields]
            else:
                names = list(dst.fields) if isinstance(dst, StructLoc | HeaderLoc) else []
                if len(names) != len(rhs.elements):
                    raise CompileError("list does not match the target's fields", rhs.loc)
                items = list(zip(names, rhs.elements, strict=True))
            if isinstance(dst, HeaderLoc):
                sink.prim("add_header", [self.header_node(dst)], src)
                for name, value in items:
                    self.assign_to(dst.fields[name], value, scope, sink, src)
                return
            if isinstance(dst, StructLoc):
                for name, value in items:
                    self.assign_to(dst.fields[name], value, scope, sink, src)
                return
            raise CompileError("cannot assign a list to this target", rhs.loc)
        if isinstance(rhs, A.MethodCallExpression):
            if rhs.call is not None and rhs.call.kind == "function":
                result = self.inline_function(rhs, scope, sink)
                if result is None:
                    raise CompileError("function returns no value", rhs.loc)
                self.copy(dst, result, sink, src, rhs.loc)
                return
            raise CompileError(f"cannot assign the result of `{print_expr(rhs)}`", rhs.loc)
        source = ex.binding_of(rhs)
        if not isinstance(source, Loc):
            raise CompileError(f"cannot assign `{print_expr(rhs)}` here", rhs.loc)
        self.copy(dst, source, sink, src, rhs.loc)

    def assign_const(
        self, dst: Loc, value: Any, sink: Sink, src: J.Node | None, loc: SourceLocation | None
    ) -> None:
        """dst = a compile-time value (a constant of struct, header or tuple type)."""
        if isinstance(dst, FieldLoc):
            if isinstance(value, bool):
                node = J.hexstr(int(value), 1)
            else:
                node = const_node(value, dst.type, self, dst.width)
            sink.assign(self.field_node(dst), node, src)
            return
        if isinstance(dst, HeaderLoc | StructLoc) and isinstance(value, T.StructValue | tuple):
            if isinstance(dst, HeaderLoc):
                sink.prim("add_header", [self.header_node(dst)], src)
            items = list(value.values()) if isinstance(value, T.StructValue) else list(value)
            if len(items) != len(dst.fields):
                raise CompileError("the constant does not match the target's fields", loc)
            for f, v in zip(dst.fields.values(), items, strict=True):
                self.assign_const(f, v, sink, src, loc)
            return
        raise CompileError("cannot assign this constant here on this target", loc)

    def _reads_any(self, e: A.Expression, keys: set[tuple[str, str]], scope: Scope) -> bool:
        """Whether evaluating e may read storage among keys (or runs a call)."""
        ex = ExprLowering(self, scope, None)
        found = False

        def visit(x: A.Expression) -> None:
            nonlocal found
            if found or x.const_value is not None:
                return
            if isinstance(x, A.PathExpression | A.Member | A.ArrayIndex):
                if is_dynamic(x):
                    found = True
                    return
                try:
                    b = ex.binding_of(x)
                except CompileError:
                    b = None
                if isinstance(b, Loc):
                    found = bool(storage_keys(b) & keys)
                    return
            if isinstance(x, A.MethodCallExpression) and has_call(x):
                found = True
                return
            for child in _sub_expressions(x):
                visit(child)

        visit(e)
        return found

    def copy(
        self, dst: Loc, source: Loc, sink: Sink, src: J.Node | None, loc: SourceLocation | None
    ) -> None:
        """dst = source for locations of the same type."""
        if isinstance(dst, FieldLoc) and isinstance(source, FieldLoc):
            sink.assign(self.field_node(dst), self.field_node(source), src)
        elif isinstance(dst, HeaderLoc) and isinstance(source, HeaderLoc):
            sink.prim("assign_header", [self.header_node(dst), self.header_node(source)], src)
        elif (
            isinstance(dst, StackLoc)
            and isinstance(source, StackLoc)
            and (dst.is_union_stack or source.is_union_stack)
        ):
            sink.prim(
                "assign_union_stack",
                [
                    {"type": "header_union_stack", "value": dst.name},
                    {"type": "header_union_stack", "value": source.name},
                ],
                src,
            )
        elif (
            isinstance(dst, UnionLoc)
            and isinstance(source, UnionLoc)
            and (dst.dynamic is not None or source.dynamic is not None)
        ):
            # A union stack element picked at run time: member by member (each copy
            # sets or clears its member's validity, the others follow).
            for name, d in dst.members.items():
                self.copy(d, source.members[name], sink, src, loc)
        elif isinstance(dst, StackLoc) and isinstance(source, StackLoc):
            sink.prim(
                "assign_header_stack",
                [
                    {"type": "header_stack", "value": dst.name},
                    {"type": "header_stack", "value": source.name},
                ],
                src,
            )
        elif isinstance(dst, UnionLoc) and isinstance(source, UnionLoc):
            sink.prim(
                "assign_union",
                [
                    {"type": "header_union", "value": dst.name},
                    {"type": "header_union", "value": source.name},
                ],
                src,
            )
        elif isinstance(dst, StructLoc) and isinstance(source, StructLoc):
            for name, d in dst.fields.items():
                self.copy(d, source.fields[name], sink, src, loc)
        else:
            raise CompileError("assignment between incompatible storage", loc)

    # ------------------------------------------------------------------ calls
    def call_args(self, call: A.CallInfo) -> list[A.Expression | None]:
        return [a.value if a is not None else None for a in call.params_to_args]

    def assign_slice(
        self, dst: FieldLoc, lo: int, hi: int, value: J.Node, sink: Sink, src: J.Node | None
    ) -> None:
        """dst[hi:lo] = value (value already hi-lo+1 bits wide)."""
        w = dst.width
        part = ((1 << (hi - lo + 1)) - 1) << lo
        keep = ((1 << w) - 1) ^ part
        shifted = J.op("<<", value, J.hexstr(lo, 32)) if lo else value
        node = J.op(
            "|",
            J.op("&", self.field_node(dst), J.hexstr(keep, w)),
            J.op("&", shifted, J.hexstr(part, w)),
        )
        sink.assign(self.field_node(dst), node, src)

    def copy_back(self, callee: Scope, sink: Sink) -> None:
        """After an inlined call: write the temporaries of bit slices passed as out/inout
        arguments back into their fields (copy-out)."""
        for dst, lo, hi, tmp in callee.copy_back:
            if lo is None:
                self.copy(dst, tmp, sink, None, None)
            else:
                self.assign_slice(dst, lo, hi, self.field_node(tmp), sink, None)
        callee.copy_back = []

    def call_stmt(self, mce: A.MethodCallExpression, scope: Scope, sink: Sink) -> None:
        call = mce.call
        if call is None:
            raise CompileError("unresolved call", mce.loc)
        src = source_info(mce.loc, print_expr(mce))
        kind = call.kind
        if kind == "action":
            assert isinstance(call.decl, A.ActionDecl)
            self.inline_action(call.decl, call.params_to_args, scope, sink, mce.loc)
        elif kind == "function":
            self.inline_function(mce, scope, sink)
        elif kind in ("extern_function", "extern_method", "packet_method"):
            inner = scope.child()
            self.slice_out_arguments(call, inner, sink)
            if kind == "extern_function":
                self.extern_function(mce, inner, sink, src)
            else:
                self.extern_method(mce, inner, sink, src)
            self.copy_back(inner, sink)
        elif kind == "header_method":
            self.header_method(mce, scope, sink, src)
        elif kind == "stack_method":
            ex = ExprLowering(self, scope, sink)
            assert isinstance(mce.method, A.Member)
            stack = ex.lvalue(mce.method.expr)
            if not isinstance(stack, StackLoc):
                raise CompileError("push_front/pop_front need a header stack", mce.loc)
            count = mce.args[0].value.const_value if mce.args else 1
            if not isinstance(count, int):
                raise CompileError("the count must be a compile-time constant", mce.loc)
            op = "push" if call.name == "push_front" else "pop"
            kind = "header_union_stack" if stack.is_union_stack else "header_stack"
            sink.prim(op, [{"type": kind, "value": stack.name}, J.hexstr(count, 32)], src)
        elif (
            kind == "control_apply"
            and self.checksum_mode is not None
            and isinstance(call.decl, A.ControlDecl)
        ):
            # `C.apply(...)` in a checksum control: inline C's body (its checksum calls).
            decl = call.decl
            for d in decl.locals:
                raise CompileError(
                    "controls applied from checksum controls cannot have declarations", d.loc
                )
            callee = Scope(self.global_scope, f"{scope.prefix}{decl.name}.")
            self.bind_params(decl.params, call.params_to_args, scope, callee, sink, mce.loc)
            self.stmts(decl.body.statements, callee, sink)
        else:
            raise CompileError(f"`{print_expr(mce)}` cannot be called here", mce.loc)

    def header_method(
        self, mce: A.MethodCallExpression, scope: Scope, sink: Sink, src: J.Node | None
    ) -> None:
        assert isinstance(mce.method, A.Member)
        ex = ExprLowering(self, scope, sink)
        target = ex.lvalue(mce.method.expr)
        name = mce.call.name if mce.call else ""
        if name == "isValid":
            return
        if not isinstance(target, HeaderLoc):
            raise CompileError(f"{name}() needs a header", mce.loc)
        sink.prim(
            "add_header" if name == "setValid" else "remove_header", [self.header_node(target)], src
        )

    def call_value(
        self, mce: A.MethodCallExpression, scope: Scope, sink: Sink | None
    ) -> tuple[J.Node, bool]:
        """A call used inside an expression."""
        call = mce.call
        if call is None:
            raise CompileError("unresolved call", mce.loc)
        if call.kind == "header_method" and call.name == "isValid":
            assert isinstance(mce.method, A.Member)
            target = ExprLowering(self, scope, sink).lvalue(mce.method.expr)
            return self.valid_node(target), True
        if call.kind == "function":
            if sink is None:
                raise CompileError("function calls are not supported in this expression", mce.loc)
            result = self.inline_function(mce, scope, sink)
            if not isinstance(result, FieldLoc):
                raise CompileError("the function's result is not a scalar", mce.loc)
            node = self.field_node(result)
            if isinstance(T.strip_newtype(result.type), T.BoolType):
                return J.d2b(node), True
            return node, False
        if call.kind == "table_apply":
            raise CompileError(
                "table application results can only be used directly in if/switch conditions",
                mce.loc,
            )
        raise CompileError(f"`{print_expr(mce)}` cannot be used as a value here", mce.loc)

    def bind_params(
        self,
        params: list[A.Param],
        args: list[A.Argument | None],
        caller: Scope,
        callee: Scope,
        sink: Sink,
        loc: SourceLocation | None,
        decl: A.Node | None = None,
    ) -> None:
        """Bind a callee's parameters to its arguments, evaluated left to right. `decl`
        is the callee when its body may name the caller's storage (control-local
        actions): arguments it could reach that way are copied in and out."""
        ex = ExprLowering(self, caller, sink)
        pairs = list(zip(params, args, strict=False))
        copied = self._copied_arguments(pairs, caller, decl)
        out_headers: list[HeaderLoc] = []
        for i, (p, a) in enumerate(pairs):
            if a is None:
                if p.default is not None:
                    callee.bind(p, ExprVal(ex.data(p.default), p.type or T.INT))
                continue
            value = a.value
            t = p.type or value.type or T.INT
            if p.direction in ("out", "inout"):
                if isinstance(value, A.DontCare):
                    callee.bind(p, self.storage.allocate(p.name, t, p.loc))
                elif isinstance(value, A.Slice):
                    # Copy-in/copy-out through a temporary; the caller writes it back
                    # with copy_back() after the inlined body.
                    base_expr, lo, hi = flat_slice(value)
                    base = ex.lvalue(base_expr)
                    if not isinstance(base, FieldLoc) or self.checksum_mode is not None:
                        raise CompileError(
                            f"a bit slice cannot be passed as an `{p.direction}` "
                            "argument here on this target",
                            value.loc,
                        )
                    tmp = self.storage.new_scalar(self.fresh(p.name), t)
                    if p.direction == "inout":
                        sink.assign(self.field_node(tmp), ex.data(value, tmp.width))
                    callee.bind(p, tmp)
                    callee.copy_back.append((base, lo, hi, tmp))
                elif i in copied:
                    target = self.fixed_lvalue(value, caller, sink)
                    tmp = self._temporary(p, t)
                    if p.direction == "inout":
                        self.copy(tmp, target, sink, None, value.loc)
                    else:
                        for h in _headers_in(tmp):
                            sink.prim("remove_header", [self.header_node(h)])
                    callee.bind(p, tmp)
                    callee.copy_back.append((target, None, None, tmp))
                else:
                    target = ex.lvalue(value)
                    callee.bind(p, target)
                    if p.direction == "out":
                        out_headers.extend(_headers_in(target))
                continue
            if (
                i not in copied
                and isinstance(value, A.PathExpression | A.Member | A.ArrayIndex)
                and value.const_value is None
            ):
                b = ex.binding_of(value)
                if isinstance(b, Loc) and not isinstance(b, FieldLoc):
                    callee.bind(p, b)
                    continue
            if is_scalar_type(t):
                node, is_bool = ex.value(value, width_hint(value) or _width_or_none(t))
                if (
                    value.const_value is not None
                    or node.get("type") in ("hexstr", "bool")
                    or self.checksum_mode is not None  # nothing there can change it
                ):
                    callee.bind(p, ExprVal(node, t, is_bool))
                else:
                    # Copy-in, as P4 requires: the callee may change what the
                    # argument reads before it reads the parameter.
                    tmp = self.storage.new_scalar(self.fresh(p.name), t)
                    sink.assign(self.field_node(tmp), J.b2d(node) if is_bool else node)
                    callee.bind(p, tmp)
            else:
                tmp = self.storage.allocate(p.name, t, p.loc)
                self.assign_to(tmp, value, caller, sink)
                callee.bind(p, tmp)
        # An `out` header starts invalid (P4 copy-in/copy-out; p4c does the same). Done
        # after every argument is read: the argument's storage is used directly.
        for h in out_headers:
            sink.prim("remove_header", [self.header_node(h)], source_info(loc))

    def _temporary(self, p: A.Param, t: T.Type) -> Loc:
        if is_scalar_type(t):
            return self.storage.new_scalar(self.fresh(p.name), t)
        return self.storage.allocate(p.name, t, p.loc)

    def _copied_arguments(
        self, pairs: list[tuple[A.Param, A.Argument | None]], caller: Scope, decl: A.Node | None
    ) -> set[int]:
        """Positions of the arguments that must be copied in and out (aliasing.py)."""
        if self.checksum_mode is not None:
            return set()
        ex = ExprLowering(self, caller, None)
        copied: set[int] = set()
        by_ref: list[tuple[int, bool, set[tuple[str, str]]]] = []
        for i, (p, a) in enumerate(pairs):
            if a is None or isinstance(a.value, A.DontCare | A.Slice):
                continue
            v, t = a.value, p.type or a.value.type
            writes = p.direction in ("out", "inout")
            if v.const_value is not None:
                continue  # a constant: bound by value
            if not writes and (
                t is None
                or is_scalar_type(t)
                or not isinstance(v, A.PathExpression | A.Member | A.ArrayIndex)
            ):
                continue  # copied by value anyway
            if is_dynamic(v):
                copied.add(i)
                continue
            b = ex.binding_of(v)
            if isinstance(b, Loc):
                by_ref.append((i, writes, storage_keys(b)))
        if not by_ref:
            return copied
        outer: set[tuple[str, str]] = set()
        if decl is not None:
            home = self.decl_scope(decl, caller)
            for d in self.outer_storage.decls(decl):
                b = home.lookup(d)
                if isinstance(b, Loc):
                    outer |= storage_keys(b)
        calls_after = [
            any(a is not None and has_call(a.value) for _, a in pairs[i + 1 :])
            for i in range(len(pairs))
        ]
        for i, writes, keys in by_ref:
            shared = any(
                j != i and (writes or other_writes) and keys & other
                for j, other_writes, other in by_ref
            )
            if shared or keys & outer or calls_after[i]:
                copied.add(i)
        return copied

    def fixed_lvalue(self, e: A.Expression, scope: Scope, sink: Sink) -> Loc:
        """The storage an `out`/`inout` argument names, with run-time stack indices
        read once, now: copy-out writes where the argument pointed at the call."""
        pre = scope.lookup_lvalue(e)
        if pre is not None:
            return pre  # already fixed (the target of a compound assignment)
        inner = scope.child()
        ex = ExprLowering(self, inner, sink)
        for node in _run_time_indices(e):
            base = node.base if isinstance(node, A.ArrayIndex) else node.expr
            stack = ex.binding_of(base)
            if not isinstance(stack, StackLoc):
                raise CompileError("only header stacks can be indexed", node.loc)
            idx = self.storage.new_scalar(self.fresh("index"), T.BitsType(32, False))
            if isinstance(node, A.ArrayIndex):
                value = ex.data(node.index, 32)
            else:  # `stack.last`
                value = J.op(
                    "last_stack_index", None, {"type": "header_stack", "value": stack.name}
                )
            sink.assign(self.field_node(idx), value)
            dyn = J.op(
                "dereference_header_stack",
                {"type": "header_stack", "value": stack.name},
                self.field_node(idx),
            )
            inner.bind_lvalue(node, self.dynamic_header(stack, dyn))
        return ex.lvalue(e)

    def inline_action(
        self,
        action: A.ActionDecl,
        args: list[A.Argument | None],
        scope: Scope,
        sink: Sink,
        loc: SourceLocation | None,
    ) -> None:
        callee = self.decl_scope(action, scope).child()
        self.bind_params(action.params, args, scope, callee, sink, loc, action)
        self.inline_body(action.body, callee, sink, None)
        self.copy_back(callee, sink)

    def inline_body(
        self, body: A.BlockStatement, scope: Scope, sink: Sink, result: Loc | None
    ) -> None:
        ret = ReturnInfo(result=result)
        stmts = body.statements
        if stmts and isinstance(stmts[-1], A.ReturnStatement):
            ret.last_stmt = stmts[-1]
        scope.return_label = ret
        self.stmts(stmts, scope, sink)
        for j in ret.jumps:
            sink.patch(j, sink.here())

    def inline_function(self, mce: A.MethodCallExpression, scope: Scope, sink: Sink) -> Loc | None:
        call = mce.call
        assert call is not None and isinstance(call.decl, A.FunctionDecl)
        fn = call.decl
        callee = self.decl_scope(fn, scope).child()
        self.bind_params(fn.params, call.params_to_args, scope, callee, sink, mce.loc, fn)
        rt = fn.return_type.resolved
        result = None
        if rt is not None and not isinstance(rt, T.VoidType):
            result = self.storage.allocate(f"{fn.name}_retval", rt, mce.loc)
        self.inline_body(fn.body, callee, sink, result)
        self.copy_back(callee, sink)
        return result

    def decl_scope(self, decl: A.Node, scope: Scope) -> Scope:
        """The scope in which a callee's body is lowered: its defining control instance's
        scope for control-local actions, else the global scope."""
        owner = scope.lookup(decl)
        if isinstance(owner, Owner):
            return owner.scope
        return self.global_scope

    # ------------------------------------------------------------------ externs
    def slice_out_arguments(self, call: A.CallInfo, scope: Scope, sink: Sink) -> None:
        """Bit slices passed to an extern's `out`/`inout` parameters are written through
        temporaries (bound in `scope`), copied back by copy_back(scope) after the call."""
        params = call.func_type.params if call.func_type is not None else []
        ex = ExprLowering(self, scope, sink)
        for p, e in zip(params, self.call_args(call), strict=False):
            if p.direction not in ("out", "inout") or not isinstance(e, A.Slice):
                continue
            base_expr, lo, hi = flat_slice(e)
            base = ex.lvalue(base_expr)
            if not isinstance(base, FieldLoc) or e.type is None:
                raise CompileError("only a slice of a field can be written here", e.loc)
            tmp = self.storage.new_scalar(self.fresh(p.name), e.type)
            if p.direction == "inout":
                sink.assign(self.field_node(tmp), ex.data(e, tmp.width))
            scope.bind_lvalue(e, tmp)
            scope.copy_back.append((base, lo, hi, tmp))

    def ordered_arguments(self, call: A.CallInfo, scope: Scope, sink: Sink) -> Scope:
        """Arguments of an extern call are evaluated left to right: those before an
        argument that runs a call are read ahead into temporaries (their expressions
        bound to them in the returned scope), and their run-time stack indices fixed."""
        args = self.call_args(call)
        later = [any(has_call(x) for x in args[i + 1 :]) for i in range(len(args))]
        if not any(later):
            return scope
        inner = scope.child()
        ex = ExprLowering(self, inner, sink)
        params = call.func_type.params if call.func_type is not None else []
        for i, e in enumerate(args):
            if e is None or not later[i] or e.const_value is not None:
                continue
            direction = params[i].direction if i < len(params) else ""
            if direction in ("out", "inout"):
                if is_dynamic(e):
                    inner.bind_lvalue(e, self.fixed_lvalue(e, inner, sink))
            elif e.type is not None and is_scalar_type(e.type):
                node, is_bool = ex.value(e, width_hint(e))
                inner.bind(e, ExprVal(ex.snapshot(e, node, is_bool), e.type, is_bool))
        return inner

    def extern_ref(self, call: A.CallInfo, scope: Scope, loc: SourceLocation | None) -> ExternRef:
        ref = scope.lookup(call.instance)
        if not isinstance(ref, ExternRef):
            raise CompileError("unknown extern instance", loc)
        return ref

    def extern_method(
        self, mce: A.MethodCallExpression, scope: Scope, sink: Sink, src: J.Node | None
    ) -> None:
        call = mce.call
        assert call is not None
        scope = self.ordered_arguments(call, scope, sink)
        ex = ExprLowering(self, scope, sink)
        args = self.call_args(call)
        if call.kind == "packet_method" or (
            isinstance(call.instance, A.Param)
            and isinstance(call.instance.type, T.ExternType)
            and call.instance.type.name in ("packet_in", "packet_out")
        ):
            raise CompileError(
                f"`{call.name}` of a packet is only supported in parsers and deparsers", mce.loc
            )
        ref = self.extern_ref(call, scope, mce.loc)
        kind, name = ref.kind, call.name
        if kind == "register" and name == "read":
            dst = ex.lvalue(_arg(args, 0, mce))
            idx = ex.data(_arg(args, 1, mce), 32)
            sink.prim(
                "register_read",
                [
                    self.field_node(_field(dst, mce)),
                    {"type": "register_array", "value": ref.name},
                    idx,
                ],
                src,
            )
        elif kind == "register" and name == "write":
            idx = ex.data(_arg(args, 0, mce), 32)
            value = ex.data(_arg(args, 1, mce), ref.info.get("width"))
            sink.prim(
                "register_write", [{"type": "register_array", "value": ref.name}, idx, value], src
            )
        elif kind == "counter" and name == "count":
            idx = ex.data(_arg(args, 0, mce), 32)
            sink.prim("count", [{"type": "counter_array", "value": ref.name}, idx], src)
        elif kind == "direct_counter" and name == "count":
            pass  # counted by the table
        elif kind == "meter" and name == "execute_meter":
            idx = ex.data(_arg(args, 0, mce), 32)
            dst = ex.lvalue(_arg(args, 1, mce))
            sink.prim(
                "execute_meter",
                [
                    {"type": "meter_array", "value": ref.name},
                    idx,
                    self.field_node(_field(dst, mce)),
                ],
                src,
            )
        elif kind == "direct_meter" and name == "read":
            dst = _field(ex.lvalue(_arg(args, 0, mce)), mce)
            prev = ref.info.get("result_target")
            target = [dst.header, dst.field]
            if prev is not None and prev != target:
                raise CompileError(
                    "a direct meter can be read into only one field on this target", mce.loc
                )
            ref.info["result_target"] = target
            ref.info["json"]["result_target"] = target
        else:
            raise CompileError(f"`{kind}.{name}` is not supported on this target", mce.loc)

    def extern_function(
        self, mce: A.MethodCallExpression, scope: Scope, sink: Sink, src: J.Node | None
    ) -> None:
        call = mce.call
        assert call is not None
        scope = self.ordered_arguments(call, scope, sink)
        ex = ExprLowering(self, scope, sink)
        args = self.call_args(call)
        name = call.name
        if name == "mark_to_drop":
            sink.prim("mark_to_drop", [{"type": "header", "value": STANDARD_METADATA}], src)
        elif name == "hash":
            dst = _field(ex.lvalue(_arg(args, 0, mce)), mce)
            algo = _algo(_arg(args, 1, mce))
            base = ex.data(_arg(args, 2, mce), dst.width)
            calc = self.calculation(algo, _arg(args, 3, mce), scope, sink)
            size = ex.data(_arg(args, 4, mce))
            sink.prim(
                "modify_field_with_hash_based_offset",
                [self.field_node(dst), base, {"type": "calculation", "value": calc}, size],
                src,
            )
        elif name == "random":
            dst = _field(ex.lvalue(_arg(args, 0, mce)), mce)
            lo = ex.data(_arg(args, 1, mce), dst.width)
            hi = ex.data(_arg(args, 2, mce), dst.width)
            sink.prim("modify_field_rng_uniform", [self.field_node(dst), lo, hi], src)
        elif name == "digest":
            receiver = ex.data(_arg(args, 0, mce), 32)
            lid = self.learn_list(_arg(args, 1, mce), call, scope, sink)
            sink.prim("generate_digest", [receiver, J.hexstr(lid, 32)], src)
        elif name in ("clone", "clone_preserving_field_list"):
            kind = _arg(args, 0, mce).const_value
            member = kind.member if isinstance(kind, T.EnumValue) else None
            if member not in ("I2E", "E2E"):
                raise CompileError("the clone type must be CloneType.I2E or E2E", mce.loc)
            session = ex.data(_arg(args, 1, mce), 32)
            fl = 0
            if name == "clone_preserving_field_list":
                fl = self.field_list(_const_int(_arg(args, 2, mce)), mce.loc)
            prim = (
                "clone_ingress_pkt_to_egress" if member == "I2E" else "clone_egress_pkt_to_egress"
            )
            sink.prim(prim, [session, J.hexstr(fl, 32)], src)
        elif name in ("resubmit", "recirculate"):
            fl = self.field_list_of(_arg(args, 0, mce), scope, sink)
            sink.prim(name, [J.hexstr(fl, 32)], src)
        elif name == "clone3":
            kind = _arg(args, 0, mce).const_value
            member = kind.member if isinstance(kind, T.EnumValue) else None
            if member not in ("I2E", "E2E"):
                raise CompileError("the clone type must be CloneType.I2E or E2E", mce.loc)
            session = ex.data(_arg(args, 1, mce), 32)
            fl = self.field_list_of(_arg(args, 2, mce), scope, sink)
            prim = (
                "clone_ingress_pkt_to_egress" if member == "I2E" else "clone_egress_pkt_to_egress"
            )
            sink.prim(prim, [session, J.hexstr(fl, 32)], src)
        elif name in ("resubmit_preserving_field_list", "recirculate_preserving_field_list"):
            fl = self.field_list(_const_int(_arg(args, 0, mce)), mce.loc)
            sink.prim(name.split("_")[0], [J.hexstr(fl, 32)], src)
        elif name == "truncate":
            sink.prim("truncate", [ex.data(_arg(args, 0, mce), 32)], src)
        elif name in ("assert", "assume"):
            # Like p4c: the condition as data (b2d); BMv2's assert/assume take a Data.
            sink.prim(name, [J.b2d(ex.boolean(_arg(args, 0, mce)))], src)
        elif name == "log_msg":
            self.log_msg(mce, args, ex, sink, src)
        elif name in (
            "verify_checksum",
            "update_checksum",
            "verify_checksum_with_payload",
            "update_checksum_with_payload",
        ):
            self.checksum(mce, args, scope, sink)
        else:
            raise CompileError(f"extern `{name}` is not supported on this target", mce.loc)

    def log_msg(
        self,
        mce: A.MethodCallExpression,
        args: list[A.Expression | None],
        ex: ExprLowering,
        sink: Sink,
        src: J.Node | None,
    ) -> None:
        msg = _arg(args, 0, mce)
        if not isinstance(msg, A.StringLiteral):
            raise CompileError("log_msg needs a string literal", mce.loc)
        values: list[J.Node] = []
        if len(args) > 1 and args[1] is not None:
            data = args[1]
            elems = data.elements if isinstance(data, A.ListExpression) else None
            if isinstance(data, A.StructExpression):
                elems = [nf.value for nf in data.fields]
            if elems is None:
                loc = ex.lvalue(data)
                values = [self.field_node(f) for f in flatten_fields(loc)]
            else:
                values = [J.param(ex.data(e)) for e in elems]
        sink.prim(
            "log_msg",
            [
                {"type": "string", "value": msg.value},
                {"type": "parameters_vector", "value": values},
            ],
            src,
        )

    def checksum(
        self,
        mce: A.MethodCallExpression,
        args: list[A.Expression | None],
        scope: Scope,
        sink: Sink,
    ) -> None:
        call = mce.call
        assert call is not None
        name = call.name
        want = "verify" if name.startswith("verify") else "update"
        if self.checksum_mode != want:
            raise CompileError(
                f"{name} can only be called in the "
                f"{'VerifyChecksum' if want == 'verify' else 'ComputeChecksum'} control",
                mce.loc,
            )
        ex = ExprLowering(self, scope, None)
        cond_e = _arg(args, 0, mce)
        algo = _algo(_arg(args, 3, mce))
        calc = self.calculation(
            algo, _arg(args, 1, mce), scope, None, payload=name.endswith("_with_payload")
        )
        target = _field(ex.lvalue(_arg(args, 2, mce)), mce)
        cv = cond_e.const_value
        if_cond = None if cv is True else ex.boolean(cond_e)
        self.checksums.append(
            {
                "name": self.fresh("cksum"),
                "id": len(self.checksums),
                "source_info": source_info(mce.loc, print_expr(mce)),
                "target": [target.header, target.field],
                "type": "generic",
                "calculation": calc,
                "verify": want == "verify",
                "update": want == "update",
                "if_cond": if_cond,
            }
        )

    # ------------------------------------------------------------------ field lists
    def data_list(self, data: A.Expression, scope: Scope, sink: Sink | None) -> list[J.Node]:
        """The fields of a hash / checksum / digest data argument as input nodes."""
        ex = ExprLowering(self, scope, sink)
        elems: list[A.Expression]
        if isinstance(data, A.ListExpression):
            elems = data.elements
        elif isinstance(data, A.StructExpression):
            elems = [nf.value for nf in data.fields]
        else:
            elems = [data]
        out: list[J.Node] = []
        # A field listed before an element that runs a call is read ahead of the call.
        later = [any(has_call(x) for x in elems[i + 1 :]) for i in range(len(elems))]
        for i, e in enumerate(elems):
            cv = e.const_value
            if isinstance(cv, int) and not isinstance(cv, bool):
                w = width_hint(e) or max(cv.bit_length(), 1)
                node = J.hexstr(cv, w)
                node["bitwidth"] = w
                out.append(node)
                continue
            if isinstance(e, A.ListExpression | A.StructExpression):
                out.extend(self.data_list(e, scope, sink))
                continue
            b = None
            if isinstance(e, A.PathExpression | A.Member | A.ArrayIndex):
                b = ex.binding_of(e)
            if isinstance(b, HeaderLoc) and b.dynamic is None:
                out.append({"type": "header", "value": b.name})
            elif isinstance(b, StructLoc):
                out.extend(self.field_node(f) for f in flatten_fields(b))
            elif isinstance(b, FieldLoc) and b.dynamic is None and not later[i]:
                out.append(self.field_node(b))
            else:
                if sink is None:
                    raise CompileError(
                        "only fields, headers and constants are supported in this list", e.loc
                    )
                t = e.type or T.INT
                tmp = self.storage.new_scalar(self.fresh("tmp"), t)
                sink.assign(self.field_node(tmp), ex.data(e, tmp.width))
                out.append(self.field_node(tmp))
        return out

    def calculation(
        self,
        algo: str,
        data: A.Expression,
        scope: Scope,
        sink: Sink | None,
        payload: bool = False,
    ) -> str:
        inputs = self.data_list(data, scope, sink)
        if payload:
            inputs.append({"type": "payload", "value": None})
        key = repr((algo, inputs))
        if key in self._calc_keys:
            return self._calc_keys[key]
        name = self.fresh("calc")
        self.calculations.append(
            {
                "name": name,
                "id": len(self.calculations),
                "source_info": source_info(data.loc),
                "algo": algo,
                "input": inputs,
            }
        )
        self._calc_keys[key] = name
        return name

    def field_list(self, index: int, loc: SourceLocation | None) -> int:
        """The id of the field list of user-metadata fields annotated @field_list(index)."""
        if index in self._field_list_ids:
            return self._field_list_ids[index]
        elements: list[J.Node] = []
        if self.meta_loc is not None and isinstance(self.meta_type, T.StructType):
            _collect_field_list(self.meta_type, self.meta_loc, index, elements, self)
        ident = len(self.field_lists) + 1
        self.field_lists.append({"id": ident, "name": f"field_list{index}", "elements": elements})
        self._field_list_ids[index] = ident
        return ident

    def field_list_of(self, data: A.Expression, scope: Scope, sink: Sink) -> int:
        """A field list (its id) made of the fields a resubmit/recirculate/clone3 data
        argument names; p4c makes one per call."""
        elements = self.data_list(data, scope, sink)
        if any(e.get("type") != "field" for e in elements):
            raise CompileError("only fields can be preserved", data.loc)
        ident = len(self.field_lists) + 1
        self.field_lists.append({"id": ident, "name": self.fresh("fl"), "elements": elements})
        return ident

    def learn_list(self, data: A.Expression, call: A.CallInfo, scope: Scope, sink: Sink) -> int:
        t = call.type_args[0] if call.type_args else data.type
        tname = t.name if isinstance(t, T.StructLikeType) else f"digest_{len(self.learn_lists)}"
        elements = self.data_list(data, scope, sink)
        key = tname
        if key in self._learn_ids:
            ident = self._learn_ids[key]
            prev = self.learn_lists[ident - 1]
            if prev["elements"] != elements:
                # Same digest type from different fields: a separate list.
                key = f"{tname}#{len(self.learn_lists)}"
            else:
                return ident
        ident = len(self.learn_lists) + 1
        self.learn_lists.append({"id": ident, "name": tname, "elements": elements})
        self._learn_ids[key] = ident
        if isinstance(t, T.StructLikeType) and not any(d.name == tname for d in self.cp.digests):
            fields = [(f.name, f.type) for f in t.fields if is_scalar_type(f.type)]
            self.cp.digests.append(DigestInfo(tname, fields, tname, loc=data.loc))
        return ident


# ---------------------------------------------------------------------- helpers


def scope_loop(scope: Scope) -> LoopControl | None:
    s: Scope | None = scope
    while s is not None:
        if s.loop is not None:
            return s.loop  # type: ignore[no-any-return]
        if s.return_label is not None:
            return None  # a callee's body: its caller's loop is out of reach
        s = s.parent
    return None


def scope_return(scope: Scope) -> ReturnInfo | None:
    s: Scope | None = scope
    while s is not None:
        if s.return_label is not None:
            return s.return_label
        s = s.parent
    return None


def flat_slice(e: A.Slice) -> tuple[A.Expression, int, int]:
    """`x[7:4][1:0]` as `x[5:4]`: the sliced expression that is not a slice, and the
    low and high bit in it."""
    lo, hi = e.lo_value, e.hi_value
    base = e.base
    while isinstance(base, A.Slice):
        lo, hi = lo + base.lo_value, hi + base.lo_value
        base = base.base
    return base, lo, hi


def _sub_expressions(e: A.Expression) -> list[A.Expression]:
    if isinstance(e, A.Member):
        return [e.expr]
    if isinstance(e, A.ArrayIndex):
        return [e.base, e.index]
    if isinstance(e, A.Slice):
        return [e.base]
    if isinstance(e, A.UnaryOp):
        return [e.operand]
    if isinstance(e, A.BinaryOp):
        return [e.left, e.right]
    if isinstance(e, A.Ternary):
        return [e.cond, e.then, e.otherwise]
    if isinstance(e, A.Cast):
        return [e.expr]
    if isinstance(e, A.ListExpression):
        return list(e.elements)
    if isinstance(e, A.StructExpression):
        return [f.value for f in e.fields]
    if isinstance(e, A.MethodCallExpression):
        return [e.method, *(a.value for a in e.args)]
    return []


def _run_time_indices(e: A.Expression) -> list[A.ArrayIndex | A.Member]:
    """The stack indexings inside an l-value whose index is not a constant (and
    `stack.last`), outermost base first."""
    out: list[A.ArrayIndex | A.Member] = []
    while True:
        if isinstance(e, A.ArrayIndex):
            if e.index.const_value is None:
                out.append(e)
            e = e.base
        elif isinstance(e, A.Member):
            if e.member == "last":
                out.append(e)
            e = e.expr
        else:
            return out[::-1]


def _headers_in(loc: Any) -> list[HeaderLoc]:
    """The header instances a storage location holds (itself, stack elements, union
    members, headers inside a struct)."""
    if isinstance(loc, HeaderLoc):
        return [loc]
    out: list[HeaderLoc] = []
    if isinstance(loc, StackLoc):
        for el in loc.elements:
            out.extend(_headers_in(el))
    elif isinstance(loc, UnionLoc):
        for m in loc.members.values():
            out.extend(_headers_in(m))
    elif isinstance(loc, StructLoc):
        for f in loc.fields.values():
            out.extend(_headers_in(f))
    return out


def flatten_fields(loc: Loc) -> list[FieldLoc]:
    if isinstance(loc, FieldLoc):
        return [loc]
    if isinstance(loc, HeaderLoc | StructLoc):
        out: list[FieldLoc] = []
        for f in loc.fields.values():
            out.extend(flatten_fields(f))
        return out
    raise CompileError("expected fields")


def _collect_field_list(
    st: T.StructType, loc: Loc, index: int, out: list[J.Node], lw: Lowering
) -> None:
    if not isinstance(loc, StructLoc):
        return
    for f in st.fields:
        sub = loc.fields.get(f.name)
        ft = T.strip_newtype(f.type)
        if isinstance(ft, T.StructType) and sub is not None:
            _collect_field_list(ft, sub, index, out, lw)
            continue
        for ann in f.annotations:
            if ann.name != "field_list" or not ann.expressions:
                continue
            ids = [x.const_value for x in ann.expressions]
            if index in ids and isinstance(sub, FieldLoc):
                out.append(lw.field_node(sub))


def _arg(args: list[A.Expression | None], i: int, mce: A.MethodCallExpression) -> A.Expression:
    if i >= len(args) or args[i] is None:
        raise CompileError(f"missing argument {i + 1}", mce.loc)
    a = args[i]
    assert a is not None
    return a


def _field(loc: Loc, mce: A.MethodCallExpression) -> FieldLoc:
    if not isinstance(loc, FieldLoc):
        raise CompileError("expected a scalar field as the destination", mce.loc)
    return loc


def _algo(e: A.Expression) -> str:
    cv = e.const_value
    if isinstance(cv, T.EnumValue) and cv.member in HASH_ALGOS:
        return HASH_ALGOS[cv.member]
    raise CompileError("expected a HashAlgorithm constant", e.loc)


def _const_int(e: A.Expression) -> int:
    cv = e.const_value
    if isinstance(cv, int) and not isinstance(cv, bool):
        return cv
    raise CompileError("expected a compile-time constant", e.loc)


def _width_or_none(t: T.Type) -> int | None:
    try:
        return value_width(t)
    except CompileError:
        return None


__all__ = ["Lowering", "ReturnInfo", "flatten_fields", "source_info"]
