"""P4Info wrapped for lookups by name (full name or alias) or id, with bit widths."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from finsy.proto.p4.config.v1 import p4info_pb2
from google.protobuf import json_format, text_format


class SchemaError(Exception):
    """The P4Info lacks something the controller needs, or cannot be read."""


@dataclass(frozen=True)
class MatchFieldInfo:
    id: int
    name: str
    bitwidth: int
    match_type: str  # "EXACT", "LPM", "TERNARY", "RANGE", "OPTIONAL"


@dataclass(frozen=True)
class ParamInfo:
    id: int
    name: str
    bitwidth: int


@dataclass(frozen=True)
class ActionInfo:
    id: int
    name: str
    params: tuple[ParamInfo, ...]


@dataclass(frozen=True)
class TableInfo:
    id: int
    name: str
    size: int
    match_fields: tuple[MatchFieldInfo, ...]
    action_ids: tuple[int, ...]


@dataclass(frozen=True)
class CounterInfo:
    id: int
    name: str
    size: int
    unit: str  # "PACKETS", "BYTES", "BOTH"


@dataclass(frozen=True)
class RegisterInfo:
    id: int
    name: str
    size: int
    bitwidth: int


def load_p4info(path: str | Path) -> p4info_pb2.P4Info:
    """A P4Info file in text (.txt, .txtpb, .pbtxt), JSON (.json) or binary format."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as e:
        raise SchemaError(f"{path}: cannot read P4Info: {e.strerror}") from None
    info = p4info_pb2.P4Info()
    try:
        if p.suffix == ".json":
            json_format.Parse(data.decode(), info)
        elif p.suffix in (".bin", ".pb"):
            info.ParseFromString(data)
        else:
            text_format.Parse(data.decode(), info)
    except (text_format.ParseError, json_format.ParseError, UnicodeDecodeError) as e:
        raise SchemaError(f"{path}: not a P4Info file: {e}") from None
    except Exception as e:  # protobuf's DecodeError for binary input
        raise SchemaError(f"{path}: not a P4Info file: {e}") from None
    return info


class P4Schema:
    """Read-only view of one P4Info."""

    def __init__(self, p4info: p4info_pb2.P4Info) -> None:
        self.p4info = p4info
        self.tables: dict[int, TableInfo] = {}
        self.actions: dict[int, ActionInfo] = {}
        self.counters: dict[int, CounterInfo] = {}
        self.registers: dict[int, RegisterInfo] = {}
        self._names: dict[tuple[str, str], int] = {}
        mtypes = p4info_pb2.MatchField.MatchType
        for t in p4info.tables:
            self.tables[t.preamble.id] = TableInfo(
                t.preamble.id,
                t.preamble.name,
                t.size,
                tuple(
                    MatchFieldInfo(m.id, m.name, m.bitwidth, mtypes.Name(m.match_type))
                    for m in t.match_fields
                ),
                tuple(a.id for a in t.action_refs),
            )
            self._index("table", t.preamble)
        for a in p4info.actions:
            self.actions[a.preamble.id] = ActionInfo(
                a.preamble.id,
                a.preamble.name,
                tuple(ParamInfo(p.id, p.name, p.bitwidth) for p in a.params),
            )
            self._index("action", a.preamble)
        units = p4info_pb2.CounterSpec.Unit
        for c in p4info.counters:
            self.counters[c.preamble.id] = CounterInfo(
                c.preamble.id, c.preamble.name, c.size, units.Name(c.spec.unit)
            )
            self._index("counter", c.preamble)
        for r in p4info.registers:
            width = r.type_spec.bitstring.bit.bitwidth
            self.registers[r.preamble.id] = RegisterInfo(
                r.preamble.id, r.preamble.name, r.size, width
            )
            self._index("register", r.preamble)

    @classmethod
    def load(cls, path: str | Path) -> P4Schema:
        return cls(load_p4info(path))

    def _index(self, kind: str, preamble: p4info_pb2.Preamble) -> None:
        self._names[kind, preamble.name] = preamble.id
        if preamble.alias and (kind, preamble.alias) not in self._names:
            self._names[kind, preamble.alias] = preamble.id

    def _id(self, kind: str, name: str) -> int:
        try:
            return self._names[kind, name]
        except KeyError:
            raise SchemaError(f"the P4Info has no {kind} named {name!r}") from None

    def table(self, name: str) -> TableInfo:
        return self.tables[self._id("table", name)]

    def action(self, name: str) -> ActionInfo:
        return self.actions[self._id("action", name)]

    def counter(self, name: str) -> CounterInfo:
        return self.counters[self._id("counter", name)]

    def register(self, name: str) -> RegisterInfo:
        return self.registers[self._id("register", name)]

    def has_register(self, name: str) -> bool:
        return ("register", name) in self._names
