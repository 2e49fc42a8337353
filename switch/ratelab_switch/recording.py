"""An EngineAdapter that only records what it is asked, to be replayed later.

Used for a pipeline config that is saved (VERIFY_AND_SAVE) but not committed:
the P4Runtime spec has later Writes refer to the saved config while the
forwarding state stays as it is, and COMMIT then applies those writes to the new
program. Table entry handles given out here are placeholders that `replay`
maps to the real engine's handles.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .engine_api import (
    ActionCall,
    CounterValue,
    EngineAdapter,
    IndirectTarget,
    InstalledEntry,
    KeyField,
    MeterConfig,
    Replica,
)

# Methods whose second argument is a table entry handle.
_ENTRY_METHODS = {
    "table_modify",
    "table_modify_indirect",
    "table_delete",
    "direct_counter_write",
    "direct_meter_set",
}
# Methods whose second argument is an action profile member / group handle.
_MEMBER_METHODS = {"profile_member_modify", "profile_member_delete"}
_GROUP_METHODS = {"profile_group_set_members", "profile_group_delete"}


@dataclass
class Handles:
    """Placeholder -> engine handle, per kind, after a replay."""

    entries: dict[int, int] = field(default_factory=dict)
    members: dict[int, int] = field(default_factory=dict)
    groups: dict[int, int] = field(default_factory=dict)


class RecordingEngine:
    def __init__(self, program: bytes) -> None:
        self.calls: list[tuple[str, tuple[Any, ...]]] = []
        self._next_handle = 1
        self._defaults = _program_defaults(program)
        self._registers: dict[tuple[str, int], int] = {}
        self._counters: dict[tuple[str, int], CounterValue] = {}
        self._direct: dict[int, CounterValue] = {}

    def _record(self, name: str, *args: Any) -> None:
        self.calls.append((name, args))

    def replay(self, engine: EngineAdapter) -> Handles:
        """Apply the recorded calls to `engine`; returns placeholder -> real handles."""
        h = Handles()
        for name, args in self.calls:
            if name == "table_add":
                placeholder, *rest = args
                h.entries[placeholder] = engine.table_add(*rest)
            elif name == "table_add_indirect":
                placeholder, table, key, target, priority = args
                real = self._real_target(h, target)
                h.entries[placeholder] = engine.table_add_indirect(table, key, real, priority)
            elif name == "profile_member_add":
                placeholder, *rest = args
                h.members[placeholder] = engine.profile_member_add(*rest)
            elif name == "profile_group_create":
                placeholder, profile = args
                h.groups[placeholder] = engine.profile_group_create(profile)
            elif name in _ENTRY_METHODS:
                table, placeholder, *rest = args
                if name == "table_modify_indirect":
                    rest = [self._real_target(h, rest[0])]
                getattr(engine, name)(table, h.entries[placeholder], *rest)
            elif name in _MEMBER_METHODS:
                profile, placeholder, *rest = args
                getattr(engine, name)(profile, h.members[placeholder], *rest)
            elif name in _GROUP_METHODS:
                profile, placeholder, *rest = args
                if name == "profile_group_set_members":
                    rest = [[h.members[m] for m in rest[0]]]
                getattr(engine, name)(profile, h.groups[placeholder], *rest)
            else:
                getattr(engine, name)(*args)
        return h

    @staticmethod
    def _real_target(h: Handles, target: IndirectTarget) -> IndirectTarget:
        table = h.groups if target.kind == "group" else h.members
        return IndirectTarget(target.kind, table[target.handle])

    # Program: never loaded here.
    def verify_config(self, device_config: bytes) -> None:
        raise NotImplementedError

    def load_config(self, device_config: bytes) -> None:
        raise NotImplementedError

    def _new_handle(self) -> int:
        handle = self._next_handle
        self._next_handle += 1
        return handle

    def table_add(
        self, table: str, key: Sequence[KeyField], action: ActionCall, priority: int
    ) -> int:
        handle = self._new_handle()
        self._record("table_add", handle, table, tuple(key), action, priority)
        return handle

    def table_modify(self, table: str, handle: int, action: ActionCall) -> None:
        self._record("table_modify", table, handle, action)

    def table_add_indirect(
        self, table: str, key: Sequence[KeyField], target: IndirectTarget, priority: int
    ) -> int:
        handle = self._new_handle()
        self._record("table_add_indirect", handle, table, tuple(key), target, priority)
        return handle

    def table_modify_indirect(self, table: str, handle: int, target: IndirectTarget) -> None:
        self._record("table_modify_indirect", table, handle, target)

    def profile_member_add(self, profile: str, action: ActionCall) -> int:
        handle = self._new_handle()
        self._record("profile_member_add", handle, profile, action)
        return handle

    def profile_member_modify(self, profile: str, handle: int, action: ActionCall) -> None:
        self._record("profile_member_modify", profile, handle, action)

    def profile_member_delete(self, profile: str, handle: int) -> None:
        self._record("profile_member_delete", profile, handle)

    def profile_group_create(self, profile: str) -> int:
        handle = self._new_handle()
        self._record("profile_group_create", handle, profile)
        return handle

    def profile_group_set_members(self, profile: str, handle: int, members: Sequence[int]) -> None:
        self._record("profile_group_set_members", profile, handle, tuple(members))

    def profile_group_delete(self, profile: str, handle: int) -> None:
        self._record("profile_group_delete", profile, handle)

    def table_delete(self, table: str, handle: int) -> None:
        self._record("table_delete", table, handle)

    def table_entries(self, table: str) -> list[InstalledEntry]:
        return []  # the program is not loaded: its own entries appear at COMMIT

    def table_get_default(self, table: str) -> ActionCall:
        return self._defaults.get(table, ActionCall("NoAction"))

    def table_set_default(self, table: str, action: ActionCall) -> None:
        self._defaults[table] = action
        self._record("table_set_default", table, action)

    def table_reset_default(self, table: str) -> None:
        self._record("table_reset_default", table)

    def direct_counter_read(self, table: str, handle: int) -> CounterValue:
        return self._direct.get(handle, CounterValue())

    def direct_counter_write(self, table: str, handle: int, value: CounterValue) -> None:
        self._direct[handle] = value
        self._record("direct_counter_write", table, handle, value)

    def direct_meter_set(self, table: str, handle: int, config: MeterConfig | None) -> None:
        self._record("direct_meter_set", table, handle, config)

    def value_set_set(self, value_set: str, values: Sequence[int]) -> None:
        self._record("value_set_set", value_set, tuple(values))

    def counter_read(self, counter: str, index: int) -> CounterValue:
        return self._counters.get((counter, index), CounterValue())

    def counter_write(self, counter: str, index: int, value: CounterValue) -> None:
        self._counters[(counter, index)] = value
        self._record("counter_write", counter, index, value)

    def register_read(self, register: str, index: int) -> int:
        return self._registers.get((register, index), 0)

    def register_write(self, register: str, index: int, value: int) -> None:
        self._registers[(register, index)] = value
        self._record("register_write", register, index, value)

    def meter_set(self, meter: str, index: int, config: MeterConfig | None) -> None:
        self._record("meter_set", meter, index, config)

    def multicast_group_set(self, group_id: int, replicas: Sequence[Replica]) -> None:
        self._record("multicast_group_set", group_id, tuple(replicas))

    def multicast_group_delete(self, group_id: int) -> None:
        self._record("multicast_group_delete", group_id)

    def clone_session_set(
        self, session_id: int, replicas: Sequence[Replica], class_of_service: int, truncate: int
    ) -> None:
        self._record("clone_session_set", session_id, tuple(replicas), class_of_service, truncate)

    def clone_session_delete(self, session_id: int) -> None:
        self._record("clone_session_delete", session_id)

    def inject_packet(self, port: int, data: bytes) -> None:
        raise NotImplementedError  # packets run on the committed program


def _program_defaults(program: bytes) -> dict[str, ActionCall]:
    """Each table's default action as the BMv2 JSON declares it."""
    doc = json.loads(program)
    actions = {a.get("id"): a.get("name", "") for a in doc.get("actions", [])}
    out: dict[str, ActionCall] = {}
    for pipe in doc.get("pipelines", []):
        for t in pipe.get("tables", []):
            entry = t.get("default_entry") or {}
            name = actions.get(entry.get("action_id"))
            if name:
                try:
                    args = tuple(int(x, 16) for x in entry.get("action_data", []))
                except (TypeError, ValueError):
                    continue  # the engine accepted the program; leave odd data to it
                out[t["name"]] = ActionCall(name, args)
    return out
