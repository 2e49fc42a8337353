"""Where lowered statements go: the primitive list of an action, or the parser_ops of a
parse state."""

from __future__ import annotations

from typing import Any

from ..errors import CompileError, SourceLocation
from . import jsonutil as J


class Sink:
    """Receives primitive calls in program order."""

    supports_jumps = False

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []

    def prim(self, name: str, params: list[J.Node], source: J.Node | None = None) -> None:
        raise NotImplementedError

    def assign(self, dst: J.Node, src: J.Node, source: J.Node | None = None) -> None:
        raise NotImplementedError

    def empty(self) -> bool:
        return not self.items

    # Jumps are only available in actions.
    def here(self) -> int:
        return len(self.items)

    def jump_if_zero(self, cond: J.Node, loc: SourceLocation | None) -> int:
        raise CompileError("conditional statements are not supported here", loc)

    def jump(self, loc: SourceLocation | None) -> int:
        raise CompileError("this statement is not supported here", loc)

    def patch(self, at: int, target: int) -> None:
        raise NotImplementedError

    def exit(self, source: J.Node | None = None) -> None:
        self.prim("exit", [], source)


class ActionSink(Sink):
    """The primitives of one action; conditionals become _jump/_jump_if_zero.

    BMv2's `exit` only marks the packet, the action goes on: each `exit` is followed by
    a jump to the end of the action, patched by finish()."""

    supports_jumps = True

    def __init__(self) -> None:
        super().__init__()
        self._exit_jumps: list[int] = []

    def exit(self, source: J.Node | None = None) -> None:
        self.prim("exit", [], source)
        self._exit_jumps.append(self.jump(None))

    def finish(self) -> list[dict[str, Any]]:
        """The primitive list, with pending exit jumps pointing past the end."""
        for at in self._exit_jumps:
            self.patch(at, len(self.items))
        self._exit_jumps = []
        return self.items

    def prim(self, name: str, params: list[J.Node], source: J.Node | None = None) -> None:
        self.items.append(J.primitive(name, [J.param(p) for p in params], source))

    def assign(self, dst: J.Node, src: J.Node, source: J.Node | None = None) -> None:
        self.prim("assign", [dst, src], source)

    def jump_if_zero(self, cond: J.Node, loc: SourceLocation | None) -> int:
        at = len(self.items)
        self.items.append(J.primitive("_jump_if_zero", [J.param(cond), J.hexstr(0, 32)]))
        return at

    def jump(self, loc: SourceLocation | None) -> int:
        at = len(self.items)
        self.items.append(J.primitive("_jump", [J.hexstr(0, 32)]))
        return at

    def patch(self, at: int, target: int) -> None:
        self.items[at]["parameters"][-1] = J.hexstr(target, 32)


class ParserSink(Sink):
    """The parser_ops of one parse state."""

    def prim(self, name: str, params: list[J.Node], source: J.Node | None = None) -> None:
        inner = J.primitive(name, [J.param(p) for p in params], source)
        self.items.append({"op": "primitive", "parameters": [inner]})

    def assign(self, dst: J.Node, src: J.Node, source: J.Node | None = None) -> None:
        self.items.append({"op": "set", "parameters": [J.param(dst), J.param(src)]})

    def exit(self, source: J.Node | None = None) -> None:
        raise CompileError("`exit` is not allowed in a parser")

    def op(self, name: str, params: list[J.Node]) -> None:
        self.items.append({"op": name, "parameters": params})
