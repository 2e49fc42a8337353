"""P4Runtime ids as p4c assigns them.

An id is `(resource prefix << 24) | low 24 bits`.  `@id(n)` gives the id directly (the
prefix is added when missing).  Otherwise the low bits are the Jenkins one-at-a-time hash
of the control-plane name; collisions are resolved by linear probing on the hash value,
names being processed in sorted order so the result does not depend on declaration order.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .errors import CompileError, SourceLocation

# Resource-type prefixes (P4Runtime specification, p4info.proto's P4Ids.Prefix).
ACTION = 0x01
TABLE = 0x02
VALUE_SET = 0x03
CONTROLLER_HEADER = 0x04
ACTION_PROFILE = 0x11
COUNTER = 0x12
DIRECT_COUNTER = 0x13
METER = 0x14
DIRECT_METER = 0x15
REGISTER = 0x16
DIGEST = 0x17

_MASK32 = 0xFFFFFFFF


def jenkins_one_at_a_time(name: str) -> int:
    """The 32-bit Jenkins one-at-a-time hash of the UTF-8 bytes of name."""
    h = 0
    for byte in name.encode():
        h = (h + byte) & _MASK32
        h = (h + (h << 10)) & _MASK32
        h ^= h >> 6
    h = (h + (h << 3)) & _MASK32
    h ^= h >> 11
    h = (h + (h << 15)) & _MASK32
    return h


@dataclass
class _Symbol:
    kind: int
    name: str
    explicit_id: int | None
    loc: SourceLocation | None


@dataclass
class IdAllocator:
    """Collects (kind, name, @id) symbols, then assigns every id at once like p4c."""

    _symbols: dict[tuple[int, str], _Symbol] = field(default_factory=dict)
    _ids: dict[tuple[int, str], int] = field(default_factory=dict)

    def add(
        self,
        kind: int,
        name: str,
        explicit_id: int | None = None,
        loc: SourceLocation | None = None,
    ) -> None:
        """Register a symbol; adding the same (kind, name) twice is harmless."""
        key = (kind, name)
        if key not in self._symbols:
            self._symbols[key] = _Symbol(kind, name, explicit_id, loc)

    def assign(self) -> None:
        """Give every registered symbol its id; raises CompileError on @id conflicts."""
        used: set[int] = set()
        for sym in self._symbols.values():
            if sym.explicit_id is None:
                continue
            ident = sym.explicit_id
            prefix = sym.kind << 24
            if ident < 0 or ident > _MASK32:
                raise CompileError("@id should be an unsigned 32-bit integer", sym.loc)
            if ident & 0xFF000000 and (ident & 0xFF000000) != prefix:
                raise CompileError(f"{sym.name}: @id has the wrong 8-bit prefix", sym.loc)
            ident |= prefix
            if ident in used:
                raise CompileError(f"@id {ident} is assigned to multiple declarations", sym.loc)
            used.add(ident)
            self._ids[(sym.kind, sym.name)] = ident
        pending = sorted(
            (s for s in self._symbols.values() if s.explicit_id is None),
            key=lambda s: (s.kind, s.name.encode()),
        )
        for sym in pending:
            value = jenkins_one_at_a_time(sym.name)
            start = value
            while True:
                ident = (sym.kind << 24) | (value & 0xFFFFFF)
                if ident not in used:
                    break
                value = (value + 1) & _MASK32
                if value == start:
                    raise CompileError(f"no available id for {sym.name} in P4Runtime", sym.loc)
            used.add(ident)
            self._ids[(sym.kind, sym.name)] = ident

    def id_of(self, kind: int, name: str) -> int:
        return self._ids[(kind, name)]


def shortest_unique_suffixes(names: list[str]) -> dict[str, str]:
    """P4Info aliases: for each dotted name, its shortest suffix (in whole components)
    that no other name in the set shares."""
    counts: dict[tuple[str, ...], int] = {}
    unique = list(dict.fromkeys(names))
    for name in unique:
        parts = tuple(name.split("."))
        for i in range(1, len(parts) + 1):
            counts[parts[-i:]] = counts.get(parts[-i:], 0) + 1
    out: dict[str, str] = {}
    for name in unique:
        parts = tuple(name.split("."))
        for i in range(1, len(parts) + 1):
            if counts[parts[-i:]] < 2 or i == len(parts):
                out[name] = ".".join(parts[-i:])
                break
    return out
