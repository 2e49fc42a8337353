"""The forwarding state of one committed pipeline, as P4Runtime sees it."""

from __future__ import annotations

from dataclasses import dataclass, field

from finsy.proto.p4.v1 import p4runtime_pb2 as p4r

from .engine_api import EngineAdapter, MeterConfig
from .schema import Schema
from .translate import EntryKey


@dataclass
class StoredEntry:
    handle: int
    # Canonical entry as read back: match, action, priority, metadata (no counters).
    entry: p4r.TableEntry
    meter: MeterConfig | None = None
    initial: bool = False  # one of the program's own entries (`entries` / `const entries`)


@dataclass
class StoredMember:
    handle: int
    entry: p4r.ActionProfileMember  # canonical, as read back
    groups: set[int] = field(default_factory=set)  # ids of the groups holding it
    entries: int = 0  # table entries running it


@dataclass
class StoredGroup:
    handle: int
    entry: p4r.ActionProfileGroup
    entries: int = 0


@dataclass
class ProfileState:
    members: dict[int, StoredMember] = field(default_factory=dict)
    groups: dict[int, StoredGroup] = field(default_factory=dict)


@dataclass
class TableState:
    entries: dict[EntryKey, StoredEntry] = field(default_factory=dict)


@dataclass
class PipelineState:
    """Reset whenever a new program is committed."""

    schema: Schema
    engine: EngineAdapter
    tables: dict[int, TableState] = field(default_factory=dict)
    profiles: dict[int, ProfileState] = field(default_factory=dict)  # by action profile id
    meters: dict[tuple[int, int], MeterConfig] = field(default_factory=dict)
    multicast_groups: dict[int, p4r.MulticastGroupEntry] = field(default_factory=dict)
    clone_sessions: dict[int, p4r.CloneSessionEntry] = field(default_factory=dict)
    digest_configs: dict[int, p4r.DigestEntry.Config] = field(default_factory=dict)
    value_sets: dict[int, p4r.ValueSetEntry] = field(default_factory=dict)
    # Default entries' (controller_metadata, metadata), by table id, once set.
    default_metadata: dict[int, tuple[int, bytes]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for t in self.schema.tables:
            self.tables.setdefault(t.id, TableState())
        for ap in self.schema.action_profiles:
            self.profiles.setdefault(ap.id, ProfileState())
