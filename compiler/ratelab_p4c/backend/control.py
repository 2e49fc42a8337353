"""Lowering of controls to BMv2 pipelines: tables, conditionals, and p4c-style
synthesized single-action tables for the statements between them.

The apply body is first turned (in program order, so declarations and storage are
allocated in order) into a tree of flow nodes; the tree is then wired backwards so each
node knows its successor (`next_tables`, `true_next`, `false_next`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .. import ast as A
from .. import types as T
from ..errors import CompileError, SourceLocation
from . import jsonutil as J
from .exprs import ExprLowering, print_expr, width_hint
from .externs import declare_instance
from .lower import Lowering, flat_slice, source_info
from .model import ActionInfo, ActionRefInfo, MatchFieldInfo, TableInfo
from .names import annotation_int, annotations_of, cp_name, id_annotation
from .scope import ExprVal, ExternRef, Owner, Scope
from .sinks import ActionSink
from .storage import FieldLoc, HeaderLoc

_MATCH_RANK = {"exact": 0, "lpm": 1, "ternary": 2, "optional": 2, "range": 3}


@dataclass(eq=False)
class ControlInstance:
    """A control instantiated inside another control (inlined when applied)."""

    decl: A.ControlDecl
    prefix: str
    scope: Scope
    applied: bool = False


@dataclass(eq=False)
class TableState:
    decl: A.TableDecl
    name: str
    scope: Scope
    applied: bool = False


@dataclass
class Flow:
    """One node of the control-flow tree."""

    kind: str  # act | table | cond | return | exit | sub
    json: dict[str, Any] | None = None
    branches: dict[str, list[Flow]] = field(default_factory=dict)
    mode: str = "plain"  # table: plain | hit | switch


@dataclass
class Pipeline:
    name: str
    tables: list[dict[str, Any]] = field(default_factory=list)
    conditionals: list[dict[str, Any]] = field(default_factory=list)
    action_profiles: list[dict[str, Any]] = field(default_factory=list)
    init_table: str | None = None
    loc: SourceLocation | None = None

    def json(self, ident: int) -> dict[str, Any]:
        return {
            "name": self.name,
            "id": ident,
            "source_info": source_info(self.loc),
            "init_table": self.init_table,
            "tables": self.tables,
            "action_profiles": self.action_profiles,
            "conditionals": self.conditionals,
        }


class ControlLowering:
    """Lowers one top-level control (and the controls it applies) into a Pipeline."""

    def __init__(self, lw: Lowering, pipeline: Pipeline) -> None:
        self.lw = lw
        self.pipe = pipeline
        self.pending: ActionSink | None = None
        self.pending_loc: SourceLocation | None = None
        self._direct_applied: set[tuple[A.ControlDecl, str]] = set()

    # ------------------------------------------------------------------ entry
    def lower_top(self, decl: A.ControlDecl, scope: Scope, prefix: str) -> None:
        flows = self.instantiate(decl, scope, prefix)
        self.pipe.init_table = self.wire(flows, None, None)

    def instantiate(self, decl: A.ControlDecl, scope: Scope, prefix: str) -> list[Flow]:
        """Declare the control's locals in scope and lower its apply body."""
        out: list[Flow] = []
        for d in decl.locals:
            if isinstance(d, A.ActionDecl):
                scope.bind(d, Owner(scope))
            elif isinstance(d, A.TableDecl):
                scope.bind(d, TableState(d, cp_name(d, prefix), scope))
            elif isinstance(d, A.VariableDecl):
                self.lw.declare_variable(d, scope, self.sink(d.loc))
            elif isinstance(d, A.ConstDecl):
                pass
            elif isinstance(d, A.InstanceDecl):
                if isinstance(d.decl, A.ControlDecl):
                    inst_scope = Scope(self.lw.global_scope, f"{prefix}{d.name}.")
                    _bind_ctor_params(d.decl, d.params_to_args, inst_scope, scope, self.lw)
                    scope.bind(d, ControlInstance(d.decl, f"{prefix}{d.name}.", inst_scope))
                else:
                    scope.bind(d, declare_instance(self.lw, d, prefix, self.pipe))
            else:
                raise CompileError("this declaration is not supported in a control", d.loc)
        self.block(decl.body.statements, scope, out)
        self.flush(out)
        return out

    # ------------------------------------------------------------------ statements
    def sink(self, loc: SourceLocation | None) -> ActionSink:
        if self.pending is None:
            self.pending = ActionSink()
            self.pending_loc = loc
        return self.pending

    def flush(self, out: list[Flow]) -> None:
        """Turn the pending statements into a synthesized action + table."""
        if self.pending is None:
            return
        sink, self.pending = self.pending, None
        if sink.empty():
            return
        act_name = self.lw.fresh("act")
        action = self.lw.add_action_json(act_name, [], sink.finish(), self.pending_loc)
        tbl = self.synth_table(f"tbl_{act_name}", action)
        out.append(Flow("act", tbl))

    def direct_action(self, mce: A.MethodCallExpression, scope: Scope, out: list[Flow]) -> bool:
        """`a(args);` in an apply block becomes a table `tbl_a` whose const default
        entry runs the action itself, as p4c does.  False when the action data
        arguments are not constants (then the body is inlined instead)."""
        call = mce.call
        assert call is not None and isinstance(call.decl, A.ActionDecl)
        decl = call.decl
        data_args = [
            a for p, a in zip(decl.params, call.params_to_args, strict=False) if not p.direction
        ]
        if any(a is None or not _is_const_scalar(a.value) for a in data_args):
            return False
        ref = A.ActionRef(
            name=decl.name,
            expr=mce.method,
            args=list(mce.args),
            has_parens=True,
            decl=decl,
            params_to_args=list(call.params_to_args),
            loc=mce.loc,
        )
        act = self.table_action(ref, scope)
        self.flush(out)
        tbl = self.synth_table(f"tbl_{decl.name}", act)
        tbl["default_entry"]["action_data"] = self.action_data(ref, act, scope)
        out.append(Flow("act", tbl))
        return True

    def synth_table(self, name: str, action: ActionInfo) -> dict[str, Any]:
        tbl = self.lw.new_table_json(self.lw.fresh(name))
        tbl.update(
            {
                "key": [],
                "match_type": "exact",
                "type": "simple",
                "max_size": 1024,
                "with_counters": False,
                "support_timeout": False,
                "direct_meters": None,
                "action_ids": [action.json_id],
                "actions": [action.name],
                "base_default_next": None,
                "next_tables": {action.name: None},
                "default_entry": {
                    "action_id": action.json_id,
                    "action_const": True,
                    "action_data": [],
                    "action_entry_const": True,
                },
            }
        )
        self.pipe.tables.append(tbl)
        return tbl

    def block(self, stmts: list[A.Node], scope: Scope, out: list[Flow]) -> bool:
        """Lower statements; returns False when control cannot continue (return/exit)."""
        return all(self.statement(s, scope, out) for s in stmts)

    def statement(self, s: A.Node, scope: Scope, out: list[Flow]) -> bool:
        self.lw.at(s)
        if isinstance(s, A.BlockStatement):
            return self.block(s.statements, scope, out)
        if isinstance(s, A.MethodCallStatement):
            call = s.call.call
            if call is not None and call.kind == "table_apply":
                self.apply_table(s.call, scope, out, "plain", {})
                return True
            if call is not None and call.kind == "control_apply":
                self.apply_control(s.call, scope, out)
                return True
            self.hoist_table_results(s.call, scope, out)
            if (
                call is not None
                and call.kind == "action"
                and self.direct_action(s.call, scope, out)
            ):
                return True
            self.lw.stmt(s, scope, self.sink(s.loc))
            return True
        if isinstance(s, A.IfStatement):
            return self.if_statement(s, scope, out)
        if isinstance(s, A.ForStatement | A.ForInStatement):
            return self.lw.unroll(
                s,
                scope,
                lambda: self.sink(s.loc),
                lambda inner: self.statement(s.body, inner, out),
            )
        if isinstance(s, A.BreakStatement | A.ContinueStatement):
            raise CompileError(
                "`break` and `continue` are supported only in for loops inside actions and "
                "functions on this target (a control's apply block has no jumps in BMv2)",
                s.loc,
            )
        if isinstance(s, A.SwitchStatement):
            return self.switch_statement(s, scope, out)
        if isinstance(s, A.ReturnStatement):
            self.flush(out)
            out.append(Flow("return"))
            return False
        if isinstance(s, A.AssignmentStatement):
            self.hoist_table_results(s.rhs, scope, out)
        elif isinstance(s, A.VariableDecl) and s.init is not None:
            self.hoist_table_results(s.init, scope, out)
        if isinstance(s, A.ExitStatement):
            self.sink(s.loc).exit(source_info(s.loc))
            self.flush(out)
            out.append(Flow("exit"))
            return False
        self.lw.stmt(s, scope, self.sink(s.loc))
        return True

    def if_statement(self, s: A.IfStatement, scope: Scope, out: list[Flow]) -> bool:
        cv = s.cond.const_value
        if isinstance(cv, bool):
            branch = s.then if cv else s.otherwise
            return branch is None or self.statement(branch, scope, out)
        apply_call, negate = _table_hit_condition(s.cond)
        then_flows: list[Flow] = []
        else_flows: list[Flow] = []
        if apply_call is not None:
            branches = {"then": then_flows, "else": else_flows}
            self.apply_table(apply_call, scope, out, "hit", branches, negate)
        else:
            self.hoist_table_results(s.cond, scope, out)
            cond = ExprLowering(self.lw, scope, self.sink(s.loc)).boolean(s.cond)
            self.flush(out)
            name = self.lw.fresh("node")
            cj = {
                "name": name,
                "id": self.lw.next_conditional_id(),
                "source_info": source_info(s.cond.loc, print_expr(s.cond)),
                "expression": cond,
                "true_next": None,
                "false_next": None,
            }
            self.pipe.conditionals.append(cj)
            out.append(Flow("cond", cj, {"then": then_flows, "else": else_flows}))
        self._branch(s.then, scope, then_flows)
        if s.otherwise is not None:
            self._branch(s.otherwise, scope, else_flows)
        return True

    def hoist_table_results(self, e: A.Expression, scope: Scope, out: list[Flow]) -> None:
        """Table applications used as values (`t.apply().hit` / `.miss`): apply the table
        first and record the outcome in a temporary (as p4c does), which the expression
        then reads.  Under `&&`, `||` and `?:` the application only happens when the
        operand is evaluated, so such operators become conditionals writing a temporary."""
        if not _contains_table_apply(e):
            return
        if _is_table_result(e):
            assert isinstance(e, A.Member)
            self._hoist_hit(e, scope, out)
            return
        if isinstance(e, A.BinaryOp) and e.op in ("&&", "||") and _contains_table_apply(e.right):
            self.hoist_table_results(e.left, scope, out)
            tmp = self.lw.storage.new_scalar(self.lw.fresh("cond"), T.BOOL)
            ex = ExprLowering(self.lw, scope, self.sink(e.loc))
            self.sink(e.loc).assign(self.lw.field_node(tmp), J.b2d(ex.boolean(e.left)))
            test = J.d2b(self.lw.field_node(tmp))
            self._guarded(
                test if e.op == "&&" else J.op("not", None, test),
                e,
                scope,
                out,
                lambda flows: self._assign_value(tmp, e.right, scope, flows),
                None,
            )
            scope.bind(e, ExprVal(J.d2b(self.lw.field_node(tmp)), T.BOOL, True))
            return
        if isinstance(e, A.Ternary) and (
            _contains_table_apply(e.then) or _contains_table_apply(e.otherwise)
        ):
            self.hoist_table_results(e.cond, scope, out)
            t = e.type or T.INT
            tmp = self.lw.storage.new_scalar(self.lw.fresh("cond"), t)
            test = ExprLowering(self.lw, scope, self.sink(e.loc)).boolean(e.cond)
            self._guarded(
                test,
                e,
                scope,
                out,
                lambda flows: self._assign_value(tmp, e.then, scope, flows),
                lambda flows: self._assign_value(tmp, e.otherwise, scope, flows),
            )
            node = self.lw.field_node(tmp)
            is_bool = isinstance(T.strip_newtype(t), T.BoolType)
            scope.bind(e, ExprVal(J.d2b(node) if is_bool else node, t, is_bool))
            return
        if (
            isinstance(e, A.MethodCallExpression)
            and e.call is not None
            and e.call.kind == "table_apply"
        ):
            raise CompileError("use `t.apply().hit` or `.miss` here", e.loc)
        if isinstance(e, A.Member) and isinstance(e.expr, A.MethodCallExpression):
            call = e.expr.call
            if call is not None and call.kind == "table_apply":
                raise CompileError(f"`.{e.member}` can only be used in a switch", e.loc)
        for v in vars(e).values():
            if isinstance(v, A.Expression):
                self.hoist_table_results(v, scope, out)
            elif isinstance(v, list):
                for item in v:
                    if isinstance(item, A.Expression):
                        self.hoist_table_results(item, scope, out)
                    elif isinstance(item, A.Argument):
                        self.hoist_table_results(item.value, scope, out)

    def _hoist_hit(self, member: A.Member, scope: Scope, out: list[Flow]) -> None:
        call = member.expr
        assert isinstance(call, A.MethodCallExpression)
        tmp = self.lw.storage.new_scalar(self.lw.fresh("hit"), T.BOOL)
        branches: dict[str, list[Flow]] = {"then": [], "else": []}
        self.apply_table(call, scope, out, "hit", branches)
        for key, value in (("then", 1), ("else", 0)):
            saved, self.pending = self.pending, None
            self.sink(member.loc).assign(self.lw.field_node(tmp), J.hexstr(value, 1))
            self.flush(branches[key])
            self.pending = saved
        node = J.d2b(self.lw.field_node(tmp))
        if member.member == "miss":
            node = J.op("not", None, node)
        scope.bind(member, ExprVal(node, T.BOOL, True))

    def _assign_value(self, tmp: FieldLoc, e: A.Expression, scope: Scope, out: list[Flow]) -> None:
        """tmp = e, applying the tables e uses first."""
        self.hoist_table_results(e, scope, out)
        ex = ExprLowering(self.lw, scope, self.sink(e.loc))
        self.sink(e.loc).assign(self.lw.field_node(tmp), ex.data(e, tmp.width))

    def _guarded(
        self,
        test: J.Node,
        where: A.Expression,
        scope: Scope,
        out: list[Flow],
        then: Any,
        otherwise: Any,
    ) -> None:
        """A conditional node on `test` whose branches are built by the callbacks."""
        self.flush(out)
        cj = {
            "name": self.lw.fresh("node"),
            "id": self.lw.next_conditional_id(),
            "source_info": source_info(where.loc, print_expr(where)),
            "expression": test,
            "true_next": None,
            "false_next": None,
        }
        self.pipe.conditionals.append(cj)
        branches: dict[str, list[Flow]] = {"then": [], "else": []}
        for key, build in (("then", then), ("else", otherwise)):
            if build is None:
                continue
            saved, self.pending = self.pending, None
            build(branches[key])
            self.flush(branches[key])
            self.pending = saved
        out.append(Flow("cond", cj, branches))

    def _branch(self, s: A.Statement, scope: Scope, out: list[Flow]) -> None:
        saved, self.pending = self.pending, None
        self.statement(s, scope, out)
        self.flush(out)
        self.pending = saved

    def switch_statement(self, s: A.SwitchStatement, scope: Scope, out: list[Flow]) -> bool:
        e = s.expr
        if not (
            isinstance(e, A.Member)
            and e.member == "action_run"
            and isinstance(e.expr, A.MethodCallExpression)
            and e.expr.call is not None
            and e.expr.call.kind == "table_apply"
        ):
            # A switch on a value: lowered inside an action with jumps.
            self.lw.stmt(s, scope, self.sink(s.loc))
            return True
        branches: dict[str, list[Flow]] = {}
        pending_labels: list[str] = []
        default: list[Flow] | None = None
        bodies: list[tuple[list[Flow], A.BlockStatement]] = []
        for case in s.cases:
            if isinstance(case.label, A.DefaultExpression):
                flows: list[Flow] = []
                default = flows
                for lbl in pending_labels:
                    branches[lbl] = flows
                pending_labels = []
                if case.body is not None:
                    bodies.append((flows, case.body))
                continue
            lbl_decl = case.label.decl if isinstance(case.label, A.PathExpression) else None
            if not isinstance(lbl_decl, A.ActionDecl):
                raise CompileError("expected an action name", case.label.loc)
            owner = self.lw.decl_scope(lbl_decl, scope)
            pending_labels.append(cp_name(lbl_decl, owner.prefix))
            if case.body is None:
                continue
            flows = []
            for lbl in pending_labels:
                branches[lbl] = flows
            pending_labels = []
            bodies.append((flows, case.body))
        if default is not None:
            branches["__default__"] = default
        self.apply_table(e.expr, scope, out, "switch", branches)
        for flows, body in bodies:
            self._branch(body, scope, flows)
        return True

    # ------------------------------------------------------------------ tables
    def apply_table(
        self,
        mce: A.MethodCallExpression,
        scope: Scope,
        out: list[Flow],
        mode: str,
        branches: dict[str, list[Flow]],
        negate: bool = False,
    ) -> None:
        call = mce.call
        assert call is not None
        state = scope.lookup(call.decl)
        if not isinstance(state, TableState):
            raise CompileError("unknown table", mce.loc)
        if state.applied:
            raise CompileError(
                f"table `{state.decl.name}` is applied more than once; this target "
                "supports a single application per table",
                mce.loc,
            )
        state.applied = True
        tbl = self.table_json(state, mce.loc)
        self.flush(out)
        if mode == "hit" and negate:
            branches = {"then": branches["else"], "else": branches["then"]}
        out.append(Flow("table", tbl, branches, mode))

    def table_json(self, st: TableState, loc: SourceLocation | None) -> dict[str, Any]:
        lw = self.lw
        decl, scope = st.decl, st.scope
        lw.at(decl)
        info = TableInfo(
            st.name,
            explicit_id=id_annotation(decl),
            annotations=annotations_of(decl),
            hidden=decl.has_annotation("hidden"),
            loc=decl.loc,
        )
        tbl = lw.new_table_json(st.name)
        tbl["source_info"] = source_info(decl.loc, decl.name)
        keys: list[dict[str, Any]] = []
        selector_inputs: list[J.Node] = []
        kinds: list[str] = []
        for k in decl.keys:
            mk = k.match_kind
            target, mask, width = self.key_target(k, scope)
            kname = k.name_annotation or print_expr(k.expr)
            if mk == "selector":
                selector_inputs.append({"type": "field", "value": target})
                continue
            if mk not in _MATCH_RANK:
                raise CompileError(f"match kind `{mk}` is not supported by BMv2", k.loc)
            kinds.append(mk)
            keys.append(
                {
                    # BMv2 runs optional matches as ternary ones (full or empty mask).
                    "match_type": "ternary" if mk == "optional" else mk,
                    "name": kname,
                    "target": target,
                    "mask": mask,
                }
            )
            info.match_fields.append(
                MatchFieldInfo(kname, width, mk, annotations_of(k), _type_name(k.expr.type))
            )
        table_kind = "exact"
        for mk in kinds:
            if _MATCH_RANK[mk] > _MATCH_RANK[table_kind]:
                table_kind = mk
        if table_kind == "optional":
            table_kind = "ternary"
        tbl["key"] = keys
        tbl["match_type"] = table_kind
        # Actions.
        actions: list[ActionInfo] = []
        for ref in decl.actions:
            act = self.table_action(ref, scope)
            if act not in actions:
                actions.append(act)
            scope_name = "TABLE_AND_DEFAULT"
            marked = [ref, ref.decl] if ref.decl is not None else [ref]
            if any(m.has_annotation("defaultonly") for m in marked):
                scope_name = "DEFAULT_ONLY"
            elif any(m.has_annotation("tableonly") for m in marked):
                scope_name = "TABLE_ONLY"
            info.action_refs.append(ActionRefInfo(act, scope_name, annotations_of(ref)))
        default_ref = decl.default_action
        if default_ref is not None:
            default_act = self.table_action(default_ref, scope)
        else:
            noaction = lw.program.find("NoAction")
            if not isinstance(noaction, A.ActionDecl):
                raise CompileError("table has no default action and NoAction is missing", loc)
            default_act = lw.table_action_json(noaction, lw.global_scope, [], [])
        if default_act not in actions:
            actions.append(default_act)
            info.action_refs.append(ActionRefInfo(default_act, "DEFAULT_ONLY"))
        if decl.default_action_const:
            info.const_default_action = default_act
        tbl["action_ids"] = [a.json_id for a in actions]
        tbl["actions"] = [a.name for a in actions]
        # Properties.
        size = decl.size.const_value if decl.size is not None else None
        if not isinstance(size, int) or size <= 0:
            # A table with const entries holds exactly those.
            size = len(decl.entries) if decl.entries and decl.entries_const else 1024
        tbl["max_size"] = size
        info.size = tbl["max_size"]
        tbl["type"] = "simple"
        impl = decl.property("implementation")
        if impl is not None and impl.value is not None:
            if isinstance(impl.value, A.ConstructorCall):
                ref = self._inline_profile(impl)
            else:
                ref = self._extern_of(impl.value, scope)
            if ref.kind not in ("action_profile", "action_selector"):
                raise CompileError("implementation must be an action profile/selector", impl.loc)
            tbl["type"] = "indirect_ws" if ref.kind == "action_selector" else "indirect"
            tbl["action_profile"] = ref.name
            prof = ref.info["json"]
            if ref.kind == "action_selector":
                if "selector" in prof and prof["selector"]["input"] != selector_inputs:
                    raise CompileError(
                        "tables sharing an action selector must use the same selector keys",
                        impl.loc,
                    )
                prof["selector"] = {"algo": ref.info["algo"], "input": selector_inputs}
            if prof not in self.pipe.action_profiles:
                self.pipe.action_profiles.append(prof)
            ref.info["cp"].tables.append(st.name)
            info.implementation = ref.name
        elif selector_inputs:
            raise CompileError("selector keys need an action_selector implementation", loc)
        tbl["with_counters"] = False
        counters = decl.property("counters")
        if counters is not None and counters.value is not None:
            ref = self._extern_of(counters.value, scope)
            if ref.kind != "direct_counter":
                raise CompileError("`counters` must be a direct_counter", counters.loc)
            tbl["with_counters"] = True
            ref.info["json"]["binding"] = st.name
            ref.info["cp"].direct_table = st.name
            info.direct_counter = ref.name
        timeout = decl.property("support_timeout")
        tbl["support_timeout"] = bool(
            timeout is not None and timeout.value is not None and timeout.value.const_value is True
        )
        info.support_timeout = tbl["support_timeout"]
        tbl["direct_meters"] = None
        meters = decl.property("meters")
        if meters is not None and meters.value is not None:
            ref = self._extern_of(meters.value, scope)
            if ref.kind != "direct_meter":
                raise CompileError("`meters` must be a direct_meter", meters.loc)
            tbl["direct_meters"] = ref.name
            ref.info["json"]["binding"] = st.name
            ref.info["json"]["size"] = tbl["max_size"]
            ref.info["cp"].direct_table = st.name
            ref.info["table_json"] = tbl
            info.direct_meter = ref.name
        tbl["base_default_next"] = None
        tbl["next_tables"] = {}
        if tbl["type"] == "simple":
            # Like p4c: no default entry for tables with action profiles.
            tbl["default_entry"] = self.default_entry(default_ref, default_act, decl, scope)
        if decl.entries is not None:
            if tbl["type"] != "simple":
                raise CompileError(
                    "table entries are not supported with an action profile/selector on BMv2",
                    decl.loc,
                )
            tbl["entries"] = self.entries(decl, keys, scope)
            info.has_initial_entries = True
            info.is_const = decl.entries_const or all(e.is_const for e in decl.entries)
        self.pipe.tables.append(tbl)
        if not info.hidden:
            lw.cp.tables.append(info)
            for ref_info in info.action_refs:
                lw.publish_action(ref_info.action)
        return tbl

    def _inline_profile(self, prop: A.TableProperty) -> ExternRef:
        """`implementation = action_profile(N);`: an instance of its own, named like p4c
        names it: the property's @name as written (no control prefix), else
        "implementation"."""
        cc = prop.value
        assert isinstance(cc, A.ConstructorCall)
        if not isinstance(cc.type, T.ExternType) or cc.type.name not in (
            "action_profile",
            "action_selector",
        ):
            raise CompileError("implementation must be an action profile/selector", cc.loc)
        name = prop.name_annotation or "implementation"
        name = name.removeprefix(".")
        if any(p.name == name for p in self.lw.cp.action_profiles):
            raise CompileError(
                f"another action profile is already named `{name}`; give this "
                'implementation its own @name("...")',
                prop.loc,
            )
        d = A.InstanceDecl(
            name=name,
            type_ref=cc.target,
            args=list(cc.args),
            type=cc.type,
            decl=cc.decl,
            params_to_args=list(cc.args),
            loc=cc.loc,
        )
        return declare_instance(self.lw, d, "", self.pipe)

    def _extern_of(self, e: A.Expression, scope: Scope) -> ExternRef:
        if isinstance(e, A.PathExpression):
            ref = scope.lookup(e.decl)
            if isinstance(ref, ExternRef):
                return ref
        raise CompileError("expected the name of an extern instance", e.loc)

    def key_target(self, k: A.KeyElement, scope: Scope) -> tuple[Any, Any, int]:
        """The BMv2 key target, static mask and P4Info bit width of a key element."""
        e = k.expr
        ex = ExprLowering(self.lw, scope, self.sink(k.loc))
        if (
            isinstance(e, A.MethodCallExpression)
            and e.call is not None
            and e.call.kind == "header_method"
            and e.call.name == "isValid"
        ):
            assert isinstance(e.method, A.Member)
            h = ex.lvalue(e.method.expr)
            if isinstance(h, HeaderLoc) and h.dynamic is None:
                return [h.name, "$valid$"], None, 1
            # A union's validity (any member valid) goes through a temporary below.
        if isinstance(e, A.Slice) and flat_slice(e)[1] == 0:
            # The low bits of a field: the field under a mask, whose entry values (from
            # `entries` and the control plane) are the slice's values as they are. A
            # slice higher up goes through a temporary below, so they stay so too.
            base_expr, lo, hi = flat_slice(e)
            base = ex.binding_of(base_expr)
            if isinstance(base, FieldLoc) and base.dynamic is None:
                w = base.width
                m = ((1 << (hi - lo + 1)) - 1) << lo
                return [base.header, base.field], J.hexstr(m, w)["value"], hi - lo + 1
        if isinstance(e, A.PathExpression | A.Member | A.ArrayIndex):
            b = ex.binding_of(e)
            if isinstance(b, FieldLoc) and b.dynamic is None:
                return [b.header, b.field], None, b.width
        # Any other expression: computed into a temporary before the table.
        t = e.type or T.INT
        tmp = self.lw.storage.new_scalar(self.lw.fresh("key"), t)
        self.sink(k.loc).assign(self.lw.field_node(tmp), ex.data(e, tmp.width))
        return [tmp.header, tmp.field], None, tmp.width

    def table_action(self, ref: A.ActionRef, scope: Scope) -> ActionInfo:
        if ref.decl is None:
            raise CompileError(f"unknown action `{ref.name}`", ref.loc)
        owner = self.lw.decl_scope(ref.decl, scope)
        directed = [
            (p, a)
            for p, a in zip(ref.decl.params, ref.params_to_args, strict=False)
            if p.direction and a is not None
        ]
        return self.lw.table_action_json(
            ref.decl, owner, [p for p, _ in directed], [a for _, a in directed], scope
        )

    def default_entry(
        self,
        ref: A.ActionRef | None,
        act: ActionInfo,
        decl: A.TableDecl,
        scope: Scope,
    ) -> dict[str, Any]:
        data: list[str] = []
        if ref is not None and ref.decl is not None:
            data = self.action_data(ref, act, scope)
        return {
            "action_id": act.json_id,
            "action_const": decl.default_action_const,
            "action_data": data,
            "action_entry_const": decl.default_action_const,
        }

    def action_data(self, ref: A.ActionRef, act: ActionInfo, scope: Scope) -> list[str]:
        assert ref.decl is not None
        out: list[str] = []
        pi = 0
        for p, a in zip(ref.decl.params, ref.params_to_args, strict=False):
            if p.direction:
                continue
            if a is None:
                raise CompileError(f"missing action data `{p.name}`", ref.loc)
            v = a.value.const_value
            if isinstance(v, bool):
                v = int(v)
            if isinstance(v, T.EnumValue) and v.value is not None:
                v = v.value
            if not isinstance(v, int):
                raise CompileError("action data must be a compile-time constant", a.value.loc)
            w = act.params[pi].width
            out.append(J.hexstr_digits(v & ((1 << w) - 1), w))
            pi += 1
        return out

    def entries(
        self, decl: A.TableDecl, keys: list[dict[str, Any]], scope: Scope
    ) -> list[dict[str, Any]]:
        assert decl.entries is not None
        out = []
        key_elems = [k for k in decl.keys if k.match_kind != "selector"]
        priorities = _bmv2_priorities(decl.entries)
        for i, entry in enumerate(decl.entries):
            if len(entry.keys) != len(key_elems):
                raise CompileError("entry does not match the table key", entry.loc)
            mk_json = []
            for kj, kelem, ks in zip(keys, key_elems, entry.keys, strict=True):
                mk_json.append(self.entry_key(kj["match_type"], kelem, ks))
            act = self.table_action(entry.action, scope)
            prio = priorities[i]
            out.append(
                {
                    "source_info": source_info(entry.loc),
                    "matches": None,
                    "match_key": mk_json,
                    "action_entry": {
                        "action_id": act.json_id,
                        "action_data": self.action_data(entry.action, act, scope),
                    },
                    "priority": prio,
                }
            )
            del out[-1]["matches"]
        return out

    def entry_key(self, mk: str, kelem: A.KeyElement, ks: A.Expression) -> dict[str, Any]:
        w = width_hint(kelem.expr) or 1
        if isinstance(kelem.expr, A.MethodCallExpression):
            w = 1
        full = (1 << w) - 1

        def val(e: A.Expression) -> int:
            v = e.const_value
            if isinstance(v, bool):
                return int(v)
            if isinstance(v, T.EnumValue) and v.value is not None:
                return v.value
            if isinstance(v, T.ErrorValue):
                return self.lw.error_value(v.name)
            if not isinstance(v, int):
                raise CompileError("entry keys must be compile-time constants", e.loc)
            return v & full

        dont_care = isinstance(ks, A.DontCare | A.DefaultExpression)
        if mk == "exact":
            if dont_care:
                raise CompileError("an exact key cannot be a wildcard", ks.loc)
            return {"match_type": "exact", "key": J.hexstr_digits(val(ks), w)}
        if mk == "lpm":
            if dont_care:
                return {"match_type": "lpm", "key": J.hexstr_digits(0, w), "prefix_length": 0}
            if isinstance(ks, A.MaskExpression):
                m = val(ks.mask)
                plen = bin(m).count("1")
                if m != (full ^ ((1 << (w - plen)) - 1)):
                    raise CompileError("an lpm mask must be a prefix", ks.loc)
                return {
                    "match_type": "lpm",
                    "key": J.hexstr_digits(val(ks.value) & m, w),
                    "prefix_length": plen,
                }
            return {"match_type": "lpm", "key": J.hexstr_digits(val(ks), w), "prefix_length": w}
        if mk in ("ternary", "optional"):
            if dont_care:
                return {
                    "match_type": mk,
                    "key": J.hexstr_digits(0, w),
                    "mask": J.hexstr_digits(0, w),
                }
            if isinstance(ks, A.MaskExpression):
                m = val(ks.mask)
                return {
                    "match_type": mk,
                    "key": J.hexstr_digits(val(ks.value) & m, w),
                    "mask": J.hexstr_digits(m, w),
                }
            return {
                "match_type": mk,
                "key": J.hexstr_digits(val(ks), w),
                "mask": J.hexstr_digits(full, w),
            }
        if mk == "range":
            if dont_care:
                return {
                    "match_type": "range",
                    "start": J.hexstr_digits(0, w),
                    "end": J.hexstr_digits(full, w),
                }
            if isinstance(ks, A.RangeExpression):
                return {
                    "match_type": "range",
                    "start": J.hexstr_digits(val(ks.lo), w),
                    "end": J.hexstr_digits(val(ks.hi), w),
                }
            v = val(ks)
            return {
                "match_type": "range",
                "start": J.hexstr_digits(v, w),
                "end": J.hexstr_digits(v, w),
            }
        raise CompileError(f"match kind `{mk}` is not supported in entries", ks.loc)

    # ------------------------------------------------------------------ sub-controls
    def apply_control(self, mce: A.MethodCallExpression, scope: Scope, out: list[Flow]) -> None:
        call = mce.call
        assert call is not None
        if isinstance(call.decl, A.ControlDecl):
            # Direct type invocation: a fresh instance each time, named like p4c's
            # (@name of the type, so its tables are `<control>.<type>.<table>`).
            inst = self._direct_instance(call.decl, scope, mce)
        else:
            inst = scope.lookup(call.decl)
        if not isinstance(inst, ControlInstance):
            raise CompileError("unknown control instance", mce.loc)
        if inst.applied and not _reapplicable(inst.decl):
            raise CompileError(
                "a control instance with tables or extern instances can be applied only "
                "once on this target",
                mce.loc,
            )
        inst.applied = True
        callee = inst.scope.child()
        self.lw.bind_params(
            inst.decl.params, call.params_to_args, scope, callee, self.sink(mce.loc), mce.loc
        )
        self.flush(out)
        saved, self.pending = self.pending, None
        flows = self.instantiate(inst.decl, callee, inst.prefix)
        self.pending = saved
        out.append(Flow("sub", None, {"body": flows}))
        if callee.copy_back:
            self.lw.copy_back(callee, self.sink(mce.loc))

    def _direct_instance(
        self, decl: A.ControlDecl, scope: Scope, mce: A.MethodCallExpression
    ) -> ControlInstance:
        prefix = f"{scope.prefix}{decl.name}."
        key = (decl, prefix)
        if key in self._direct_applied and not _reapplicable(decl):
            raise CompileError(
                "a control with tables or extern instances can be applied directly only "
                "once on this target",
                mce.loc,
            )
        self._direct_applied.add(key)
        return ControlInstance(decl, prefix, Scope(self.lw.global_scope, prefix))

    # ------------------------------------------------------------------ wiring
    def wire(self, flows: list[Flow], nxt: str | None, ret: str | None) -> str | None:
        cur = nxt
        for f in reversed(flows):
            if f.kind == "return":
                cur = ret
            elif f.kind == "exit":
                cur = None
            elif f.kind == "act":
                assert f.json is not None
                f.json["base_default_next"] = cur
                f.json["next_tables"] = {a: cur for a in f.json["actions"]}
                cur = f.json["name"]
            elif f.kind == "cond":
                assert f.json is not None
                f.json["true_next"] = self.wire(f.branches["then"], cur, ret)
                f.json["false_next"] = self.wire(f.branches["else"], cur, ret)
                cur = f.json["name"]
            elif f.kind == "sub":
                cur = self.wire(f.branches["body"], cur, cur)
            elif f.kind == "table":
                assert f.json is not None
                t = f.json
                t["base_default_next"] = cur
                if f.mode == "hit":
                    t["base_default_next"] = None
                    t["next_tables"] = {
                        "__HIT__": self.wire(f.branches["then"], cur, ret),
                        "__MISS__": self.wire(f.branches["else"], cur, ret),
                    }
                elif f.mode == "switch":
                    nt: dict[str, str | None] = {}
                    wired: dict[int, str | None] = {}
                    default = f.branches.get("__default__")
                    for a in t["actions"]:
                        branch = f.branches.get(a, default)
                        if branch is None:
                            nt[a] = cur
                            continue
                        if id(branch) not in wired:
                            wired[id(branch)] = self.wire(branch, cur, ret)
                        nt[a] = wired[id(branch)]
                    t["next_tables"] = nt
                else:
                    t["next_tables"] = {a: cur for a in t["actions"]}
                cur = t["name"]
        return cur


def _reapplicable(decl: A.ControlDecl) -> bool:
    """Whether each application of an instance of this control can be inlined on its
    own (as p4c does): it owns no tables and no extern instances, which exist once."""
    for d in decl.locals:
        if isinstance(d, A.TableDecl):
            return False
        if isinstance(d, A.InstanceDecl) and (
            not isinstance(d.decl, A.ControlDecl) or not _reapplicable(d.decl)
        ):
            return False
    return True


def _is_const_scalar(e: A.Expression) -> bool:
    v = e.const_value
    return isinstance(v, bool | int) or (isinstance(v, T.EnumValue) and v.value is not None)


def _bmv2_priorities(entries: list[A.TableEntry]) -> list[int]:
    """Entry priorities as p4c writes them: an explicit `priority = N` / @priority(N)
    verbatim, else the entry's position (1-based; BMv2 prefers smaller values)."""
    out: list[int] = []
    for i, e in enumerate(entries):
        value = None
        if e.priority is not None and isinstance(e.priority.const_value, int):
            value = e.priority.const_value
        else:
            value = annotation_int(e.annotation("priority") or e.action.annotation("priority"))
        out.append(value if value is not None else i + 1)
    return out


def _type_name(t: T.Type | None) -> str | None:
    return t.name if isinstance(t, T.NewType) else None


def _table_hit_condition(e: A.Expression) -> tuple[A.MethodCallExpression | None, bool]:
    negate = False
    while isinstance(e, A.UnaryOp) and e.op == "!":
        negate = not negate
        e = e.operand
    if (
        isinstance(e, A.Member)
        and e.member in ("hit", "miss")
        and isinstance(e.expr, A.MethodCallExpression)
        and e.expr.call is not None
        and e.expr.call.kind == "table_apply"
    ):
        return e.expr, negate != (e.member == "miss")
    return None, False


def _is_table_result(e: A.Expression) -> bool:
    return (
        isinstance(e, A.Member)
        and e.member in ("hit", "miss")
        and isinstance(e.expr, A.MethodCallExpression)
        and e.expr.call is not None
        and e.expr.call.kind == "table_apply"
    )


def _contains_table_apply(e: A.Node) -> bool:
    if (
        isinstance(e, A.MethodCallExpression)
        and e.call is not None
        and e.call.kind == "table_apply"
    ):
        return True
    for v in vars(e).values():
        if isinstance(v, A.Expression) and _contains_table_apply(v):
            return True
        if isinstance(v, list):
            for x in v:
                if isinstance(x, A.Node) and _contains_table_apply(x):
                    return True
    return False


def _bind_ctor_params(
    decl: A.ControlDecl,
    args: list[A.Argument | None],
    inst_scope: Scope,
    outer: Scope,
    lw: Lowering,
) -> None:
    ex = ExprLowering(lw, outer, None)
    for p, a in zip(decl.ctor_params, args, strict=False):
        if a is None:
            continue
        node, is_bool = ex.value(a.value)
        inst_scope.bind(p, ExprVal(node, p.type or T.INT, is_bool))


__all__ = ["ControlLowering", "Pipeline"]
