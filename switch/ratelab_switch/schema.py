"""P4Info wrapped as a schema: every entity looked up by id or by name, with its bit widths."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import Enum
from typing import Generic, TypeVar

from finsy.proto.p4.config.v1 import p4info_pb2, p4types_pb2

from .errors import invalid, not_found


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
        for p in self.params:
            if p.id == param_id:
                return p
        return None


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
        for f in self.match_fields:
            if f.id == field_id:
                return f
        return None

    def action_ref(self, action_id: int) -> ActionRefInfo | None:
        for a in self.action_refs:
            if a.id == action_id:
                return a
        return None


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
    value: ScalarType | None  # None: a type this switch cannot carry (UNIMPLEMENTED)
    size: int


@dataclass(frozen=True)
class DigestInfo:
    id: int
    name: str
    # The digest struct's members in order (one member for a non-struct digest);
    # None: a member type this switch cannot carry.
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


@dataclass
class _Index(Generic[T]):
    """Entities of one kind, by id and by name (full name and, if unique, short alias)."""

    kind: str
    by_id: dict[int, T] = field(default_factory=dict)
    by_name: dict[str, T] = field(default_factory=dict)

    def add(self, ident: int, name: str, alias: str, item: T) -> None:
        self.by_id[ident] = item
        self.by_name[name] = item
        if alias and alias not in self.by_name:
            self.by_name[alias] = item

    def __getitem__(self, key: int | str) -> T:
        found = self.by_id.get(key) if isinstance(key, int) else self.by_name.get(key)
        if found is None:
            raise not_found(f"{self.kind} {key!r} is not in the P4Info")
        return found

    def get(self, key: int | str) -> T | None:
        return self.by_id.get(key) if isinstance(key, int) else self.by_name.get(key)

    def __iter__(self) -> Iterator[T]:
        return iter(self.by_id.values())

    def selected(self, ident: int) -> list[T]:
        """The entity `ident`, or all of them for 0 (a P4Runtime wildcard read)."""
        return [self[ident]] if ident else list(self.by_id.values())

    def __len__(self) -> int:
        return len(self.by_id)


_COUNTER_UNITS = {0: "UNSPECIFIED", 1: "BYTES", 2: "PACKETS", 3: "BOTH"}
_METER_UNITS = {0: "UNSPECIFIED", 1: "BYTES", 2: "PACKETS"}


class Schema:
    """Read-only view of one P4Info message."""

    def __init__(self, p4info: p4info_pb2.P4Info) -> None:
        self.p4info = p4info
        self.tables: _Index[TableInfo] = _Index("table")
        self.actions: _Index[ActionInfo] = _Index("action")
        self.counters: _Index[CounterInfo] = _Index("counter")
        self.direct_counters: _Index[CounterInfo] = _Index("direct counter")
        self.meters: _Index[MeterInfo] = _Index("meter")
        self.direct_meters: _Index[MeterInfo] = _Index("direct meter")
        self.registers: _Index[RegisterInfo] = _Index("register")
        self.digests: _Index[DigestInfo] = _Index("digest")
        self.controller_headers: _Index[ControllerHeaderInfo] = _Index("controller header")
        self.action_profiles: _Index[ActionProfileInfo] = _Index("action profile")
        self.value_sets: _Index[ValueSetInfo] = _Index("value set")
        self._build(p4info)

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
                    raise invalid(f"table {t.preamble.name}: unsupported match type on {mf.name}")
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
        it is not one this switch carries (structs, headers, translated types...)."""
        which = spec.WhichOneof("type_spec")
        if which == "bitstring":
            return ScalarType("bitstring", _bitstring_width(spec.bitstring))
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

    @staticmethod
    def _add(index: _Index, preamble: p4info_pb2.Preamble, item: object) -> None:  # type: ignore[type-arg]
        if preamble.id in index.by_id:
            raise invalid(f"P4Info: duplicate id 0x{preamble.id:08x} ({preamble.name})")
        index.add(preamble.id, preamble.name, preamble.alias, item)

    @property
    def packet_in(self) -> ControllerHeaderInfo | None:
        return self.controller_headers.get("packet_in")

    @property
    def packet_out(self) -> ControllerHeaderInfo | None:
        return self.controller_headers.get("packet_out")


def _bitstring_width(spec: object) -> int:
    for kind in ("bit", "int", "varbit"):
        if spec.HasField(kind):  # type: ignore[attr-defined]
            sub = getattr(spec, kind)
            return int(sub.max_bitwidth if kind == "varbit" else sub.bitwidth)
    raise invalid("bitstring type without a width")
