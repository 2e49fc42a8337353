"""Name bindings used while lowering: what each declaration means in the current
instantiation (a storage location, a lowered value, action data, an extern instance)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .. import ast as A
from .. import types as T
from .jsonutil import Node


@dataclass(eq=False)
class ExprVal:
    """An already-lowered r-value (an `in` argument bound to a parameter)."""

    node: Node
    type: T.Type
    is_bool: bool = False


@dataclass(eq=False)
class RuntimeData:
    """Action data: index into the action's runtime_data."""

    index: int
    type: T.Type


@dataclass(eq=False)
class ExternRef:
    """An extern instance: its BMv2 / control-plane name and declaration."""

    name: str
    kind: str  # extern type name: register, counter, meter, ...
    decl: A.InstanceDecl
    info: dict[str, Any] = field(default_factory=dict)


@dataclass(eq=False)
class Owner:
    """Binding of a control-local action/table declaration to its control instance."""

    scope: Scope


@dataclass(eq=False)
class Scope:
    """A chain of bindings.  prefix: the control-plane name prefix of declarations made
    in this scope ("MyIngress." inside control MyIngress)."""

    parent: Scope | None = None
    prefix: str = ""
    vars: dict[A.Node, Any] = field(default_factory=dict)
    # Enclosing control's locals (actions/tables) resolved to their lowered objects.
    return_label: Any = None
    # Bit slices passed as out/inout arguments of the call this scope belongs to:
    # (destination field, lo, hi, temporary) written back by Lowering.copy_back.
    copy_back: list[tuple[Any, int, int, Any]] = field(default_factory=list)
    # The innermost for loop being unrolled (loops.LoopControl), for break/continue.
    loop: Any = None
    # L-value expressions already lowered (the target of a compound assignment).
    lvalues: dict[A.Node, Any] = field(default_factory=dict)

    def lookup(self, decl: A.Node | None) -> Any:
        s: Scope | None = self
        while s is not None:
            if decl in s.vars:
                return s.vars[decl]
            s = s.parent
        return None

    def lookup_lvalue(self, e: A.Node) -> Any:
        s: Scope | None = self
        while s is not None:
            if e in s.lvalues:
                return s.lvalues[e]
            s = s.parent
        return None

    def bind_lvalue(self, e: A.Node, loc: Any) -> None:
        self.lvalues[e] = loc

    def bind(self, decl: A.Node, value: Any) -> None:
        self.vars[decl] = value

    def child(self, prefix: str | None = None) -> Scope:
        return Scope(self, self.prefix if prefix is None else prefix)
