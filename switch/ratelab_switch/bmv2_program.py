"""The names a BMv2 JSON program declares, as BMv2's runtime API addresses them:
tables, actions, action profiles, counters, meters, registers, parser value sets
and learn lists, with the bit widths the runtime needs to read keys and data."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

# Match kinds that make an entry carry a priority (BMv2: lower wins).
PRIORITY_KINDS = frozenset({"ternary", "range", "optional"})


class ProgramError(Exception):
    """The JSON lacks something the runtime needs; the message names it."""


@dataclass(frozen=True)
class KeyFieldInfo:
    name: str
    match_type: str  # exact, lpm, ternary, range, valid, optional
    bitwidth: int


@dataclass(frozen=True)
class DefaultEntry:
    action: str
    data: tuple[int, ...]
    action_const: bool
    entry_const: bool


@dataclass
class TableInfo:
    name: str
    key: list[KeyFieldInfo]
    actions: list[str]
    type: str  # simple, indirect, indirect_ws
    profile: str | None
    max_size: int
    with_counters: bool
    direct_meter: str | None
    support_timeout: bool
    default: DefaultEntry | None

    @property
    def needs_priority(self) -> bool:
        return any(k.match_type in PRIORITY_KINDS for k in self.key)


@dataclass
class ProfileInfo:
    name: str
    max_size: int
    with_selector: bool
    actions: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class ArrayInfo:
    """A counter, meter or register array (size 0 for direct ones)."""

    name: str
    size: int
    is_direct: bool = False
    binding: str | None = None  # the table of a direct counter or meter
    bitwidth: int = 0  # registers
    rate_count: int = 2  # meters


@dataclass
class Program:
    tables: dict[str, TableInfo]
    actions: dict[str, list[tuple[str, int]]]  # name -> runtime_data (name, bitwidth)
    action_ids: dict[int, str]
    profiles: dict[str, ProfileInfo]
    counters: dict[str, ArrayInfo]
    meters: dict[str, ArrayInfo]
    registers: dict[str, ArrayInfo]
    value_sets: dict[str, int]  # name -> compressed bitwidth
    learn_lists: dict[str, int]  # name -> id
    calculations: dict[str, str]  # name -> algorithm


def _field_width(j: dict[str, Any], header: str, name: str) -> int:
    types = {t["name"]: t for t in j.get("header_types", [])}
    for h in j.get("headers", []):
        if h["name"] == header:
            for f in types[h["header_type"]]["fields"]:
                if f[0] == name:
                    return int(f[1])
    raise ProgramError(f"a table key names field {header}.{name}, which the JSON lacks")


def parse_program(text: bytes | str) -> Program:
    try:
        j = json.loads(text)
        return _parse(j)
    except (ValueError, KeyError, TypeError, IndexError) as e:
        raise ProgramError(f"not a BMv2 JSON program the runtime can read: {e!r}") from None


def _parse(j: dict[str, Any]) -> Program:
    actions: dict[str, list[tuple[str, int]]] = {}
    action_ids: dict[int, str] = {}
    for a in j.get("actions", []):
        actions.setdefault(a["name"], [(p["name"], int(p["bitwidth"])) for p in a["runtime_data"]])
        action_ids[int(a["id"])] = a["name"]
    tables: dict[str, TableInfo] = {}
    profiles: dict[str, ProfileInfo] = {}
    for pipe in j.get("pipelines", []):
        for p in pipe.get("action_profiles", []):
            profiles[p["name"]] = ProfileInfo(p["name"], int(p.get("max_size", 0)), "selector" in p)
        for t in pipe["tables"]:
            key = []
            for k in t.get("key", []):
                target, kind = k["target"], k["match_type"]
                if kind == "valid":
                    key.append(KeyFieldInfo(f"{target}_valid", kind, 1))
                elif target[1] == "$valid$":
                    key.append(KeyFieldInfo(f"{target[0]}_valid", kind, 1))
                else:
                    width = _field_width(j, target[0], target[1])
                    key.append(KeyFieldInfo(".".join(target), kind, width))
            profile = t.get("action_profile") or t.get("act_prof_name")
            if profile is not None and profile not in profiles:
                profiles[profile] = ProfileInfo(profile, int(t.get("max_size", 0)), "selector" in t)
            if profile is not None:
                profiles[profile].actions.update(t["actions"])
            d = t.get("default_entry")
            default = None
            if d is not None and int(d["action_id"]) in action_ids:
                default = DefaultEntry(
                    action_ids[int(d["action_id"])],
                    tuple(int(str(v), 0) for v in d.get("action_data", [])),
                    bool(d.get("action_const", False)),
                    bool(d.get("action_entry_const", False)),
                )
            tables[t["name"]] = TableInfo(
                name=t["name"],
                key=key,
                actions=list(t["actions"]),
                type=t.get("type", "simple"),
                profile=profile,
                max_size=int(t.get("max_size", 0)),
                with_counters=bool(t.get("with_counters", False)),
                direct_meter=t.get("direct_meters"),
                support_timeout=bool(t.get("support_timeout", False)),
                default=default,
            )
    counters = {
        c["name"]: ArrayInfo(
            c["name"], int(c.get("size", 0)), bool(c.get("is_direct")), c.get("binding")
        )
        for c in j.get("counter_arrays", [])
    }
    meters = {
        m["name"]: ArrayInfo(
            m["name"],
            int(m.get("size", 0)),
            bool(m.get("is_direct")),
            m.get("binding"),
            rate_count=int(m.get("rate_count", 2)),
        )
        for m in j.get("meter_arrays", [])
    }
    registers = {
        r["name"]: ArrayInfo(r["name"], int(r["size"]), bitwidth=int(r["bitwidth"]))
        for r in j.get("register_arrays", [])
    }
    value_sets = {
        v["name"]: int(v.get("compressed_bitwidth", v.get("bitwidth", 0)))
        for v in j.get("parse_vsets", [])
    }
    learn_lists = {x["name"]: int(x["id"]) for x in j.get("learn_lists", [])}
    calculations = {c["name"]: str(c.get("algo", "")) for c in j.get("calculations", [])}
    return Program(
        tables,
        actions,
        action_ids,
        profiles,
        counters,
        meters,
        registers,
        value_sets,
        learn_lists,
        calculations,
    )
