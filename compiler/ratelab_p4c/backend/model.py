"""What the back end learned about the program's control-plane objects.

The BMv2 JSON and the P4Info are both written from this description, so the two files
always agree on names, widths and match kinds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import SourceLocation


@dataclass
class ActionParamInfo:
    """One action-data parameter: name, width in bits, the parameter's annotations."""

    name: str
    width: int
    annotations: list[str] = field(default_factory=list)
    type_name: str | None = None  # the `type` name for @p4runtime_translation types


@dataclass
class ActionInfo:
    """An action as the control plane sees it; hidden actions (synthesized, @hidden) are
    left out of the P4Info."""

    name: str  # control-plane (fully qualified) name
    json_id: int
    params: list[ActionParamInfo] = field(default_factory=list)
    explicit_id: int | None = None
    annotations: list[str] = field(default_factory=list)
    hidden: bool = False
    loc: SourceLocation | None = None


@dataclass
class MatchFieldInfo:
    """One table key element: P4Info name, width, match kind, annotations."""

    name: str
    width: int
    match_kind: str
    annotations: list[str] = field(default_factory=list)
    type_name: str | None = None


@dataclass
class ActionRefInfo:
    """An entry of a table's action list with its scope (P4Info ActionRef.Scope)."""

    action: ActionInfo
    scope: str = "TABLE_AND_DEFAULT"  # or TABLE_ONLY / DEFAULT_ONLY
    annotations: list[str] = field(default_factory=list)


@dataclass
class TableInfo:
    """A control-plane visible table."""

    name: str
    match_fields: list[MatchFieldInfo] = field(default_factory=list)
    action_refs: list[ActionRefInfo] = field(default_factory=list)
    const_default_action: ActionInfo | None = None
    size: int = 1024
    is_const: bool = False
    has_initial_entries: bool = False
    implementation: str | None = None  # action profile name
    direct_counter: str | None = None
    direct_meter: str | None = None
    support_timeout: bool = False
    explicit_id: int | None = None
    annotations: list[str] = field(default_factory=list)
    hidden: bool = False
    loc: SourceLocation | None = None


@dataclass
class CounterInfo:
    """counter / direct_counter.  unit: BYTES / PACKETS / BOTH; table for direct ones."""

    name: str
    unit: str
    size: int = 0
    direct_table: str | None = None
    index_width: int = 32
    index_type_name: str | None = None
    explicit_id: int | None = None
    annotations: list[str] = field(default_factory=list)
    loc: SourceLocation | None = None


@dataclass
class MeterInfo:
    """meter / direct_meter.  unit: BYTES / PACKETS."""

    name: str
    unit: str
    size: int = 0
    direct_table: str | None = None
    index_type_name: str | None = None
    explicit_id: int | None = None
    annotations: list[str] = field(default_factory=list)
    loc: SourceLocation | None = None


@dataclass
class RegisterInfo:
    """register<T, I>: cell width (or a type spec for non-bit T), size."""

    name: str
    width: int
    size: int
    type_spec: Any = None  # ("bitstring", width) or ("named", name)
    index_type_name: str | None = None
    explicit_id: int | None = None
    annotations: list[str] = field(default_factory=list)
    loc: SourceLocation | None = None


@dataclass
class ActionProfileInfo:
    """action_profile / action_selector used as table implementations."""

    name: str
    size: int
    with_selector: bool = False
    tables: list[str] = field(default_factory=list)
    explicit_id: int | None = None
    annotations: list[str] = field(default_factory=list)
    loc: SourceLocation | None = None
    max_group_size: int | None = None  # @max_group_size(N) on a selector


@dataclass
class DigestInfo:
    """A digest<T>() call's data type: name (the struct name) and fields (name, P4 type)."""

    name: str
    fields: list[tuple[str, Any]] = field(default_factory=list)
    struct_name: str = ""
    explicit_id: int | None = None
    loc: SourceLocation | None = None


@dataclass
class ValueSetInfo:
    """A parser value_set: its match fields (one per element field) and size."""

    name: str
    size: int
    match_fields: list[MatchFieldInfo] = field(default_factory=list)
    explicit_id: int | None = None
    annotations: list[str] = field(default_factory=list)
    loc: SourceLocation | None = None


@dataclass
class ControllerHeaderInfo:
    """A @controller_header("packet_in"/"packet_out") header: fields with widths."""

    name: str
    fields: list[tuple[str, int, list[str]]] = field(default_factory=list)
    explicit_id: int | None = None
    annotations: list[str] = field(default_factory=list)
    type_name: str = ""  # the header type's name: p4c hashes it for the id


@dataclass
class EnumTypeInfo:
    """A serializable enum for the P4Info type_info: underlying width and members."""

    name: str
    width: int
    members: list[tuple[str, int]] = field(default_factory=list)


@dataclass
class NewTypeInfo:
    """A `type` declaration: its underlying width and an optional translation."""

    name: str
    width: int
    translation_uri: str | None = None
    translation_width: int | None = None
    translation_is_string: bool = False


@dataclass
class ControlPlaneModel:
    """Everything P4Info needs, in p4c's declaration order."""

    tables: list[TableInfo] = field(default_factory=list)
    actions: list[ActionInfo] = field(default_factory=list)
    counters: list[CounterInfo] = field(default_factory=list)
    direct_counters: list[CounterInfo] = field(default_factory=list)
    meters: list[MeterInfo] = field(default_factory=list)
    direct_meters: list[MeterInfo] = field(default_factory=list)
    registers: list[RegisterInfo] = field(default_factory=list)
    action_profiles: list[ActionProfileInfo] = field(default_factory=list)
    digests: list[DigestInfo] = field(default_factory=list)
    value_sets: list[ValueSetInfo] = field(default_factory=list)
    controller_headers: list[ControllerHeaderInfo] = field(default_factory=list)
    enums: list[EnumTypeInfo] = field(default_factory=list)
    new_types: list[NewTypeInfo] = field(default_factory=list)
