"""P4Info wrapped as a schema: every entity looked up by id, full name or alias,
with its bit widths.

A failed lookup or a P4Info that cannot be indexed raises `SchemaError` with a
one-line message. A user that must answer with other errors (the switch, with
P4Runtime status codes) subclasses `Schema` and sets `missing_error` and
`malformed_error`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import ClassVar, Generic, Protocol, TypeVar

from finsy.proto.p4.config.v1 import p4info_pb2, p4types_pb2
from google.protobuf import json_format, text_format
from google.protobuf.message import DecodeError


class SchemaError(Exception):
    """The P4Info lacks an entity asked for, or cannot be read or indexed."""


class MatchKind(Enum):
    EXACT = "exact"
    LPM = "lpm"
    TERNARY = "ternary"
    RANGE = "range"
    OPTIONAL = "optional"


_MATCH_KINDS = {
    p4info_pb2.MatchField.EXACT: MatchKind.EXACT,
    p4info_pb2.MatchField.LPM: MatchKind.LPM,
    p4info_pb2.MatchField.TERNARY: MatchKind.TERNARY,
    p4info_pb2.MatchField.RANGE: MatchKind.RANGE,
    p4info_pb2.MatchField.OPTIONAL: MatchKind.OPTIONAL,
}


@dataclass(frozen=True)
class MatchFieldInfo:
    id: int
    name: str
    bitwidth: int
    kind: MatchKind


class _HasId(Protocol):
    @property
    def id(self) -> int: ...


_Item = TypeVar("_Item", bound=_HasId)


def _with_id(items: tuple[_Item, ...], ident: int) -> _Item | None:
    """The member of a short tuple (params, match fields, action refs) with id `ident`."""
    return next((item for item in items if item.id == ident), None)


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

    def param(self, param_id: int) -> ParamInfo | None:
        return _with_id(self.params, param_id)


@dataclass(frozen=True)
class ActionRefInfo:
    id: int
    table_ok: bool  # usable in an ordinary entry
    default_ok: bool  # usable as the default action


@dataclass(frozen=True)
class TableInfo:
    id: int
    name: str
    match_fields: tuple[MatchFieldInfo, ...]
    action_refs: tuple[ActionRefInfo, ...]
    size: int
    const_default_action_id: int
    is_const: bool
    implementation_id: int
    direct_counter_id: int = 0
    direct_meter_id: int = 0

    @property
    def needs_priority(self) -> bool:
        """Tables with ternary, range or optional fields order entries by priority."""
        return any(
            f.kind in (MatchKind.TERNARY, MatchKind.RANGE, MatchKind.OPTIONAL)
            for f in self.match_fields
        )

    def match_field(self, field_id: int) -> MatchFieldInfo | None:
        return _with_id(self.match_fields, field_id)

    def action_ref(self, action_id: int) -> ActionRefInfo | None:
        return _with_id(self.action_refs, action_id)


@dataclass(frozen=True)
class CounterInfo:
    id: int
    name: str
    unit: str  # "BYTES", "PACKETS", "BOTH" or "UNSPECIFIED"
    size: int
    direct_table_id: int = 0


@dataclass(frozen=True)
class MeterInfo:
    id: int
    name: str
    unit: str  # "BYTES" or "PACKETS"
    size: int
    direct_table_id: int = 0


@dataclass(frozen=True)
class ScalarType:
    """A P4 value P4Runtime carries as one P4Data scalar: "bitstring" (bit<W>, int<W>
    read as unsigned), "enum" (serializable enum, its underlying bit<W>) or "bool"."""

    kind: str
    bitwidth: int


@dataclass(frozen=True)
class RegisterInfo:
    id: int
    name: str
    value: ScalarType | None  # None: not a scalar type (a struct, a header...)
    size: int


@dataclass(frozen=True)
class DigestInfo:
    id: int
    name: str
    # The digest struct's members in order (one member for a non-struct digest);
    # None: a member type that is not a scalar.
    members: tuple[ScalarType, ...] | None
    is_struct: bool = True


@dataclass(frozen=True)
class MetadataFieldInfo:
    id: int
    name: str
    bitwidth: int


@dataclass(frozen=True)
class ControllerHeaderInfo:
    """A controller_packet_metadata header ("packet_in" or "packet_out")."""

    id: int
    name: str
    fields: tuple[MetadataFieldInfo, ...]

    @property
    def bitwidth(self) -> int:
        return sum(f.bitwidth for f in self.fields)


@dataclass(frozen=True)
class ValueSetInfo:
    id: int
    name: str
    fields: tuple[MatchFieldInfo, ...]
    size: int


@dataclass(frozen=True)
class ActionProfileInfo:
    id: int
    name: str
    table_ids: tuple[int, ...]
    with_selector: bool
    size: int
    max_group_size: int


T = TypeVar("T")

ErrorFactory = Callable[[str], Exception]


class EntityIndex(Generic[T]):
    """Entities of one kind by id, by full name and by alias. A full name always
    wins over another entity's alias; an alias two entities share names neither."""

    def __init__(self, kind: str, missing: ErrorFactory) -> None:
        self.kind = kind
        self._missing = missing
        self.by_id: dict[int, T] = {}
        self.by_name: dict[str, T] = {}
        self._aliases: dict[str, T] = {}
        self._ambiguous: set[str] = set()

    def add(self, ident: int, name: str, alias: str, item: T) -> None:
        self.by_id[ident] = item
        self.by_name[name] = item
        if not alias or alias == name or alias in self._ambiguous:
            return
        if alias in self._aliases:
            del self._aliases[alias]
            self._ambiguous.add(alias)
        else:
            self._aliases[alias] = item

    def get(self, key: int | str) -> T | None:
        if isinstance(key, int):
            return self.by_id.get(key)
        found = self.by_name.get(key)
        return found if found is not None else self._aliases.get(key)

    def __getitem__(self, key: int | str) -> T:
        found = self.get(key)
        if found is not None:
            return found
        if isinstance(key, int):
            raise self._missing(f"the P4Info has no {self.kind} with id 0x{key:08x}")
        if key in self._ambiguous:
            raise self._missing(f"{self.kind} alias {key!r} is ambiguous: use the full name")
        raise self._missing(f"the P4Info has no {self.kind} named {key!r}")

    def __contains__(self, key: object) -> bool:
        return isinstance(key, int | str) and self.get(key) is not None

    def __iter__(self) -> Iterator[T]:
        return iter(self.by_id.values())

    def __len__(self) -> int:
        return len(self.by_id)

    def selected(self, ident: int) -> list[T]:
        """The entity `ident`, or all of them for 0 (a P4Runtime wildcard read)."""
        return [self[ident]] if ident else list(self.by_id.values())


_COUNTER_UNITS = {0: "UNSPECIFIED", 1: "BYTES", 2: "PACKETS", 3: "BOTH"}
_METER_UNITS = {0: "UNSPECIFIED", 1: "BYTES", 2: "PACKETS"}


def load_p4info(path: str | Path) -> p4info_pb2.P4Info:
    """A P4Info file in text (.txt, .txtpb, .pbtxt), JSON (.json) or binary (.bin, .pb) format."""
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
    except (
        text_format.ParseError,
        json_format.ParseError,
        UnicodeDecodeError,
        DecodeError,
    ) as e:
        message = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise SchemaError(f"{path}: not a P4Info file: {message}") from None
    return info


class Schema:
    """Read-only view of one P4Info message."""

    # What a failed lookup and a P4Info that cannot be indexed raise.
    missing_error: ClassVar[ErrorFactory] = SchemaError
    malformed_error: ClassVar[ErrorFactory] = SchemaError

    def __init__(self, p4info: p4info_pb2.P4Info) -> None:
        self.p4info = p4info
        self.tables: EntityIndex[TableInfo] = self._index("table")
        self.actions: EntityIndex[ActionInfo] = self._index("action")
        self.counters: EntityIndex[CounterInfo] = self._index("counter")
        self.direct_counters: EntityIndex[CounterInfo] = self._index("direct counter")
        self.meters: EntityIndex[MeterInfo] = self._index("meter")
        self.direct_meters: EntityIndex[MeterInfo] = self._index("direct meter")
        self.registers: EntityIndex[RegisterInfo] = self._index("register")
        self.digests: EntityIndex[DigestInfo] = self._index("digest")
        self.controller_headers: EntityIndex[ControllerHeaderInfo] = self._index(
            "controller header"
        )
        self.action_profiles: EntityIndex[ActionProfileInfo] = self._index("action profile")
        self.value_sets: EntityIndex[ValueSetInfo] = self._index("value set")
        self._build(p4info)

    @classmethod
    def load(cls, path: str | Path) -> Schema:
        """The schema of a P4Info file (see `load_p4info`)."""
        return cls(load_p4info(path))

    def _index(self, kind: str) -> EntityIndex:  # type: ignore[type-arg]
        return EntityIndex(kind, type(self).missing_error)

    def _build(self, p4info: p4info_pb2.P4Info) -> None:
        for a in p4info.actions:
            params = tuple(ParamInfo(p.id, p.name, p.bitwidth) for p in a.params)
            self._add(self.actions, a.preamble, ActionInfo(a.preamble.id, a.preamble.name, params))
        direct_counter_of: dict[int, int] = {}
        for c in p4info.direct_counters:
            info = CounterInfo(
                c.preamble.id,
                c.preamble.name,
                _COUNTER_UNITS.get(c.spec.unit, "UNSPECIFIED"),
                0,
                c.direct_table_id,
            )
            self._add(self.direct_counters, c.preamble, info)
            direct_counter_of[c.direct_table_id] = c.preamble.id
        direct_meter_of: dict[int, int] = {}
        for m in p4info.direct_meters:
            info_m = MeterInfo(
                m.preamble.id,
                m.preamble.name,
                _METER_UNITS.get(m.spec.unit, "UNSPECIFIED"),
                0,
                m.direct_table_id,
            )
            self._add(self.direct_meters, m.preamble, info_m)
            direct_meter_of[m.direct_table_id] = m.preamble.id
        for t in p4info.tables:
            fields = []
            for mf in t.match_fields:
                kind = _MATCH_KINDS.get(mf.match_type)
                if kind is None:
                    raise type(self).malformed_error(
                        f"P4Info: table {t.preamble.name}: unsupported match type on {mf.name}"
                    )
                fields.append(MatchFieldInfo(mf.id, mf.name, mf.bitwidth, kind))
            refs = tuple(
                ActionRefInfo(
                    r.id,
                    table_ok=r.scope != p4info_pb2.ActionRef.DEFAULT_ONLY,
                    default_ok=r.scope != p4info_pb2.ActionRef.TABLE_ONLY,
                )
                for r in t.action_refs
            )
            info_t = TableInfo(
                id=t.preamble.id,
                name=t.preamble.name,
                match_fields=tuple(fields),
                action_refs=refs,
                size=t.size,
                const_default_action_id=t.const_default_action_id,
                is_const=t.is_const_table,
                implementation_id=t.implementation_id,
                direct_counter_id=direct_counter_of.get(t.preamble.id, 0),
                direct_meter_id=direct_meter_of.get(t.preamble.id, 0),
            )
            self._add(self.tables, t.preamble, info_t)
        for c in p4info.counters:
            info_c = CounterInfo(
                c.preamble.id,
                c.preamble.name,
                _COUNTER_UNITS.get(c.spec.unit, "UNSPECIFIED"),
                c.size,
            )
            self._add(self.counters, c.preamble, info_c)
        for m in p4info.meters:
            info_m = MeterInfo(
                m.preamble.id, m.preamble.name, _METER_UNITS.get(m.spec.unit, "UNSPECIFIED"), m.size
            )
            self._add(self.meters, m.preamble, info_m)
        for r in p4info.registers:
            value = self.scalar(r.type_spec)
            self._add(
                self.registers,
                r.preamble,
                RegisterInfo(r.preamble.id, r.preamble.name, value, r.size),
            )
        for d in p4info.digests:
            self._add(
                self.digests,
                d.preamble,
                DigestInfo(
                    d.preamble.id,
                    d.preamble.name,
                    self._digest_members(d),
                    is_struct=d.type_spec.HasField("struct"),
                ),
            )
        for h in p4info.controller_packet_metadata:
            mfields = tuple(MetadataFieldInfo(m.id, m.name, m.bitwidth) for m in h.metadata)
            self._add(
                self.controller_headers,
                h.preamble,
                ControllerHeaderInfo(h.preamble.id, h.preamble.name, mfields),
            )
        for vs in p4info.value_sets:
            vfields = tuple(
                MatchFieldInfo(
                    m.id, m.name, m.bitwidth, _MATCH_KINDS.get(m.match_type, MatchKind.EXACT)
                )
                for m in vs.match
            )
            self._add(
                self.value_sets,
                vs.preamble,
                ValueSetInfo(vs.preamble.id, vs.preamble.name, vfields, vs.size),
            )
        for ap in p4info.action_profiles:
            self._add(
                self.action_profiles,
                ap.preamble,
                ActionProfileInfo(
                    ap.preamble.id,
                    ap.preamble.name,
                    tuple(ap.table_ids),
                    ap.with_selector,
                    ap.size,
                    ap.max_group_size,
                ),
            )

    def scalar(self, spec: p4types_pb2.P4DataTypeSpec, depth: int = 0) -> ScalarType | None:
        """The scalar a type spec stands for, following user-defined (new) types; None if
        it is not a scalar (structs, headers, translated types...)."""
        which = spec.WhichOneof("type_spec")
        if which == "bitstring":
            return ScalarType("bitstring", self._bitstring_width(spec.bitstring))
        if which == "bool":
            return ScalarType("bool", 1)
        if which == "serializable_enum":
            enum = self.p4info.type_info.serializable_enums.get(spec.serializable_enum.name)
            if enum is None:
                return None
            return ScalarType("enum", enum.underlying_type.bitwidth)
        if which == "new_type" and depth < 8:
            new_type = self.p4info.type_info.new_types.get(spec.new_type.name)
            if new_type is not None and new_type.HasField("original_type"):
                return self.scalar(new_type.original_type, depth + 1)
        return None

    def _digest_members(self, d: p4info_pb2.Digest) -> tuple[ScalarType, ...] | None:
        spec = d.type_spec
        if spec.HasField("struct"):
            struct = self.p4info.type_info.structs.get(spec.struct.name)
            if struct is None:
                return None
            members = [self.scalar(m.type_spec) for m in struct.members]
            if any(m is None for m in members):
                return None
            return tuple(m for m in members if m is not None)
        member = self.scalar(spec)
        return None if member is None else (member,)

    def _add(self, index: EntityIndex, preamble: p4info_pb2.Preamble, item: object) -> None:  # type: ignore[type-arg]
        if preamble.id in index.by_id:
            raise type(self).malformed_error(
                f"P4Info: duplicate id 0x{preamble.id:08x} ({preamble.name})"
            )
        index.add(preamble.id, preamble.name, preamble.alias, item)

    def _bitstring_width(self, spec: p4types_pb2.P4BitstringLikeTypeSpec) -> int:
        which = spec.WhichOneof("type_spec")
        if which == "bit":
            return int(spec.bit.bitwidth)
        if which == "int":
            return int(spec.int.bitwidth)
        if which == "varbit":
            return int(spec.varbit.max_bitwidth)
        raise type(self).malformed_error("P4Info: bitstring type without a width")

    @property
    def packet_in(self) -> ControllerHeaderInfo | None:
        return self.controller_headers.get("packet_in")

    @property
    def packet_out(self) -> ControllerHeaderInfo | None:
        return self.controller_headers.get("packet_out")
