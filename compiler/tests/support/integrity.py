"""Whole-file consistency checks: every reference in a BMv2 JSON or a P4Info resolves.

Each checker returns a list of problems (empty when the file is consistent), so one
assertion can show all of them at once.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from finsy.proto.p4.config.v1 import p4info_pb2

# Top-level sections p4c's BMv2 back end always writes.
REQUIRED_SECTIONS = (
    "header_types",
    "headers",
    "header_stacks",
    "header_union_types",
    "header_unions",
    "header_union_stacks",
    "field_lists",
    "errors",
    "enums",
    "parsers",
    "parse_vsets",
    "deparsers",
    "meter_arrays",
    "counter_arrays",
    "register_arrays",
    "calculations",
    "learn_lists",
    "actions",
    "pipelines",
    "checksums",
    "force_arith",
    "extern_instances",
    "field_aliases",
)


def _dupes(values: list[Any]) -> list[Any]:
    return [v for v, n in Counter(values).items() if n > 1]


def _walk_field_refs(node: Any, out: list[tuple[str, str]]) -> None:
    if isinstance(node, dict):
        if node.get("type") == "field" and isinstance(node.get("value"), list):
            out.append((node["value"][0], node["value"][1]))
        for v in node.values():
            _walk_field_refs(v, out)
    elif isinstance(node, list):
        for v in node:
            _walk_field_refs(v, out)


def _hex_bytes(text: str) -> int:
    digits = text.lstrip("-")[2:]
    return (len(digits) + 1) // 2


def _field_width(j: dict[str, Any], header: str, field: str) -> int | None:
    types = {ht["name"]: ht for ht in j["header_types"]}
    for h in j["headers"]:
        if h["name"] == header:
            for f in types[h["header_type"]]["fields"]:
                if f[0] == field and isinstance(f[1], int):
                    return int(f[1])
    for st in j["header_stacks"]:
        if st["name"] == header:
            for f in types[st["header_type"]]["fields"]:
                if f[0] == field and isinstance(f[1], int):
                    return int(f[1])
    return None


def check_hexstr_widths(j: dict[str, Any]) -> list[str]:
    """BMv2 compares const entry keys and parser transition values byte by byte, so each
    hexstr must have exactly the byte width of its (byte-padded) key."""
    problems: list[str] = []
    for p in j["pipelines"]:
        for t in p["tables"]:
            widths = []
            for k in t["key"]:
                if k["match_type"] == "valid":
                    widths.append(1)
                else:
                    widths.append(_field_width(j, k["target"][0], k["target"][1]) or 0)
            for n, e in enumerate(t.get("entries", [])):
                for w, mk in zip(widths, e["match_key"], strict=False):
                    for attr in ("key", "mask", "start", "end"):
                        if attr in mk and w and _hex_bytes(mk[attr]) != (w + 7) // 8:
                            problems.append(
                                f"table {t['name']} entry {n}: {attr} {mk[attr]} is not "
                                f"{(w + 7) // 8} bytes wide"
                            )
    for pr in j["parsers"]:
        for s in pr["parse_states"]:
            total = 0
            for k in s.get("transition_key", []):
                if k["type"] in ("field", "stack_field"):
                    w = _field_width(j, k["value"][0], k["value"][1]) or 0
                elif k["type"] == "lookahead":
                    w = k["value"][1]
                else:
                    w = 0
                total += (w + 7) // 8
            for t in s["transitions"]:
                if t.get("type") != "hexstr":
                    continue
                for attr in ("value", "mask"):
                    v = t.get(attr)
                    if isinstance(v, str) and _hex_bytes(v) != total:
                        problems.append(
                            f"state {s['name']}: transition {attr} {v} is not {total} bytes wide"
                        )
    return problems


def check_bmv2_json(j: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    meta = j.get("__meta__", {})
    version = meta.get("version")
    if not (
        isinstance(version, list) and len(version) == 2 and version[0] == 2 and version[1] >= 18
    ):
        problems.append(f"__meta__.version should be [2, >=18], got {version!r}")
    for section in REQUIRED_SECTIONS:
        if section not in j:
            problems.append(f"missing top-level section {section!r}")
    if problems:
        return problems

    for section in (
        "header_types",
        "headers",
        "header_stacks",
        "header_unions",
        "parsers",
        "deparsers",
        "meter_arrays",
        "counter_arrays",
        "register_arrays",
        "calculations",
        "actions",
        "pipelines",
        "checksums",
        "parse_vsets",
    ):
        ids = [item["id"] for item in j[section]]
        if _dupes(ids):
            problems.append(f"{section}: duplicate ids {_dupes(ids)}")
    for section in (
        "header_types",
        "headers",
        "header_stacks",
        "register_arrays",
        "counter_arrays",
    ):
        names = [item["name"] for item in j[section]]
        if _dupes(names):
            problems.append(f"{section}: duplicate names {_dupes(names)}")

    # simple_switch looks these objects up by name
    for section, names in (("parsers", {"parser"}), ("deparsers", {"deparser"}),
                           ("pipelines", {"ingress", "egress"})):  # fmt: skip
        missing = names - {item["name"] for item in j[section]}
        if missing:
            problems.append(f"{section}: missing {sorted(missing)}")

    types = {ht["name"]: ht for ht in j["header_types"]}
    headers = {h["name"]: h for h in j["headers"]}
    headers_by_id = {h["id"]: h for h in j["headers"]}
    for ht in j["header_types"]:
        for f in ht["fields"]:
            width = f[1]
            if not (width == "*" or (isinstance(width, int) and width > 0)):
                problems.append(f"header type {ht['name']}: bad width in field {f}")
        if any(f[1] == "*" for f in ht["fields"]) and "max_length" not in ht:
            problems.append(f"header type {ht['name']}: varbit field but no max_length")
    for h in j["headers"]:
        if h["header_type"] not in types:
            problems.append(f"header {h['name']}: unknown type {h['header_type']}")
        if not isinstance(h.get("metadata"), bool):
            problems.append(f"header {h['name']}: 'metadata' must be a bool")
    if "standard_metadata" not in headers:
        problems.append("no standard_metadata header instance")
    for st in j["header_stacks"]:
        for hid in st["header_ids"]:
            member = headers_by_id.get(hid)
            if member is None or member["header_type"] != st["header_type"]:
                problems.append(f"stack {st['name']}: bad member id {hid}")
        if st.get("size", len(st["header_ids"])) != len(st["header_ids"]):
            problems.append(f"stack {st['name']}: size != number of header_ids")

    refs: list[tuple[str, str]] = []
    _walk_field_refs(
        [
            j["actions"],
            j["pipelines"],
            j["parsers"],
            j["calculations"],
            j["checksums"],
            j["field_lists"],
            j["learn_lists"],
        ],
        refs,
    )
    for h, f in set(refs):
        if f == "$valid$":
            if h not in headers:
                problems.append(f"validity of unknown header {h}")
            continue
        if h not in headers:
            problems.append(f"field reference to unknown header {h}.{f}")
            continue
        if f not in {fd[0] for fd in types[headers[h]["header_type"]]["fields"]}:
            problems.append(f"field reference to unknown field {h}.{f}")

    actions = {a["id"]: a for a in j["actions"]}
    for a in j["actions"]:
        for rd in a["runtime_data"]:
            if not (isinstance(rd.get("bitwidth"), int) and rd["bitwidth"] > 0):
                problems.append(f"action {a['name']}: bad runtime_data {rd}")

    for p in j["pipelines"]:
        tables = {t["name"]: t for t in p["tables"]}
        conds = {c["name"]: c for c in p["conditionals"]}
        nodes = set(tables) | set(conds)
        if p["init_table"] is not None and p["init_table"] not in nodes:
            problems.append(f"pipeline {p['name']}: init_table {p['init_table']} unknown")
        for t in p["tables"]:
            where = f"table {t['name']}"
            for aid in t["action_ids"]:
                if aid not in actions:
                    problems.append(f"{where}: unknown action id {aid}")
            names = [actions[aid]["name"] for aid in t["action_ids"] if aid in actions]
            if sorted(names) != sorted(t["actions"]):
                problems.append(f"{where}: 'actions' {t['actions']} != names of action_ids {names}")
            for k, nxt in t["next_tables"].items():
                if nxt is not None and nxt not in nodes:
                    problems.append(f"{where}: next_tables[{k}] -> unknown {nxt}")
                if k not in ("__HIT__", "__MISS__") and k not in names:
                    problems.append(f"{where}: next_tables key {k} is not one of its actions")
            base = t.get("base_default_next")
            if base is not None and base not in nodes:
                problems.append(f"{where}: base_default_next unknown {base}")
            de = t.get("default_entry")
            if de is not None:
                if de["action_id"] not in t["action_ids"]:
                    problems.append(f"{where}: default action {de['action_id']} not in action_ids")
                elif "action_data" in de and len(de["action_data"]) != len(
                    actions[de["action_id"]]["runtime_data"]
                ):
                    problems.append(f"{where}: default action_data has the wrong length")
            for e in t.get("entries", []):
                if len(e["match_key"]) != len(t["key"]):
                    problems.append(f"{where}: entry with {len(e['match_key'])} keys")
                act = actions.get(e["action_entry"]["action_id"])
                if act is None or e["action_entry"]["action_id"] not in t["action_ids"]:
                    problems.append(f"{where}: entry with action not in table")
                elif len(e["action_entry"]["action_data"]) != len(act["runtime_data"]):
                    problems.append(f"{where}: entry action_data has the wrong length")
            profiles = {ap["name"]: ap for ap in p["action_profiles"]}
            if t["type"] in ("indirect", "indirect_ws"):
                ap = profiles.get(t.get("action_profile"))
                if ap is None:
                    problems.append(f"{where}: unknown action profile {t.get('action_profile')}")
                elif (t["type"] == "indirect_ws") != ("selector" in ap):
                    problems.append(f"{where}: type {t['type']} does not match its profile")
            elif t["type"] != "simple":
                problems.append(f"{where}: bad type {t['type']}")
            if t["match_type"] not in ("exact", "lpm", "ternary", "range"):
                problems.append(f"{where}: bad match_type {t['match_type']}")
        for c in p["conditionals"]:
            for side in ("true_next", "false_next"):
                if c[side] is not None and c[side] not in nodes:
                    problems.append(f"conditional {c['name']}: {side} unknown {c[side]}")

    all_states = [s for pr in j["parsers"] for s in pr["parse_states"]]
    if _dupes([s["id"] for s in all_states]):
        problems.append("parse state ids are not unique across parsers")
    vsets = {v["name"] for v in j["parse_vsets"]}
    for pr in j["parsers"]:
        names = {s["name"] for s in pr["parse_states"]}
        if pr["init_state"] not in names:
            problems.append(f"parser {pr['name']}: init_state {pr['init_state']} unknown")
        for s in pr["parse_states"]:
            for t in s["transitions"]:
                if t["next_state"] is not None and t["next_state"] not in names:
                    problems.append(f"state {s['name']}: next_state {t['next_state']} unknown")
                if t.get("type") == "parse_vset" and t["value"] not in vsets:
                    problems.append(f"state {s['name']}: unknown value set {t['value']}")
    for d in j["deparsers"]:
        for h in d["order"]:
            if h not in headers:
                problems.append(f"deparser {d['name']}: unknown header {h}")

    all_tables = {t["name"] for p in j["pipelines"] for t in p["tables"]}
    for section in ("counter_arrays", "meter_arrays"):
        for c in j[section]:
            if c.get("is_direct") and c.get("binding") not in all_tables:
                problems.append(f"{section} {c['name']}: binding {c.get('binding')} unknown")
    calcs = {c["name"] for c in j["calculations"]}
    for c in j["checksums"]:
        if c["calculation"] not in calcs:
            problems.append(f"checksum {c['name']}: unknown calculation {c['calculation']}")
    problems.extend(check_hexstr_widths(j))
    return problems


# P4Info repeated field -> id prefix (P4Ids.Prefix in p4info.proto).
PREFIXES = {
    "actions": 0x01,
    "tables": 0x02,
    "value_sets": 0x03,
    "controller_packet_metadata": 0x04,
    "action_profiles": 0x11,
    "counters": 0x12,
    "direct_counters": 0x13,
    "meters": 0x14,
    "direct_meters": 0x15,
    "registers": 0x16,
    "digests": 0x17,
}


def check_p4info(info: p4info_pb2.P4Info) -> list[str]:
    problems: list[str] = []
    if info.pkg_info.arch != "v1model":
        problems.append(f"pkg_info.arch is {info.pkg_info.arch!r}, expected 'v1model'")
    all_ids: list[int] = []
    for kind, prefix in PREFIXES.items():
        for e in getattr(info, kind):
            pid = e.preamble.id
            all_ids.append(pid)
            if pid >> 24 != prefix:
                problems.append(
                    f"{kind} {e.preamble.name}: id {pid:#010x} lacks prefix {prefix:#04x}"
                )
            if not e.preamble.name:
                problems.append(f"{kind}: entity {pid:#x} without a name")
    if _dupes(all_ids):
        problems.append(f"duplicate ids {[hex(i) for i in _dupes(all_ids)]}")
    action_ids = {a.preamble.id for a in info.actions}
    direct = {c.preamble.id: c for c in info.direct_counters}
    direct.update({m.preamble.id: m for m in info.direct_meters})
    for a in info.actions:
        ids = [p.id for p in a.params]
        if ids != list(range(1, len(ids) + 1)):
            problems.append(f"action {a.preamble.name}: param ids {ids} are not 1..n")
        for p in a.params:
            if p.bitwidth <= 0:
                problems.append(f"action {a.preamble.name}: param {p.name} bitwidth {p.bitwidth}")
    for t in info.tables:
        where = f"table {t.preamble.name}"
        ids = [m.id for m in t.match_fields]
        if ids != list(range(1, len(ids) + 1)):
            problems.append(f"{where}: match field ids {ids} are not 1..n")
        refs = [r.id for r in t.action_refs]
        for r in refs:
            if r not in action_ids:
                problems.append(f"{where}: action ref {r:#x} is not an action")
        if t.const_default_action_id and t.const_default_action_id not in refs:
            problems.append(f"{where}: const default action not among action refs")
        for rid in t.direct_resource_ids:
            res = direct.get(rid)
            if res is None:
                problems.append(f"{where}: direct resource {rid:#x} unknown")
            elif res.direct_table_id != t.preamble.id:
                problems.append(
                    f"{where}: direct resource {rid:#x} points to {res.direct_table_id:#x}"
                )
        if t.size <= 0:
            problems.append(f"{where}: size {t.size}")
    table_ids = {t.preamble.id for t in info.tables}
    for res in direct.values():
        if res.direct_table_id not in table_ids:
            problems.append(
                f"direct resource {res.preamble.name}: table {res.direct_table_id:#x} unknown"
            )
    return problems
