"""Which arguments of a call must go through a temporary for P4's copy-in/copy-out.

The back end binds an `out`/`inout` (or header/struct `in`) parameter straight to the
argument's storage when nothing can tell the difference. That stops being true when
the callee also reaches the same storage another way (a control-local action naming
`hdr` while `hdr.x` is its argument; two arguments sharing storage), when a later
argument's evaluation runs a call that may change it, or when the argument is a stack
element at a run-time index (the index is fixed at the call). Such arguments are
copied in at the call and out at its end, left to right, as the P4_16 calling
convention says.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .. import ast as A
from .storage import FieldLoc, HeaderLoc, StackLoc, StructLoc, UnionLoc

Key = tuple[str, str]

_NOT_WALKED = frozenset({"decl", "type", "const_value", "type_ref", "type_args", "call"})


def storage_keys(loc: Any) -> set[Key]:
    """The storage cells a location covers: (header instance, field) pairs, a header's
    validity, or a whole stack for an element at a run-time index."""
    if isinstance(loc, FieldLoc):
        if loc.dynamic is not None:
            return {("stack", loc.header)}
        return {(loc.header, loc.field)}
    if isinstance(loc, HeaderLoc):
        if loc.dynamic is not None:
            return {("stack", loc.name)}
        keys = {(loc.name, "$valid$")}
        for f in loc.fields.values():
            keys |= storage_keys(f)
        return keys
    if isinstance(loc, StackLoc):
        keys = {("stack", loc.name)}
        for el in loc.elements:
            keys |= storage_keys(el)
        return keys
    if isinstance(loc, UnionLoc):
        keys = set()
        for m in loc.members.values():
            keys |= storage_keys(m)
        return keys
    if isinstance(loc, StructLoc):
        keys = set()
        for f in loc.fields.values():
            keys |= storage_keys(f)
        return keys
    return set()


def _walk(node: Any, visit: Any) -> None:
    if isinstance(node, list | tuple):
        for x in node:
            _walk(x, visit)
        return
    if not isinstance(node, A.Node):
        return
    visit(node)
    for f in dataclasses.fields(node):
        if f.name not in _NOT_WALKED:
            _walk(getattr(node, f.name), visit)


class OuterStorage:
    """The variables and parameters a callee's body (and the bodies it calls, in turn)
    names without receiving them as its own parameters: per declaration, memoized."""

    def __init__(self) -> None:
        self._memo: dict[int, set[A.Node]] = {}

    def decls(self, callee: A.Node) -> set[A.Node]:
        key = id(callee)
        if key in self._memo:
            return self._memo[key]
        self._memo[key] = set()  # a recursive call adds nothing new
        found: set[A.Node] = set()
        body = getattr(callee, "body", None)

        def visit(n: A.Node) -> None:
            if isinstance(n, A.PathExpression) and isinstance(n.decl, A.Param | A.VariableDecl):
                found.add(n.decl)
            elif (
                isinstance(n, A.MethodCallExpression)
                and n.call is not None
                and n.call.kind in ("action", "function")
                and n.call.decl is not None
            ):
                found.update(self.decls(n.call.decl))

        _walk(body, visit)
        own = set(getattr(callee, "params", []))
        result = {d for d in found if d not in own}
        self._memo[key] = result
        return result


def changes_storage(call: A.CallInfo | None) -> bool:
    """Whether a call can change storage its caller sees: an action, or a function or
    extern with an `out`/`inout` parameter (a function reaches nothing else)."""
    if call is None:
        return True
    if call.kind in ("action", "header_method", "stack_method", "table_apply"):
        return call.kind != "header_method" or call.name != "isValid"
    if call.kind in ("function", "extern_function", "extern_method"):
        params = getattr(call.decl, "params", None)
        if params is None:
            return True
        return any(p.direction in ("out", "inout") for p in params)
    return call.kind in ("control_apply", "parser_apply")


def has_call(e: A.Node | None) -> bool:
    """Whether evaluating an expression runs a call that may change storage."""
    hit = False

    def visit(n: A.Node) -> None:
        nonlocal hit
        if isinstance(n, A.MethodCallExpression) and changes_storage(n.call):
            hit = True

    _walk(e, visit)
    return hit


def is_dynamic(e: A.Expression) -> bool:
    """An l-value naming a stack element at a run-time index (or the last one)."""
    while True:
        if isinstance(e, A.ArrayIndex):
            if e.index.const_value is None:
                return True
            e = e.base
        elif isinstance(e, A.Member):
            if e.member == "last":
                return True
            e = e.expr
        elif isinstance(e, A.Slice):
            e = e.base
        else:
            return False


__all__ = ["OuterStorage", "changes_storage", "has_call", "is_dynamic", "storage_keys"]
