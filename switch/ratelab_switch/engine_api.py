"""The contract between the P4Runtime service and a packet engine.

The service owns the P4Runtime view of the switch (which entries exist, their
keys, priorities and canonical bytes); an engine only executes. Everything
crossing this boundary is already validated and translated to plain integers
and BMv2 JSON names (which p4c makes equal to the P4Info names), so an engine
binding stays thin. Entry handles are opaque integers chosen by the engine.

Conventions:
- Match keys list one `KeyField` per P4Info match field, in P4Info order, with
  omitted (don't care) fields already filled in as full wildcards.
- Action arguments are in P4Info parameter order (= BMv2 `runtime_data` order).
- Priorities use P4Runtime's sense: a larger number wins.
- Ports are integers (BMv2 port numbers).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import grpc
from ratelab_p4info import MatchKind

from .errors import P4RuntimeError


class EngineError(P4RuntimeError):
    """An engine refused an operation; carries the canonical code to report."""

    def __init__(self, message: str, code: grpc.StatusCode = grpc.StatusCode.INTERNAL) -> None:
        super().__init__(code, message)


@dataclass(frozen=True)
class KeyField:
    """One match field. EXACT: value. LPM: value/prefix_len. TERNARY and OPTIONAL:
    value/mask (mask 0 = wildcard). RANGE: value = low, high."""

    kind: MatchKind
    value: int
    mask: int = 0
    prefix_len: int = 0
    high: int = 0


@dataclass(frozen=True)
class ActionCall:
    name: str
    args: tuple[int, ...] = ()


@dataclass(frozen=True)
class CounterValue:
    packets: int = 0
    bytes: int = 0


@dataclass(frozen=True)
class MeterConfig:
    """Two-rate three-colour meter: rates in units/second, bursts in units."""

    cir: int
    cburst: int
    pir: int
    pburst: int


@dataclass(frozen=True)
class Replica:
    port: int
    instance: int  # egress_rid seen by the egress pipeline


@dataclass(frozen=True)
class IndirectTarget:
    """What an entry of an indirect table runs: an action profile member or a group
    (engine handles, as `profile_member_add` / `profile_group_create` returned)."""

    kind: str  # "member" or "group"
    handle: int


@dataclass(frozen=True)
class InstalledEntry:
    """An entry the engine holds, as `table_entries` reports it. `key` is raw: the
    service normalises it against the P4Info."""

    handle: int
    key: tuple[KeyField, ...]
    priority: int  # P4Runtime sense; 0 for tables without priorities
    action: ActionCall


class EngineAdapter(Protocol):
    """What the P4Runtime service needs from a packet engine."""

    # Program ----------------------------------------------------------------
    def verify_config(self, device_config: bytes) -> None:
        """Check a BMv2 JSON program without loading it; EngineError if it is unusable."""

    def load_config(self, device_config: bytes) -> None:
        """Replace the running program; all runtime state starts afresh."""

    # Match-action tables ------------------------------------------------------
    def table_add(
        self, table: str, key: Sequence[KeyField], action: ActionCall, priority: int
    ) -> int:
        """Insert an entry and return its handle."""

    def table_modify(self, table: str, handle: int, action: ActionCall) -> None: ...

    def table_add_indirect(
        self, table: str, key: Sequence[KeyField], target: IndirectTarget, priority: int
    ) -> int:
        """Insert an entry of an indirect table (action profile / selector)."""

    def table_modify_indirect(self, table: str, handle: int, target: IndirectTarget) -> None: ...

    def table_delete(self, table: str, handle: int) -> None: ...

    def table_entries(self, table: str) -> list[InstalledEntry]:
        """Every entry in the table (after a load: the program's own entries)."""

    def table_get_default(self, table: str) -> ActionCall:
        """The default action in force now."""

    def table_set_default(self, table: str, action: ActionCall) -> None: ...

    def table_reset_default(self, table: str) -> None:
        """Restore the default action the program declares."""

    def direct_counter_read(self, table: str, handle: int) -> CounterValue: ...

    def direct_counter_write(self, table: str, handle: int, value: CounterValue) -> None: ...

    def direct_meter_set(self, table: str, handle: int, config: MeterConfig | None) -> None:
        """None restores the meter's default (every packet green)."""

    # Action profiles and selectors --------------------------------------------
    def profile_member_add(self, profile: str, action: ActionCall) -> int:
        """Add a member; returns its engine handle."""

    def profile_member_modify(self, profile: str, handle: int, action: ActionCall) -> None: ...

    def profile_member_delete(self, profile: str, handle: int) -> None: ...

    def profile_group_create(self, profile: str) -> int:
        """Create an empty group (selectors only); returns its engine handle."""

    def profile_group_set_members(self, profile: str, handle: int, members: Sequence[int]) -> None:
        """Replace a group's members (engine handles; a member listed n times weighs n)."""

    def profile_group_delete(self, profile: str, handle: int) -> None: ...

    # Parser value sets ---------------------------------------------------------
    def value_set_set(self, value_set: str, values: Sequence[int]) -> None:
        """Make the value set hold exactly `values`."""

    # Indexed externs ---------------------------------------------------------
    def counter_read(self, counter: str, index: int) -> CounterValue: ...

    def counter_write(self, counter: str, index: int, value: CounterValue) -> None: ...

    def register_read(self, register: str, index: int) -> int: ...

    def register_write(self, register: str, index: int, value: int) -> None: ...

    def meter_set(self, meter: str, index: int, config: MeterConfig | None) -> None: ...

    # Packet replication engine -----------------------------------------------
    def multicast_group_set(self, group_id: int, replicas: Sequence[Replica]) -> None:
        """Create or replace a multicast group."""

    def multicast_group_delete(self, group_id: int) -> None: ...

    def clone_session_set(
        self, session_id: int, replicas: Sequence[Replica], class_of_service: int, truncate: int
    ) -> None:
        """Create or replace a clone session; truncate 0 = whole packet."""

    def clone_session_delete(self, session_id: int) -> None: ...

    # Packets -------------------------------------------------------------------
    def inject_packet(self, port: int, data: bytes) -> None:
        """Process `data` as if it had arrived on `port` (used for PacketOut)."""
