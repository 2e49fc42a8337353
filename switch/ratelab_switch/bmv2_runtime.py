"""BMv2's runtime API over the engine, keyed by the JSON's names.

This is what BMv2's Thrift server offers (and simple_switch_CLI drives): tables,
actions, action profiles, counters, meters and registers by their JSON names,
match keys in BMv2's BmMatchParam forms (big-endian byte strings), BMv2
priorities (lower wins) and entry handles. It needs no P4Info, so a switch
started with a JSON alone can be driven. It acts on the program the engine runs
now, whoever loaded it (the command line, a P4Runtime
SetForwardingPipelineConfig, or a swap of its own); state kept here (action
profile members, groups, meter rates, multicast nodes) starts afresh when the
program changes, as the engine's does.

Failures raise `RuntimeOpError(family, code)`, `code` being the name of the
BMv2 error code (TableOperationErrorCode etc.) that BMv2 raises in that case;
the Thrift server turns them into the matching exceptions.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ratelab_p4info import MatchKind

from .bmv2_program import Program, ProgramError, TableInfo, parse_program
from .engine_api import (
    ActionCall,
    CounterValue,
    EngineError,
    IndirectTarget,
    KeyField,
    MeterConfig,
    Replica,
)
from .options import QueueRate

T = TypeVar("T")
_TOP = (1 << 31) - 1  # engine_binding's conversion between the two priority senses


class RuntimeOpError(Exception):
    """family: table, counter, meter, register, swap, pvs, learn, mc, mirroring,
    devmgr; code: the BMv2 error code's name."""

    def __init__(self, family: str, code: str, detail: str = "") -> None:
        super().__init__(f"{family}: {code}" + (f" ({detail})" if detail else ""))
        self.family = family
        self.code = code
        self.detail = detail


@dataclass(frozen=True)
class MatchParam:
    """One BmMatchParam: kind exact (key), lpm (key, prefix_length), ternary (key,
    mask), valid (valid), range (key = start, end)."""

    kind: str
    key: bytes = b""
    mask: bytes = b""
    prefix_length: int = 0
    end: bytes = b""
    valid: bool = False


@dataclass(frozen=True)
class ActionEntry:
    """What an entry (or a default) runs: kind none, action, member or group."""

    kind: str
    action: str = ""
    data: tuple[bytes, ...] = ()
    handle: int = 0


@dataclass(frozen=True)
class Entry:
    handle: int
    key: tuple[MatchParam, ...]
    priority: int  # -1 for tables without priorities, as BMv2 reports it
    action: ActionEntry


@dataclass(frozen=True)
class MeterRate:
    units_per_micros: float
    burst_size: int


@dataclass
class _McNode:
    rid: int
    ports: list[int]
    lags: list[int]
    group: int | None = None


@dataclass
class _State:
    """Runtime state the engine cannot report back, for the program loaded now."""

    members: dict[str, dict[int, ActionEntry]] = field(default_factory=dict)
    groups: dict[str, dict[int, list[int]]] = field(default_factory=dict)
    indirect: dict[tuple[str, int], ActionEntry] = field(default_factory=dict)
    indirect_default: dict[str, ActionEntry] = field(default_factory=dict)
    meter_rates: dict[tuple[str, int], list[MeterRate]] = field(default_factory=dict)
    direct_meter_rates: dict[tuple[str, int], list[MeterRate]] = field(default_factory=dict)
    mc_groups: dict[int, list[int]] = field(default_factory=dict)  # mgid -> node handles
    mc_nodes: dict[int, _McNode] = field(default_factory=dict)
    lags: dict[int, list[int]] = field(default_factory=dict)
    mirrors: dict[int, tuple[int | None, int | None]] = field(default_factory=dict)


def port_map_ports(port_map: str) -> list[int]:
    """BMv2's port map string: '1' at position len-1-i means port i is in."""
    if any(c not in "01" for c in port_map):
        raise ValueError(port_map)
    return [i for i, c in enumerate(reversed(port_map)) if c == "1"]


def _int(b: bytes) -> int:
    return int.from_bytes(b, "big")


def _bytes(v: int, bitwidth: int) -> bytes:
    return v.to_bytes(max(1, (bitwidth + 7) // 8), "big")


class Bmv2Runtime:
    """BMv2's runtime operations on `engine`, a RustEngine (EngineAdapter and port
    settings) that records the JSON it runs in `program`."""

    def __init__(self, engine: Any, clock_us: Callable[[], int] | None = None) -> None:
        self.engine = engine
        self._lock = threading.RLock()
        self._json: bytes | None = None
        self._program: Program | None = None
        self._state = _State()
        self._pending: bytes | None = None
        self._start = time.monotonic()
        self._clock_us = clock_us

    # ------------------------------------------------------------ program
    @contextmanager
    def _op(self, family: str) -> Iterator[tuple[Program, _State]]:
        with self._lock:
            current = getattr(self.engine, "program", None)
            if current is None:
                raise RuntimeOpError(family, "ERROR", "no program is loaded")
            if current is not self._json:
                try:
                    self._program = parse_program(current)
                except ProgramError as e:
                    raise RuntimeOpError(family, "ERROR", str(e)) from None
                self._json = current
                self._state = _State()
            assert self._program is not None
            yield self._program, self._state

    def config(self) -> str:
        with self._op("swap"):
            assert self._json is not None
            return self._json.decode()

    def config_md5(self) -> bytes:
        with self._op("swap"):
            assert self._json is not None
            return hashlib.md5(self._json).digest()

    def load_new_config(self, text: str) -> None:
        with self._lock:
            if self._pending is not None:
                raise RuntimeOpError("swap", "ONGOING_SWAP")
            data = text.encode()
            try:
                parse_program(data)
                self.engine.verify_config(data)
            except (ProgramError, EngineError) as e:
                raise RuntimeOpError("swap", "CONFIG_INVALID", str(e)) from None
            self._pending = data

    def swap_configs(self) -> None:
        with self._lock:
            if self._pending is None:
                raise RuntimeOpError("swap", "NO_ONGOING_SWAP")
            data, self._pending = self._pending, None
            self._load(data)

    def reset_state(self) -> None:
        """Every table, extern and replication setting back to the program's own."""
        with self._op("swap"):
            assert self._json is not None
            self._load(self._json)

    def _load(self, data: bytes) -> None:
        try:
            self.engine.load_config(data)
        except EngineError as e:
            raise RuntimeOpError("swap", "CONFIG_INVALID", e.message) from None
        self._json = None  # re-read on the next operation

    # ------------------------------------------------------------ helpers
    def _table(self, prog: Program, name: str) -> TableInfo:
        t = prog.tables.get(name)
        if t is None:
            raise RuntimeOpError("table", "INVALID_TABLE_NAME", name)
        return t

    def _call(self, family: str, fn: Callable[[], T], codes: dict[str, str]) -> T:
        """Run an engine call; its failure becomes the BMv2 code for its status."""
        try:
            return fn()
        except EngineError as e:
            raise RuntimeOpError(family, codes.get(e.code.name, "ERROR"), e.message) from None

    def _action_call(
        self, prog: Program, allowed: Sequence[str] | set[str], action: str, data: Sequence[bytes]
    ) -> ActionCall:
        params = prog.actions.get(action)
        if params is None or action not in allowed:
            raise RuntimeOpError("table", "INVALID_ACTION_NAME", action)
        if len(data) != len(params):
            raise RuntimeOpError("table", "BAD_ACTION_DATA", f"{action} takes {len(params)}")
        args = []
        for value, (_, width) in zip(data, params, strict=True):
            if len(value) != max(1, (width + 7) // 8):
                raise RuntimeOpError("table", "BAD_ACTION_DATA", f"{len(value)} bytes")
            args.append(_int(value) & ((1 << width) - 1))
        return ActionCall(action, tuple(args))

    def _action_entry(self, prog: Program, call: ActionCall) -> ActionEntry:
        params = prog.actions.get(call.name, [])
        data = tuple(_bytes(v, w) for v, (_, w) in zip(call.args, params, strict=False))
        return ActionEntry("action", call.name, data)

    def _key(self, table: TableInfo, key: Sequence[MatchParam]) -> list[KeyField]:
        if len(key) != len(table.key):
            raise RuntimeOpError("table", "BAD_MATCH_KEY", f"{len(key)} fields")
        out = []
        for param, info in zip(key, table.key, strict=True):
            want = "ternary" if info.match_type == "optional" else info.match_type
            if param.kind != want:
                raise RuntimeOpError("table", "BAD_MATCH_KEY", f"{param.kind} for {want}")
            nbytes = max(1, (info.bitwidth + 7) // 8)
            full = (1 << info.bitwidth) - 1
            if param.kind == "valid":
                raise RuntimeOpError("table", "BAD_MATCH_KEY", "valid match keys")
            for b in (param.key, param.mask, param.end):
                if b and len(b) != nbytes:
                    raise RuntimeOpError("table", "BAD_MATCH_KEY", f"{len(b)} bytes")
            value = _int(param.key) & full
            if param.kind == "exact":
                out.append(KeyField(MatchKind.EXACT, value))
            elif param.kind == "lpm":
                if not 0 <= param.prefix_length <= info.bitwidth:
                    raise RuntimeOpError("table", "BAD_MATCH_KEY", "prefix length")
                keep = full ^ ((1 << (info.bitwidth - param.prefix_length)) - 1)
                out.append(KeyField(MatchKind.LPM, value & keep, prefix_len=param.prefix_length))
            elif param.kind == "range":
                out.append(KeyField(MatchKind.RANGE, value, high=_int(param.end) & full))
            elif info.match_type == "optional":
                mask = _int(param.mask) & full
                if mask not in (0, full):
                    raise RuntimeOpError("table", "BAD_MATCH_KEY", "optional mask")
                out.append(KeyField(MatchKind.OPTIONAL, value if mask else 0, mask=mask))
            else:
                mask = _int(param.mask) & full
                out.append(KeyField(MatchKind.TERNARY, value & mask, mask=mask))
        return out

    def _params(self, table: TableInfo, key: Sequence[KeyField]) -> tuple[MatchParam, ...]:
        out = []
        for k, info in zip(key, table.key, strict=False):
            w = info.bitwidth
            full = (1 << w) - 1
            if k.kind is MatchKind.EXACT:
                out.append(MatchParam("exact", _bytes(k.value, w)))
            elif k.kind is MatchKind.LPM:
                out.append(MatchParam("lpm", _bytes(k.value, w), prefix_length=k.prefix_len))
            elif k.kind is MatchKind.RANGE:
                out.append(MatchParam("range", _bytes(k.value, w), end=_bytes(k.high, w)))
            elif k.kind is MatchKind.OPTIONAL:
                mask = full if k.mask else 0
                out.append(MatchParam("ternary", _bytes(k.value, w), mask=_bytes(mask, w)))
            else:
                out.append(MatchParam("ternary", _bytes(k.value, w), mask=_bytes(k.mask, w)))
        return tuple(out)

    @staticmethod
    def _p4r_priority(table: TableInfo, priority: int) -> int:
        if not table.needs_priority:
            return 0
        return _TOP - priority if priority else 0

    _TABLE_CODES = {
        "NOT_FOUND": "INVALID_HANDLE",
        "ALREADY_EXISTS": "DUPLICATE_ENTRY",
        "RESOURCE_EXHAUSTED": "TABLE_FULL",
        "PERMISSION_DENIED": "IMMUTABLE_TABLE_ENTRIES",
        "INVALID_ARGUMENT": "BAD_MATCH_KEY",
        "OUT_OF_RANGE": "BAD_MATCH_KEY",
    }

    # ------------------------------------------------------------ tables
    def table_add(
        self,
        table: str,
        key: Sequence[MatchParam],
        action: str,
        data: Sequence[bytes],
        priority: int | None,
    ) -> int:
        with self._op("table") as (prog, _):
            t = self._table(prog, table)
            if t.type != "simple":
                raise RuntimeOpError("table", "WRONG_TABLE_TYPE")
            call = self._action_call(prog, t.actions, action, data)
            fields = self._key(t, key)
            prio = self._p4r_priority(t, priority or 0)
            return self._call(
                "table",
                lambda: self.engine.table_add(table, fields, call, prio),
                self._TABLE_CODES,
            )

    def table_modify(self, table: str, handle: int, action: str, data: Sequence[bytes]) -> None:
        with self._op("table") as (prog, _):
            t = self._table(prog, table)
            if t.type != "simple":
                raise RuntimeOpError("table", "WRONG_TABLE_TYPE")
            call = self._action_call(prog, t.actions, action, data)
            self._call(
                "table",
                lambda: self.engine.table_modify(table, handle, call),
                {**self._TABLE_CODES, "INVALID_ARGUMENT": "BAD_ACTION_DATA"},
            )

    def table_delete(self, table: str, handle: int) -> None:
        with self._op("table") as (prog, state):
            self._table(prog, table)
            self._call("table", lambda: self.engine.table_delete(table, handle), self._TABLE_CODES)
            state.indirect.pop((table, handle), None)

    def table_clear(self, table: str, reset_default: bool) -> None:
        with self._op("table") as (prog, state):
            t = self._table(prog, table)
            for e in self._call("table", lambda: self.engine.table_entries(table), {}):
                self._call(
                    "table",
                    lambda h=e.handle: self.engine.table_delete(table, h),
                    self._TABLE_CODES,
                )
                state.indirect.pop((table, e.handle), None)
            if reset_default and t.type == "simple":
                self._call("table", lambda: self.engine.table_reset_default(table), {})

    def table_num_entries(self, table: str) -> int:
        with self._op("table") as (prog, _):
            self._table(prog, table)
            return len(self._call("table", lambda: self.engine.table_entries(table), {}))

    def table_entries(self, table: str) -> list[Entry]:
        with self._op("table") as (prog, state):
            t = self._table(prog, table)
            raw = self._call("table", lambda: self.engine.table_entries(table), {})
            out = []
            for e in sorted(raw, key=lambda e: e.handle):
                priority = (_TOP - e.priority if e.priority else 0) if t.needs_priority else -1
                action = state.indirect.get((table, e.handle))
                if action is None:
                    action = self._action_entry(prog, e.action)
                out.append(Entry(e.handle, self._params(t, e.key), priority, action))
            return out

    def table_entry(self, table: str, handle: int) -> Entry:
        for e in self.table_entries(table):
            if e.handle == handle:
                return e
        raise RuntimeOpError("table", "INVALID_HANDLE", str(handle))

    def table_entry_from_key(
        self, table: str, key: Sequence[MatchParam], priority: int | None
    ) -> Entry:
        with self._op("table") as (prog, _):
            t = self._table(prog, table)
            wanted = self._params(t, self._key(t, key))
        for e in self.table_entries(table):
            if e.key == wanted and (not t.needs_priority or e.priority == (priority or 0)):
                return e
        raise RuntimeOpError("table", "BAD_MATCH_KEY", "no entry with this key")

    def table_get_default(self, table: str) -> ActionEntry:
        with self._op("table") as (prog, state):
            t = self._table(prog, table)
            if t.type != "simple":
                return state.indirect_default.get(table, ActionEntry("none"))
            got = self._call("table", lambda: self.engine.table_get_default(table), {})
            if got.name not in prog.actions:
                return ActionEntry("none")
            return self._action_entry(prog, got)

    def table_set_default(self, table: str, action: str, data: Sequence[bytes]) -> None:
        with self._op("table") as (prog, _):
            t = self._table(prog, table)
            if t.type != "simple":
                raise RuntimeOpError("table", "WRONG_TABLE_TYPE")
            call = self._action_call(prog, t.actions, action, data)
            if t.default is not None and t.default.entry_const:
                raise RuntimeOpError("table", "DEFAULT_ENTRY_IS_CONST")
            if t.default is not None and t.default.action_const and action != t.default.action:
                raise RuntimeOpError("table", "DEFAULT_ACTION_IS_CONST")
            self._call(
                "table",
                lambda: self.engine.table_set_default(table, call),
                {"PERMISSION_DENIED": "DEFAULT_ACTION_IS_CONST"},
            )

    def table_reset_default(self, table: str) -> None:
        with self._op("table") as (prog, _):
            t = self._table(prog, table)
            if t.type != "simple":
                raise RuntimeOpError("table", "WRONG_TABLE_TYPE")
            if t.default is not None and t.default.entry_const:
                raise RuntimeOpError("table", "DEFAULT_ENTRY_IS_CONST")
            self._call("table", lambda: self.engine.table_reset_default(table), {})

    def table_set_ttl(self, table: str, handle: int, timeout_ms: int) -> None:
        with self._op("table") as (prog, _):
            t = self._table(prog, table)
            if not t.support_timeout:
                raise RuntimeOpError("table", "AGEING_DISABLED")
            raise RuntimeOpError("table", "ERROR", "entry timeouts are not supported")

    # ------------------------------------------------------------ direct counters / meters
    def _counters_table(self, prog: Program, table: str) -> TableInfo:
        t = self._table(prog, table)
        if not t.with_counters:
            raise RuntimeOpError("table", "COUNTERS_DISABLED")
        return t

    def table_read_counter(self, table: str, handle: int) -> CounterValue:
        with self._op("table") as (prog, _):
            self._counters_table(prog, table)
            return self._call(
                "table",
                lambda: self.engine.direct_counter_read(table, handle),
                self._TABLE_CODES,
            )

    def table_write_counter(self, table: str, handle: int, value: CounterValue) -> None:
        with self._op("table") as (prog, _):
            self._counters_table(prog, table)
            self._call(
                "table",
                lambda: self.engine.direct_counter_write(table, handle, value),
                self._TABLE_CODES,
            )

    def table_reset_counters(self, table: str) -> None:
        with self._op("table") as (prog, _):
            self._counters_table(prog, table)
            for e in self._call("table", lambda: self.engine.table_entries(table), {}):
                self._call(
                    "table",
                    lambda h=e.handle: self.engine.direct_counter_write(table, h, CounterValue()),
                    self._TABLE_CODES,
                )

    def _meter_config(self, family: str, rates: Sequence[MeterRate], count: int) -> MeterConfig:
        if len(rates) != count or count != 2:
            raise RuntimeOpError(family, "BAD_RATES_LIST" if family == "meter" else "ERROR")
        (c, p) = rates
        for r in rates:
            if r.units_per_micros < 0:
                raise RuntimeOpError(family, "INVALID_INFO_RATE_VALUE")
            if r.burst_size < 0:
                raise RuntimeOpError(family, "INVALID_BURST_SIZE_VALUE")
        if c.units_per_micros > p.units_per_micros:
            raise RuntimeOpError(family, "INVALID_INFO_RATE_VALUE", "committed above peak")
        return MeterConfig(
            round(c.units_per_micros * 1e6),
            c.burst_size,
            round(p.units_per_micros * 1e6),
            p.burst_size,
        )

    def table_set_meter_rates(self, table: str, handle: int, rates: Sequence[MeterRate]) -> None:
        with self._op("table") as (prog, state):
            t = self._table(prog, table)
            if t.direct_meter is None:
                raise RuntimeOpError("table", "METERS_DISABLED")
            meter = prog.meters.get(t.direct_meter)
            count = meter.rate_count if meter else 2
            if len(rates) != count:
                raise RuntimeOpError("table", "INVALID_METER_OPERATION")
            try:
                config = self._meter_config("meter", rates, count)
            except RuntimeOpError:
                raise RuntimeOpError("table", "INVALID_METER_OPERATION") from None
            self._call(
                "table",
                lambda: self.engine.direct_meter_set(table, handle, config),
                self._TABLE_CODES,
            )
            state.direct_meter_rates[(table, handle)] = list(rates)

    def table_get_meter_rates(self, table: str, handle: int) -> list[MeterRate]:
        with self._op("table") as (prog, state):
            t = self._table(prog, table)
            if t.direct_meter is None:
                raise RuntimeOpError("table", "METERS_DISABLED")
            if all(e.handle != handle for e in self.engine.table_entries(table)):
                raise RuntimeOpError("table", "INVALID_HANDLE")
            return list(state.direct_meter_rates.get((table, handle), []))

    # ------------------------------------------------------------ action profiles
    def _profile(self, prog: Program, name: str) -> Any:
        p = prog.profiles.get(name)
        if p is None:
            raise RuntimeOpError("table", "INVALID_ACTION_PROFILE_NAME", name)
        return p

    _PROFILE_CODES = {"NOT_FOUND": "INVALID_MBR_HANDLE", "RESOURCE_EXHAUSTED": "TABLE_FULL"}

    def member_add(self, profile: str, action: str, data: Sequence[bytes]) -> int:
        with self._op("table") as (prog, state):
            p = self._profile(prog, profile)
            call = self._action_call(prog, p.actions, action, data)
            h = self._call(
                "table",
                lambda: self.engine.profile_member_add(profile, call),
                self._PROFILE_CODES,
            )
            state.members.setdefault(profile, {})[h] = self._action_entry(prog, call)
            return int(h)

    def member_modify(self, profile: str, handle: int, action: str, data: Sequence[bytes]) -> None:
        with self._op("table") as (prog, state):
            p = self._profile(prog, profile)
            call = self._action_call(prog, p.actions, action, data)
            self._call(
                "table",
                lambda: self.engine.profile_member_modify(profile, handle, call),
                self._PROFILE_CODES,
            )
            state.members.setdefault(profile, {})[handle] = self._action_entry(prog, call)

    def member_delete(self, profile: str, handle: int) -> None:
        with self._op("table") as (prog, state):
            self._profile(prog, profile)
            self._call(
                "table",
                lambda: self.engine.profile_member_delete(profile, handle),
                {**self._PROFILE_CODES, "INVALID_ARGUMENT": "MBR_STILL_USED"},
            )
            state.members.get(profile, {}).pop(handle, None)

    def members(self, profile: str) -> list[tuple[int, ActionEntry]]:
        with self._op("table") as (prog, state):
            self._profile(prog, profile)
            return sorted(state.members.get(profile, {}).items())

    def member(self, profile: str, handle: int) -> ActionEntry:
        with self._op("table") as (prog, state):
            self._profile(prog, profile)
            got = state.members.get(profile, {}).get(handle)
            if got is None:
                raise RuntimeOpError("table", "INVALID_MBR_HANDLE")
            return got

    def _selector(self, prog: Program, profile: str) -> None:
        if not self._profile(prog, profile).with_selector:
            raise RuntimeOpError("table", "NO_ACTION_PROFILE_SELECTION")

    def group_create(self, profile: str) -> int:
        with self._op("table") as (prog, state):
            self._selector(prog, profile)
            h = self._call(
                "table", lambda: self.engine.profile_group_create(profile), self._PROFILE_CODES
            )
            state.groups.setdefault(profile, {})[int(h)] = []
            return int(h)

    def group_delete(self, profile: str, handle: int) -> None:
        with self._op("table") as (prog, state):
            self._selector(prog, profile)
            self._call(
                "table",
                lambda: self.engine.profile_group_delete(profile, handle),
                {"NOT_FOUND": "INVALID_GRP_HANDLE", "INVALID_ARGUMENT": "GRP_STILL_USED"},
            )
            state.groups.get(profile, {}).pop(handle, None)

    def _group_members(self, state: _State, profile: str, handle: int) -> list[int]:
        got = state.groups.get(profile, {}).get(handle)
        if got is None:
            raise RuntimeOpError("table", "INVALID_GRP_HANDLE")
        return got

    def group_add_member(self, profile: str, member: int, group: int) -> None:
        with self._op("table") as (prog, state):
            self._selector(prog, profile)
            members = self._group_members(state, profile, group)
            if member not in state.members.get(profile, {}):
                raise RuntimeOpError("table", "INVALID_MBR_HANDLE")
            if member in members:
                raise RuntimeOpError("table", "MBR_ALREADY_IN_GRP")
            new = [*members, member]
            self._call(
                "table",
                lambda: self.engine.profile_group_set_members(profile, group, new),
                self._PROFILE_CODES,
            )
            state.groups[profile][group] = new

    def group_remove_member(self, profile: str, member: int, group: int) -> None:
        with self._op("table") as (prog, state):
            self._selector(prog, profile)
            members = self._group_members(state, profile, group)
            if member not in state.members.get(profile, {}):
                raise RuntimeOpError("table", "INVALID_MBR_HANDLE")
            if member not in members:
                raise RuntimeOpError("table", "MBR_NOT_IN_GRP")
            new = [m for m in members if m != member]
            self._call(
                "table",
                lambda: self.engine.profile_group_set_members(profile, group, new),
                self._PROFILE_CODES,
            )
            state.groups[profile][group] = new

    def groups(self, profile: str) -> list[tuple[int, list[int]]]:
        with self._op("table") as (prog, state):
            self._selector(prog, profile)
            return sorted((h, list(m)) for h, m in state.groups.get(profile, {}).items())

    def group(self, profile: str, handle: int) -> list[int]:
        with self._op("table") as (prog, state):
            self._selector(prog, profile)
            return list(self._group_members(state, profile, handle))

    # ------------------------------------------------------------ indirect tables
    def _indirect_table(self, prog: Program, table: str, with_selector: bool) -> TableInfo:
        t = self._table(prog, table)
        if t.type == "simple" or (with_selector and t.type != "indirect_ws"):
            raise RuntimeOpError("table", "WRONG_TABLE_TYPE")
        return t

    def _target(self, state: _State, t: TableInfo, kind: str, handle: int) -> IndirectTarget:
        assert t.profile is not None
        if kind == "member" and handle not in state.members.get(t.profile, {}):
            raise RuntimeOpError("table", "INVALID_MBR_HANDLE")
        if kind == "group":
            if handle not in state.groups.get(t.profile, {}):
                raise RuntimeOpError("table", "INVALID_GRP_HANDLE")
            if not state.groups[t.profile][handle]:
                raise RuntimeOpError("table", "EMPTY_GRP")
        return IndirectTarget(kind, handle)

    def indirect_add(
        self, table: str, key: Sequence[MatchParam], kind: str, handle: int, priority: int | None
    ) -> int:
        with self._op("table") as (prog, state):
            t = self._indirect_table(prog, table, kind == "group")
            target = self._target(state, t, kind, handle)
            fields = self._key(t, key)
            prio = self._p4r_priority(t, priority or 0)
            h = self._call(
                "table",
                lambda: self.engine.table_add_indirect(table, fields, target, prio),
                self._TABLE_CODES,
            )
            state.indirect[(table, int(h))] = ActionEntry(kind, handle=handle)
            return int(h)

    def indirect_modify(self, table: str, entry: int, kind: str, handle: int) -> None:
        with self._op("table") as (prog, state):
            t = self._indirect_table(prog, table, kind == "group")
            target = self._target(state, t, kind, handle)
            self._call(
                "table",
                lambda: self.engine.table_modify_indirect(table, entry, target),
                self._TABLE_CODES,
            )
            state.indirect[(table, entry)] = ActionEntry(kind, handle=handle)

    def indirect_delete(self, table: str, entry: int) -> None:
        with self._op("table") as (prog, _):
            self._indirect_table(prog, table, False)
        self.table_delete(table, entry)

    def indirect_set_default(self, table: str, kind: str, handle: int) -> None:
        with self._op("table") as (prog, state):
            t = self._indirect_table(prog, table, kind == "group")
            if kind == "group":
                self._target(state, t, kind, handle)
                raise RuntimeOpError("table", "ERROR", "the engine has no default group")
            if t.default is not None and (t.default.action_const or t.default.entry_const):
                raise RuntimeOpError("table", "DEFAULT_ACTION_IS_CONST")
            self._target(state, t, kind, handle)
            self._call(
                "table",
                lambda: self.engine.table_set_default_member(table, handle),
                {"NOT_FOUND": "INVALID_MBR_HANDLE", "PERMISSION_DENIED": "DEFAULT_ACTION_IS_CONST"},
            )
            state.indirect_default[table] = ActionEntry("member", handle=handle)

    def indirect_reset_default(self, table: str) -> None:
        with self._op("table") as (prog, state):
            self._indirect_table(prog, table, False)
            self._call("table", lambda: self.engine.table_reset_default(table), {})
            state.indirect_default.pop(table, None)

    # ------------------------------------------------------------ custom CRCs
    def set_crc_params(
        self,
        calculation: str,
        width: int,
        poly: int,
        init: int,
        xor_out: int,
        reflect_in: bool,
        reflect_out: bool,
    ) -> None:
        with self._op("crc") as (prog, _):
            algo = prog.calculations.get(calculation)
            if algo is None:
                raise RuntimeOpError("crc", "INVALID_CALCULATION_NAME", calculation)
            if algo != f"crc{width}_custom":
                raise RuntimeOpError("crc", "WRONG_TYPE_CALCULATION", algo)
            self._call(
                "crc",
                lambda: self.engine.set_crc_params(
                    calculation, width, poly, init, xor_out, reflect_in, reflect_out
                ),
                {"INVALID_ARGUMENT": "WRONG_TYPE_CALCULATION"},
            )

    # ------------------------------------------------------------ counters
    def _array(self, family: str, arrays: dict[str, Any], name: str, index: int | None) -> Any:
        a = arrays.get(name)
        if a is None or a.is_direct:
            raise RuntimeOpError(family, f"INVALID_{family.upper()}_NAME", name)
        if index is not None and not 0 <= index < a.size:
            raise RuntimeOpError(family, "INVALID_INDEX", str(index))
        return a

    def counter_read(self, name: str, index: int) -> CounterValue:
        with self._op("counter") as (prog, _):
            self._array("counter", prog.counters, name, index)
            return self._call("counter", lambda: self.engine.counter_read(name, index), {})

    def counter_write(self, name: str, index: int, value: CounterValue) -> None:
        with self._op("counter") as (prog, _):
            self._array("counter", prog.counters, name, index)
            self._call("counter", lambda: self.engine.counter_write(name, index, value), {})

    def counter_reset(self, name: str) -> None:
        with self._op("counter") as (prog, _):
            a = self._array("counter", prog.counters, name, None)
            for i in range(a.size):
                self._call(
                    "counter",
                    lambda i=i: self.engine.counter_write(name, i, CounterValue()),
                    {},
                )

    # ------------------------------------------------------------ meters
    def meter_set_rates(self, name: str, index: int, rates: Sequence[MeterRate]) -> None:
        with self._op("meter") as (prog, state):
            a = self._array("meter", prog.meters, name, index)
            config = self._meter_config("meter", rates, a.rate_count)
            self._call("meter", lambda: self.engine.meter_set(name, index, config), {})
            state.meter_rates[(name, index)] = list(rates)

    def meter_array_set_rates(self, name: str, rates: Sequence[MeterRate]) -> None:
        with self._op("meter") as (prog, _):
            a = self._array("meter", prog.meters, name, None)
            for i in range(a.size):
                self.meter_set_rates(name, i, rates)

    def meter_get_rates(self, name: str, index: int) -> list[MeterRate]:
        with self._op("meter") as (prog, state):
            self._array("meter", prog.meters, name, index)
            return list(state.meter_rates.get((name, index), []))

    # ------------------------------------------------------------ registers
    def register_read(self, name: str, index: int) -> int:
        with self._op("register") as (prog, _):
            self._array("register", prog.registers, name, index)
            return int(self._call("register", lambda: self.engine.register_read(name, index), {}))

    def register_read_all(self, name: str) -> list[int]:
        with self._op("register") as (prog, _):
            a = self._array("register", prog.registers, name, None)
            return [
                int(self._call("register", lambda i=i: self.engine.register_read(name, i), {}))
                for i in range(a.size)
            ]

    def register_write_range(self, name: str, start: int, end: int, value: int) -> None:
        with self._op("register") as (prog, _):
            a = self._array("register", prog.registers, name, start)
            if not start <= end < a.size:
                raise RuntimeOpError("register", "INVALID_INDEX", str(end))
            masked = value & ((1 << a.bitwidth) - 1)
            for i in range(start, end + 1):
                self._call("register", lambda i=i: self.engine.register_write(name, i, masked), {})

    def register_write(self, name: str, index: int, value: int) -> None:
        self.register_write_range(name, index, index, value)

    def register_reset(self, name: str) -> None:
        with self._op("register") as (prog, _):
            a = self._array("register", prog.registers, name, None)
        if a.size:
            self.register_write_range(name, 0, a.size - 1, 0)

    # ------------------------------------------------------------ parser value sets
    def _pvs(self, prog: Program, name: str) -> int:
        if name not in prog.value_sets:
            raise RuntimeOpError("pvs", "INVALID_PARSE_VSET_NAME", name)
        return prog.value_sets[name]

    def pvs_add(self, name: str, value: bytes) -> None:
        with self._op("pvs") as (prog, _):
            self._pvs(prog, name)
            values = self._call("pvs", lambda: self.engine.value_set_values(name), {})
            if _int(value) not in values:
                self._call("pvs", lambda: self.engine.value_set_add(name, _int(value)), {})

    def pvs_remove(self, name: str, value: bytes) -> None:
        with self._op("pvs") as (prog, _):
            self._pvs(prog, name)
            self._call("pvs", lambda: self.engine.value_set_remove(name, _int(value)), {})

    def pvs_get(self, name: str) -> list[bytes]:
        with self._op("pvs") as (prog, _):
            width = self._pvs(prog, name)
            values = self._call("pvs", lambda: self.engine.value_set_values(name), {})
            return [_bytes(int(v), width) for v in values]

    def pvs_clear(self, name: str) -> None:
        with self._op("pvs") as (prog, _):
            self._pvs(prog, name)
            self._call("pvs", lambda: self.engine.value_set_set(name, []), {})

    # ------------------------------------------------------------ multicast (PRE)
    def _mc_push(self, state: _State, mgid: int) -> None:
        replicas = []
        for h in state.mc_groups[mgid]:
            node = state.mc_nodes[h]
            replicas.extend(Replica(port, node.rid) for port in node.ports)
        self._call("mc", lambda: self.engine.multicast_group_set(mgid, replicas), {})

    def mc_mgrp_create(self, mgid: int) -> int:
        with self._op("mc") as (_, state):
            if not 0 <= mgid < 1 << 16 or mgid in state.mc_groups:
                raise RuntimeOpError("mc", "INVALID_MGID", str(mgid))
            state.mc_groups[mgid] = []
            self._mc_push(state, mgid)
            return mgid

    def mc_mgrp_destroy(self, mgid: int) -> None:
        with self._op("mc") as (_, state):
            if mgid not in state.mc_groups:
                raise RuntimeOpError("mc", "INVALID_MGRP_HANDLE", str(mgid))
            for h in state.mc_groups.pop(mgid):
                state.mc_nodes[h].group = None
            self._call("mc", lambda: self.engine.multicast_group_delete(mgid), {})

    def mc_node_create(self, rid: int, ports: list[int], lags: list[int]) -> int:
        with self._op("mc") as (_, state):
            if lags:
                raise RuntimeOpError("mc", "ERROR", "LAGs are not supported")
            # The lowest free handle, as BMv2's handle manager hands them out.
            h = next(i for i in range(len(state.mc_nodes) + 1) if i not in state.mc_nodes)
            state.mc_nodes[h] = _McNode(rid, ports, lags)
            return h

    def _node(self, state: _State, handle: int) -> _McNode:
        node = state.mc_nodes.get(handle)
        if node is None:
            raise RuntimeOpError("mc", "INVALID_L1_HANDLE", str(handle))
        return node

    def mc_node_update(self, handle: int, ports: list[int], lags: list[int]) -> None:
        with self._op("mc") as (_, state):
            node = self._node(state, handle)
            if lags:
                raise RuntimeOpError("mc", "ERROR", "LAGs are not supported")
            node.ports = ports
            if node.group is not None:
                self._mc_push(state, node.group)

    def mc_node_destroy(self, handle: int) -> None:
        with self._op("mc") as (_, state):
            node = self._node(state, handle)
            if node.group is not None:
                state.mc_groups[node.group].remove(handle)
                self._mc_push(state, node.group)
            del state.mc_nodes[handle]

    def mc_node_associate(self, mgid: int, handle: int) -> None:
        with self._op("mc") as (_, state):
            if mgid not in state.mc_groups:
                raise RuntimeOpError("mc", "INVALID_MGRP_HANDLE", str(mgid))
            node = self._node(state, handle)
            if node.group is not None:
                raise RuntimeOpError("mc", "ERROR", "node already associated")
            node.group = mgid
            state.mc_groups[mgid].append(handle)
            self._mc_push(state, mgid)

    def mc_node_dissociate(self, mgid: int, handle: int) -> None:
        with self._op("mc") as (_, state):
            if mgid not in state.mc_groups:
                raise RuntimeOpError("mc", "INVALID_MGRP_HANDLE", str(mgid))
            node = self._node(state, handle)
            if node.group != mgid:
                raise RuntimeOpError("mc", "INVALID_L1_HANDLE", "not in this group")
            node.group = None
            state.mc_groups[mgid].remove(handle)
            self._mc_push(state, mgid)

    def mc_set_lag_membership(self, lag: int, ports: list[int]) -> None:
        with self._op("mc") as (_, state):
            state.lags[lag] = ports

    def mc_entries(self) -> dict[str, Any]:
        """The PRE's state in bm_mc_get_entries' JSON shape."""
        with self._op("mc") as (_, state):
            nodes = sorted(state.mc_nodes.items())
            return {
                "mgrps": [
                    {"id": g, "l1_handles": list(hs)} for g, hs in sorted(state.mc_groups.items())
                ],
                "l1_handles": [{"handle": h, "rid": n.rid, "l2_handle": h} for h, n in nodes],
                "l2_handles": [
                    {"handle": h, "ports": n.ports, "lags": n.lags, "ref_count": 1}
                    for h, n in nodes
                ],
                "lags": [{"id": i, "ports": p} for i, p in sorted(state.lags.items())],
            }

    # ------------------------------------------------------------ mirroring
    def mirroring_add(self, session: int, port: int | None, mgid: int | None) -> None:
        with self._op("mirroring") as (_, state):
            replicas = [Replica(port, 0)] if port is not None else []
            if mgid is not None:
                for h in state.mc_groups.get(mgid, []):
                    node = state.mc_nodes[h]
                    replicas.extend(Replica(p, node.rid) for p in node.ports)
            self._call(
                "mirroring", lambda: self.engine.clone_session_set(session, replicas, 0, 0), {}
            )
            state.mirrors[session] = (port, mgid)

    def mirroring_delete(self, session: int) -> None:
        with self._op("mirroring") as (_, state):
            if session not in state.mirrors:
                raise RuntimeOpError("mirroring", "SESSION_NOT_FOUND")
            self._call("mirroring", lambda: self.engine.clone_session_delete(session), {})
            del state.mirrors[session]

    def mirroring_get(self, session: int) -> tuple[int | None, int | None]:
        with self._op("mirroring") as (_, state):
            if session not in state.mirrors:
                raise RuntimeOpError("mirroring", "SESSION_NOT_FOUND")
            return state.mirrors[session]

    # ------------------------------------------------------------ queues, ports, time
    def set_queue_depth(self, port: int | None, depth: int) -> None:
        try:
            self.engine.set_queue_depth(port, depth)
        except EngineError as e:
            raise RuntimeOpError("queue", "ERROR", e.message) from None

    def set_queue_rate(self, port: int | None, rate_pps: int) -> None:
        try:
            self.engine.set_queue_rate(port, QueueRate(rate_pps, "pps"))
        except EngineError as e:
            raise RuntimeOpError("queue", "ERROR", e.message) from None

    def ports(self) -> list[tuple[int, str]]:
        names = getattr(self.engine, "interface", lambda p: None)
        out = []
        for p in getattr(self.engine, "stats_ports", list)():
            name = names(p)
            if name is not None:
                out.append((p, name))
        return out

    def time_elapsed_us(self) -> int:
        if self._clock_us is not None:
            return self._clock_us()
        return int((time.monotonic() - self._start) * 1e6)
