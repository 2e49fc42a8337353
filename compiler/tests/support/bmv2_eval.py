"""A small evaluator for BMv2 JSON, following docs/JSON_format.md of behavioral-model.

It runs what the tests need to check behaviour rather than text: expressions
(infinite-precision arithmetic, truncated when stored into a field), action
primitives (assign, header validity, mark_to_drop, exit, jumps), a control pipeline
(conditionals, tables with const entries or a chosen entry, next_tables), and one
parser state's ops and transition. Extern primitives are recorded, not executed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Json = Any


class EvalError(AssertionError):
    """The JSON uses something this evaluator (or BMv2) does not understand."""


@dataclass
class Env:
    """Packet state: field values, header validity, and what happened."""

    j: dict[str, Any]
    fields: dict[tuple[str, str], int] = field(default_factory=dict)
    valid: dict[str, bool] = field(default_factory=dict)
    runtime_data: list[int] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)
    trace: list[str] = field(default_factory=list)
    exited: bool = False
    lookahead: int = 0
    lookahead_bits: int = 0

    def __post_init__(self) -> None:
        self._types = {ht["name"]: ht for ht in self.j["header_types"]}
        self._headers = {h["name"]: h for h in self.j["headers"]}

    def union_members(self, union: str) -> list[str]:
        by_id = {h["id"]: h["name"] for h in self.j["headers"]}
        for u in self.j["header_unions"]:
            if u["name"] == union:
                return [by_id[i] for i in u["header_ids"]]
        raise EvalError(f"unknown header union {union!r}")

    def field_info(self, header: str, fname: str) -> tuple[int, bool]:
        h = self._headers.get(header)
        if h is None:
            raise EvalError(f"unknown header instance {header!r}")
        for f in self._types[h["header_type"]]["fields"]:
            if f[0] == fname:
                signed = bool(f[2]) if len(f) > 2 else False
                if f[1] == "*":
                    return 0, False
                return int(f[1]), signed
        raise EvalError(f"unknown field {header}.{fname}")

    def scalar_named(self, suffix: str) -> tuple[str, str]:
        """The metadata field reference whose name is suffix or ends with .suffix/_suffix."""
        matches = []
        for hname, h in self._headers.items():
            if not h.get("metadata") or hname == "standard_metadata":
                continue
            for f in self._types[h["header_type"]]["fields"]:
                n = f[0]
                if n == suffix or n.endswith("." + suffix) or n.endswith("_" + suffix):
                    matches.append((hname, n))
        if len(matches) != 1:
            raise EvalError(f"metadata field {suffix!r}: candidates {matches}")
        return matches[0]

    def get(self, header: str, fname: str) -> int:
        if fname == "$valid$":
            return int(self.valid.get(header, False))
        return self.fields.get((header, fname), 0)

    def set(self, header: str, fname: str, value: int) -> None:
        width, signed = self.field_info(header, fname)
        value = wrap(value, width, signed)
        self.fields[(header, fname)] = value


def wrap(value: int, width: int, signed: bool) -> int:
    value &= (1 << width) - 1
    if signed and value >= 1 << (width - 1):
        value -= 1 << width
    return value


def _int(v: int | bool) -> int:
    return int(v)


def evaluate(tv: Json, env: Env) -> Any:
    """Evaluate a type/value object or a bare expression object."""
    if tv is None:
        return None
    if "op" in tv and "type" not in tv:
        return _eval_op(tv, env)
    kind, value = tv["type"], tv.get("value")
    if kind == "field":
        return env.get(value[0], value[1])
    if kind == "hexstr":
        return int(value, 16)
    if kind == "bool":
        return bool(value)
    if kind in ("runtime_data", "local"):
        return env.runtime_data[value]
    if kind == "expression":
        return evaluate(value, env)
    if kind in ("header", "header_stack", "header_union", "string"):
        return value
    if kind == "lookahead":
        offset, width = value
        shift = env.lookahead_bits - offset - width
        if shift < 0:
            raise EvalError("lookahead beyond the bits the test supplied")
        return (env.lookahead >> shift) & ((1 << width) - 1)
    raise EvalError(f"cannot evaluate {tv}")


_BINARY = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: a // b,
    "%": lambda a, b: a % b,
    "<<": lambda a, b: a << b,
    ">>": lambda a, b: a >> b,
    "&": lambda a, b: a & b,
    "|": lambda a, b: a | b,
    "^": lambda a, b: a ^ b,
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    ">": lambda a, b: a > b,
    "<=": lambda a, b: a <= b,
    ">=": lambda a, b: a >= b,
    "min": min,
    "max": max,
}


def _eval_op(e: Json, env: Env) -> Any:
    op = e["op"]
    if op == "?":
        return evaluate(e["left"], env) if evaluate(e["cond"], env) else evaluate(e["right"], env)
    if op == "and":
        return bool(evaluate(e["left"], env)) and bool(evaluate(e["right"], env))
    if op == "or":
        return bool(evaluate(e["left"], env)) or bool(evaluate(e["right"], env))
    right = evaluate(e["right"], env)
    if op == "not":
        return not right
    if op == "~":
        return ~_int(right)
    if op == "d2b":
        return bool(right)
    if op == "b2d":
        return int(bool(right))
    if op == "valid":
        return env.valid.get(right, False)
    if op == "valid_union":
        return any(env.valid.get(h, False) for h in env.union_members(right))
    if op == "access_field":  # a field of a stack element addressed at run time
        return env.get(*_dynamic_field(e, env))
    left = evaluate(e["left"], env)
    if op == "dereference_header_stack":
        return f"{left}[{_int(right)}]"
    if op == "two_comp_mod":
        return wrap(_int(left), _int(right), True)
    if op == "sat_cast":
        lo, hi = -(1 << (right - 1)), (1 << (right - 1)) - 1
        return max(lo, min(hi, left))
    if op == "usat_cast":
        return max(0, min((1 << right) - 1, left))
    if op in _BINARY:
        a = left if isinstance(left, bool) and op in ("==", "!=") else _int(left)
        b = right if isinstance(right, bool) and op in ("==", "!=") else _int(right)
        return _BINARY[op](a, b)
    raise EvalError(f"unsupported expression op {op!r}")


def _dynamic_field(e: Json, env: Env) -> tuple[str, str]:
    """(header instance, field name) of an `access_field` expression."""
    header = evaluate(e["left"], env)
    fields = env._types[env._headers[header]["header_type"]]["fields"]
    return header, fields[e["right"]][0]


def _lvalue(tv: Json, env: Env | None = None) -> tuple[str, str]:
    if tv["type"] == "field":
        return tv["value"][0], tv["value"][1]
    inner = tv
    while inner.get("type") == "expression":
        inner = inner["value"]
    if env is not None and inner.get("op") == "access_field":
        return _dynamic_field(inner, env)
    raise EvalError(f"unsupported assignment target {tv}")


def run_action(action: Json, env: Env, runtime_data: list[int] | None = None) -> None:
    """Execute an action's primitives (runtime_data: the action parameters)."""
    saved = env.runtime_data
    env.runtime_data = list(runtime_data or [])
    prims = action["primitives"]
    pc = 0
    steps = 0
    while pc < len(prims) and not env.exited:
        steps += 1
        if steps > 10_000:
            raise EvalError("action does not terminate")
        p = prims[pc]
        op, params = p["op"], p["parameters"]
        pc += 1
        if op in ("assign", "modify_field"):
            h, f = _lvalue(params[0], env)
            value = evaluate(params[1], env)
            env.set(h, f, int(value))
        elif op == "add_header":
            env.valid[params[0]["value"]] = True
        elif op == "remove_header":
            env.valid[params[0]["value"]] = False
        elif op == "mark_to_drop":
            env.calls.append(op)
            env.set("standard_metadata", "egress_spec", 511)
            if ("standard_metadata", "mcast_grp") in env.fields:
                env.set("standard_metadata", "mcast_grp", 0)
        elif op == "exit":
            env.exited = True
        elif op == "_jump":
            pc = int(evaluate(params[0], env))
        elif op == "_jump_if_zero":
            if not evaluate(params[0], env):
                pc = int(evaluate(params[1], env))
        else:
            env.calls.append(op)
    env.runtime_data = saved


def _key_value(key: Json, env: Env) -> int:
    target = key["target"]
    if key["match_type"] == "valid":
        return int(env.valid.get(target, False))
    value = env.get(target[0], target[1])
    if key.get("mask"):
        value &= int(key["mask"], 16)
    return value


def _entry_matches(entry: Json, keys: list[Json], env: Env) -> bool:
    for key, mk in zip(keys, entry["match_key"], strict=True):
        v = _key_value(key, env)
        width = env.field_info(*key["target"])[0] if key["match_type"] != "valid" else 1
        kind = mk["match_type"]
        if kind == "exact" and v != int(mk["key"], 16):
            return False
        if kind in ("ternary", "optional") and "mask" in mk:
            mask = int(mk["mask"], 16)
            if v & mask != int(mk["key"], 16) & mask:
                return False
        if kind == "optional" and "mask" not in mk and v != int(mk["key"], 16):
            return False
        if kind == "lpm":
            plen = mk["prefix_length"]
            mask = ((1 << plen) - 1) << (width - plen) if plen else 0
            if v & mask != int(mk["key"], 16) & mask:
                return False
        if kind == "range" and not int(mk["start"], 16) <= v <= int(mk["end"], 16):
            return False
    return True


@dataclass
class Installed:
    """A control-plane entry the test pretends was installed: the table hits it."""

    action: str
    data: list[int] = field(default_factory=list)


def _action_by_id(j: Json, action_id: int) -> Json:
    for a in j["actions"]:
        if a["id"] == action_id:
            return a
    raise EvalError(f"no action id {action_id}")


def apply_table(
    table: Json, env: Env, installed: dict[str, Installed] | None = None
) -> tuple[bool, str]:
    """Apply one table; returns (hit, action name)."""
    j = env.j
    entry = (installed or {}).get(table["name"])
    if entry is not None:
        candidates = [
            a for a in j["actions"] if a["name"] == entry.action and a["id"] in table["action_ids"]
        ]
        if not candidates:
            raise EvalError(f"{table['name']} has no action {entry.action}")
        run_action(candidates[0], env, entry.data)
        return True, candidates[0]["name"]
    matching = [e for e in table.get("entries", []) if _entry_matches(e, table["key"], env)]
    if matching:
        best = min(matching, key=lambda e: e.get("priority", 0))
        act = _action_by_id(j, best["action_entry"]["action_id"])
        run_action(act, env, [int(x, 16) for x in best["action_entry"]["action_data"]])
        return True, act["name"]
    default = table.get("default_entry")
    if default is None:
        raise EvalError(f"table {table['name']} has no default_entry")
    act = _action_by_id(j, default["action_id"])
    run_action(act, env, [int(x, 16) for x in default.get("action_data", [])])
    return False, act["name"]


def run_pipeline(
    env: Env, name: str, installed: dict[str, Installed] | None = None, max_steps: int = 1000
) -> None:
    """Run a control pipeline ("ingress"/"egress") from its init_table."""
    j = env.j
    pipe = next((p for p in j["pipelines"] if p["name"] == name), None)
    if pipe is None:
        raise EvalError(f"no pipeline {name}")
    tables = {t["name"]: t for t in pipe["tables"]}
    conds = {c["name"]: c for c in pipe["conditionals"]}
    node = pipe["init_table"]
    steps = 0
    while node is not None and not env.exited:
        steps += 1
        if steps > max_steps:
            raise EvalError("pipeline does not terminate")
        env.trace.append(node)
        if node in conds:
            c = conds[node]
            node = c["true_next"] if evaluate(c["expression"], env) else c["false_next"]
            continue
        if node not in tables:
            raise EvalError(f"unknown pipeline node {node!r}")
        t = tables[node]
        hit, action_name = apply_table(t, env, installed)
        nt = t["next_tables"]
        if "__HIT__" in nt or "__MISS__" in nt:
            node = nt["__HIT__"] if hit else nt["__MISS__"]
        elif action_name in nt:
            node = nt[action_name]
        else:
            node = t.get("base_default_next")


def run_parse_state(state: Json, env: Env, vsets: dict[str, set[int]] | None = None) -> Any:
    """Execute one parse state's ops, then return its next state (None: accept/end)."""
    for op in state["parser_ops"]:
        kind, params = op["op"], op["parameters"]
        if kind in ("extract", "extract_VL"):
            if params[0]["type"] == "regular":
                env.valid[params[0]["value"]] = True
            env.calls.append(kind)
        elif kind == "set":
            h, f = _lvalue(params[0], env)
            env.set(h, f, int(evaluate(params[1], env)))
        elif kind == "primitive":
            run_action({"primitives": params}, env)
        else:
            env.calls.append(kind)
    key_parts: list[tuple[int, int]] = []
    for k in state.get("transition_key", []):
        if k["type"] == "field":
            width = env.field_info(k["value"][0], k["value"][1])[0]
        elif k["type"] == "lookahead":
            width = k["value"][1]
        else:
            raise EvalError(f"unsupported transition key {k}")
        key_parts.append((int(evaluate(k, env)) & ((1 << width) - 1), width))
    packed = 0
    for value, width in key_parts:
        packed = (packed << (8 * ((width + 7) // 8))) | value
    for t in state["transitions"]:
        ttype = t.get("type", "hexstr" if t.get("value") not in (None, "default") else "default")
        if ttype == "default":
            return t["next_state"]
        mask = int(t["mask"], 16) if isinstance(t.get("mask"), str) else None
        if ttype == "hexstr":
            value = int(t["value"], 16)
            if mask is None and packed == value:
                return t["next_state"]
            if mask is not None and packed & mask == value & mask:
                return t["next_state"]
        elif ttype == "parse_vset":
            members = (vsets or {}).get(t["value"], set())
            effective = mask if mask is not None else -1
            if any(packed & effective == m & effective for m in members):
                return t["next_state"]
        else:
            raise EvalError(f"unsupported transition type {ttype}")
    return None
