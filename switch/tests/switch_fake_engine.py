"""TEST DOUBLE: an in-memory EngineAdapter that records what the service asks of it.

It executes no packets; it only keeps the control-plane state an engine would
keep, so the P4Runtime service can be tested without the Rust engine.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field

import grpc
from ratelab_switch.engine_api import (
    ActionCall,
    CounterValue,
    EngineError,
    IndirectTarget,
    InstalledEntry,
    KeyField,
    MeterConfig,
    Replica,
)
from ratelab_switch.options import QueueRate
from ratelab_switch.port_settings import PORT_STATS_FIELDS, PortConfig, PortSettings, PortStats


@dataclass
class FakeEntry:
    key: tuple[KeyField, ...]
    action: ActionCall
    priority: int
    counter: CounterValue = field(default_factory=CounterValue)
    meter: MeterConfig | None = None
    target: IndirectTarget | None = None  # entries of indirect tables


class FakeEngine:
    def __init__(self) -> None:
        self.loaded: bytes | None = None
        self.load_count = 0
        self.tables: dict[str, dict[int, FakeEntry]] = {}
        self.initial_defaults: dict[str, ActionCall] = {}
        self.defaults: dict[str, ActionCall] = {}
        self.counters: dict[tuple[str, int], CounterValue] = {}
        self.registers: dict[tuple[str, int], int] = {}
        self.meters: dict[tuple[str, int], MeterConfig | None] = {}
        self.mc_groups: dict[int, tuple[Replica, ...]] = {}
        self.clone_sessions: dict[int, tuple[tuple[Replica, ...], int, int]] = {}
        self.injected: list[tuple[int, bytes]] = []
        self.members: dict[str, dict[int, ActionCall]] = {}
        self.value_sets: dict[str, tuple[int, ...]] = {}
        self.groups: dict[str, dict[int, tuple[int, ...]]] = {}
        # The program's own entries (`entries` / `const entries`), installed by load_config.
        self.initial: dict[str, list[FakeEntry]] = {}
        self._next_handle = 1
        self.ports = PortSettings()
        self.interfaces: dict[int, str] = {}

    # Program
    def verify_config(self, device_config: bytes) -> None:
        try:
            doc = json.loads(device_config)
        except ValueError as e:
            raise EngineError(f"bad JSON: {e}", grpc.StatusCode.INVALID_ARGUMENT) from None
        if "pipelines" not in doc:
            raise EngineError("no pipelines", grpc.StatusCode.INVALID_ARGUMENT)

    def load_config(self, device_config: bytes) -> None:
        self.verify_config(device_config)
        doc = json.loads(device_config)
        actions = {a["id"]: a["name"] for a in doc.get("actions", [])}
        self.loaded = device_config
        self.load_count += 1
        self.tables = {}
        self.initial_defaults = {}
        for pipe in doc["pipelines"]:
            for t in pipe["tables"]:
                self.tables[t["name"]] = {}
                d = t.get("default_entry", {})
                args = tuple(int(x, 16) for x in d.get("action_data", []))
                self.initial_defaults[t["name"]] = ActionCall(
                    actions.get(d.get("action_id"), "NoAction"), args
                )
        self.defaults = dict(self.initial_defaults)
        for table, entries in self.initial.items():
            for e in entries:
                self.tables[table][self._next_handle] = FakeEntry(e.key, e.action, e.priority)
                self._next_handle += 1
        self.counters.clear()
        self.registers.clear()
        self.meters.clear()
        self.mc_groups.clear()
        self.clone_sessions.clear()
        self.members.clear()
        self.groups.clear()

    def _table(self, table: str) -> dict[int, FakeEntry]:
        if table not in self.tables:
            raise EngineError(f"no table {table}", grpc.StatusCode.NOT_FOUND)
        return self.tables[table]

    def _entry(self, table: str, handle: int) -> FakeEntry:
        entries = self._table(table)
        if handle not in entries:
            raise EngineError(f"no handle {handle}", grpc.StatusCode.NOT_FOUND)
        return entries[handle]

    # Tables
    def table_add(
        self, table: str, key: Sequence[KeyField], action: ActionCall, priority: int
    ) -> int:
        handle = self._next_handle
        self._next_handle += 1
        self._table(table)[handle] = FakeEntry(tuple(key), action, priority)
        return handle

    def table_add_indirect(
        self, table: str, key: Sequence[KeyField], target: IndirectTarget, priority: int
    ) -> int:
        self._profile_object(target)
        handle = self._next_handle
        self._next_handle += 1
        self._table(table)[handle] = FakeEntry(tuple(key), ActionCall(""), priority, target=target)
        return handle

    def table_modify_indirect(self, table: str, handle: int, target: IndirectTarget) -> None:
        self._profile_object(target)
        self._entry(table, handle).target = target

    def _profile_object(self, target: IndirectTarget) -> None:
        pool = self.groups if target.kind == "group" else self.members
        if not any(target.handle in p for p in pool.values()):
            raise EngineError(f"no {target.kind} {target.handle}", grpc.StatusCode.NOT_FOUND)

    # Action profiles
    def profile_member_add(self, profile: str, action: ActionCall) -> int:
        handle = self._next_handle
        self._next_handle += 1
        self.members.setdefault(profile, {})[handle] = action
        return handle

    def profile_member_modify(self, profile: str, handle: int, action: ActionCall) -> None:
        self.members[profile][handle] = action

    def profile_member_delete(self, profile: str, handle: int) -> None:
        del self.members[profile][handle]

    def profile_group_create(self, profile: str) -> int:
        handle = self._next_handle
        self._next_handle += 1
        self.groups.setdefault(profile, {})[handle] = ()
        return handle

    def profile_group_set_members(self, profile: str, handle: int, members: Sequence[int]) -> None:
        assert all(m in self.members[profile] for m in members)
        self.groups[profile][handle] = tuple(members)

    def profile_group_delete(self, profile: str, handle: int) -> None:
        del self.groups[profile][handle]

    def table_modify(self, table: str, handle: int, action: ActionCall) -> None:
        self._entry(table, handle).action = action

    def table_delete(self, table: str, handle: int) -> None:
        self._entry(table, handle)
        del self.tables[table][handle]

    def table_entries(self, table: str) -> list[InstalledEntry]:
        return [
            InstalledEntry(h, e.key, e.priority, e.action) for h, e in self._table(table).items()
        ]

    def table_get_default(self, table: str) -> ActionCall:
        self._table(table)
        return self.defaults[table]

    def table_set_default(self, table: str, action: ActionCall) -> None:
        self._table(table)
        self.defaults[table] = action

    def table_reset_default(self, table: str) -> None:
        self._table(table)
        self.defaults[table] = self.initial_defaults[table]

    def direct_counter_read(self, table: str, handle: int) -> CounterValue:
        return self._entry(table, handle).counter

    def direct_counter_write(self, table: str, handle: int, value: CounterValue) -> None:
        self._entry(table, handle).counter = value

    def direct_meter_set(self, table: str, handle: int, config: MeterConfig | None) -> None:
        self._entry(table, handle).meter = config

    # Value sets
    def value_set_set(self, value_set: str, values: Sequence[int]) -> None:
        self.value_sets[value_set] = tuple(values)

    # Indexed externs
    def counter_read(self, counter: str, index: int) -> CounterValue:
        return self.counters.get((counter, index), CounterValue())

    def counter_write(self, counter: str, index: int, value: CounterValue) -> None:
        self.counters[(counter, index)] = value

    def register_read(self, register: str, index: int) -> int:
        return self.registers.get((register, index), 0)

    def register_write(self, register: str, index: int, value: int) -> None:
        self.registers[(register, index)] = value

    def meter_set(self, meter: str, index: int, config: MeterConfig | None) -> None:
        self.meters[(meter, index)] = config

    # Packet replication
    def multicast_group_set(self, group_id: int, replicas: Sequence[Replica]) -> None:
        self.mc_groups[group_id] = tuple(replicas)

    def multicast_group_delete(self, group_id: int) -> None:
        del self.mc_groups[group_id]

    def clone_session_set(
        self, session_id: int, replicas: Sequence[Replica], class_of_service: int, truncate: int
    ) -> None:
        self.clone_sessions[session_id] = (tuple(replicas), class_of_service, truncate)

    def clone_session_delete(self, session_id: int) -> None:
        del self.clone_sessions[session_id]

    # Packets
    def inject_packet(self, port: int, data: bytes) -> None:
        self.injected.append((port, data))

    # Ports (PortTarget)
    def set_queue_depth(self, port: int | None, depth: int) -> None:
        self.ports.set(port, queue_depth=depth)

    def set_queue_rate(self, port: int | None, rate: QueueRate) -> None:
        self.ports.set(port, queue_rate=rate)

    def set_link_delay(self, port: int | None, delay_us: int) -> None:
        self.ports.set(port, link_delay_us=delay_us)

    def port_settings(self) -> tuple[PortConfig, dict[int, PortConfig]]:
        return self.ports.default, dict(self.ports.ports)

    def in_flight(self, port: int) -> int:
        return 0

    def stats_ports(self) -> list[int]:
        return sorted(set(self.interfaces) | set(self.ports.ports))

    def interface(self, port: int) -> str | None:
        return self.interfaces.get(port)

    def port_stats(self, ports: Sequence[int]) -> list[PortStats]:
        # Distinct made-up values per port and field, so tests see each one travel.
        return [
            {name: port * 100 + i for i, name in enumerate(PORT_STATS_FIELDS)} for port in ports
        ]
