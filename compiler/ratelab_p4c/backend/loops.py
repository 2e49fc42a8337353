"""`for` loops (P4_16 1.2.4) unrolled: BMv2 has no loops, so a loop compiles when the
compiler can count its iterations, with the loop variables' values known at compile
time in each copy of the body; otherwise it is refused at the loop."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .. import ast as A
from .. import consteval as C
from .. import types as T
from ..errors import CompileError

# More copies than this of a loop body are refused (a typo'd bound would otherwise
# make the compiler run for a long time and write a huge program).
MAX_ITERATIONS = 1024


@dataclass(frozen=True)
class StackElement:
    """Element `index` of the header stack `stack`, the value of a loop variable in
    `for (H h in stack)`: the variable holds a copy of it."""

    stack: A.Expression
    index: int


class NotKnown(Exception):
    """An expression whose value is not known at compile time."""


@dataclass
class LoopControl:
    """Jumps out of one copy of a loop body (`continue`) and out of the loop (`break`),
    patched when the copy / the loop ends."""

    breaks: list[int] = field(default_factory=list)
    continues: list[int] = field(default_factory=list)


def evaluate(e: A.Expression, env: dict[A.Node, Any]) -> Any:
    """The compile-time value of e, the loop variables taking their values from env."""
    if isinstance(e, A.PathExpression) and e.decl in env:
        return env[e.decl]
    if e.const_value is not None and not isinstance(e, A.PathExpression | A.BinaryOp):
        return e.const_value
    t = T.strip_newtype(e.type) if e.type is not None else T.INT
    if isinstance(e, A.PathExpression):
        if e.const_value is not None:
            return e.const_value
        raise NotKnown
    if isinstance(e, A.BinaryOp):
        if e.const_value is not None:
            return e.const_value
        a = evaluate(e.left, env)
        if e.op == "&&" and a is False:
            return False
        if e.op == "||" and a is True:
            return True
        b = evaluate(e.right, env)
        operand_t = T.strip_newtype(e.left.type) if e.left.type is not None else T.INT
        if isinstance(operand_t, T.IntType) and e.right.type is not None:
            operand_t = T.strip_newtype(e.right.type)
        try:
            return C.binary(e.op, a, b, t, operand_t)
        except C.EvalError as err:
            raise CompileError(str(err), e.loc) from None
    if isinstance(e, A.UnaryOp):
        return C.unary(e.op, evaluate(e.operand, env), t)
    if isinstance(e, A.Cast):
        src = T.strip_newtype(e.expr.type) if e.expr.type is not None else T.INT
        value = C.cast(evaluate(e.expr, env), src, t)
        if value is None:
            raise NotKnown
        return value
    if isinstance(e, A.Ternary):
        return evaluate(e.then if evaluate(e.cond, env) else e.otherwise, env)
    raise NotKnown


def _assigned_in(body: A.Node, decls: set[A.Node]) -> A.Node | None:
    """A statement in body that writes one of decls (an assignment or an out/inout
    argument), or None."""
    import dataclasses

    found: A.Node | None = None

    def names(e: A.Expression | None) -> bool:
        while isinstance(e, A.Member | A.ArrayIndex | A.Slice):
            e = e.expr if isinstance(e, A.Member) else e.base
        return isinstance(e, A.PathExpression) and e.decl in decls

    def visit(x: Any) -> None:
        nonlocal found
        if found is not None:
            return
        if isinstance(x, list | tuple):
            for y in x:
                visit(y)
            return
        if not isinstance(x, A.Node):
            return
        if isinstance(x, A.AssignmentStatement) and names(x.lhs):
            found = x
            return
        if isinstance(x, A.MethodCallExpression) and x.call is not None:
            params = x.call.func_type.params if x.call.func_type is not None else []
            for p, a in zip(params, x.call.params_to_args, strict=False):
                if a is not None and p.direction in ("out", "inout") and names(a.value):
                    found = x
                    return
        for f in dataclasses.fields(x):
            if f.name not in ("decl", "type", "const_value", "type_ref", "type_args", "call"):
                visit(getattr(x, f.name))

    visit(body)
    return found


def _not_unrollable(s: A.Node, why: str) -> CompileError:
    return CompileError(
        f"this for loop cannot be unrolled ({why}); BMv2 has no loops, so the number of "
        "iterations and the loop variables' values must be known at compile time",
        s.loc,
    )


def iterations(
    s: A.ForStatement | A.ForInStatement, final: dict[A.Node, Any]
) -> Iterator[dict[A.Node, Any]]:
    """For each iteration, the loop variables' compile-time values (a list element not
    known at compile time stays its expression). `final` receives the values of
    variables the loop assigns but did not declare, once the loop is done."""
    if isinstance(s, A.ForInStatement):
        c = s.collection
        if isinstance(c, A.RangeExpression):
            lo, hi = c.lo.const_value, c.hi.const_value
            if not isinstance(lo, int) or not isinstance(hi, int):
                raise _not_unrollable(s, "the range's ends are not constants")
            if hi - lo + 1 > MAX_ITERATIONS:
                raise _not_unrollable(s, f"more than {MAX_ITERATIONS} iterations")
            values: list[Any] = list(range(lo, hi + 1))
        elif isinstance(c, A.ListExpression):
            values = [x.const_value if x.const_value is not None else x for x in c.elements]
        else:
            stack_t = T.strip_newtype(c.type) if c.type is not None else None
            assert isinstance(stack_t, T.HeaderStackType)
            values = [StackElement(c, i) for i in range(stack_t.size)]
        writer = _assigned_in(s.body, {s.var})
        if writer is not None:
            raise _not_unrollable(writer, "its body assigns the loop variable")
        for v in values:
            yield {s.var: v}
        return
    env: dict[A.Node, Any] = {}
    declared: list[A.Node] = []
    for x in s.init:
        if isinstance(x, A.VariableDecl):
            if x.init is None:
                raise _not_unrollable(x, f"`{x.name}` has no initial value")
            env[x] = _known(x.init, env, s)
            declared.append(x)
        elif isinstance(x, A.AssignmentStatement) and isinstance(x.lhs, A.PathExpression):
            env[x.lhs.decl] = _known(x.rhs, env, s)  # type: ignore[index]
        else:
            raise _not_unrollable(x, "its initialization is not an assignment to a variable")
    writer = _assigned_in(s.body, set(env))
    if writer is not None:
        raise _not_unrollable(writer, "its body assigns a loop variable")
    for count in range(MAX_ITERATIONS + 1):
        if s.cond is not None and not _known(s.cond, env, s):
            final.update((d, v) for d, v in env.items() if d not in declared)
            return
        if count == MAX_ITERATIONS:
            raise _not_unrollable(s, f"more than {MAX_ITERATIONS} iterations")
        yield dict(env)
        for x in s.update:
            if not (isinstance(x, A.AssignmentStatement) and isinstance(x.lhs, A.PathExpression)):
                raise _not_unrollable(x, "its update is not an assignment to a variable")
            if x.lhs.decl not in env:
                raise _not_unrollable(x, f"its update assigns `{x.lhs.name}`, not set up first")
            env[x.lhs.decl] = _known(x.rhs, env, s)


def _known(e: A.Expression, env: dict[A.Node, Any], s: A.Node) -> Any:
    try:
        return evaluate(e, env)
    except NotKnown:
        raise _not_unrollable(e, "a value it depends on is not a compile-time constant") from None


__all__ = ["MAX_ITERATIONS", "LoopControl", "StackElement", "evaluate", "iterations"]
