"""The test-vector file format (docs/ROUTER_MODEL.md "Test vectors"): reading with
one-line errors that name the file and the field, and writing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, Literal

from ratelab_model import red
from ratelab_model.config import AqmConfig, NextHop, PortConfig, Route, RouterConfig
from ratelab_model.packet import ip_to_int, ip_to_str, mac_to_bytes, mac_to_str

SCHEMA = "ratelab-router-vector/1"
Timing = Literal["exact", "any"]


class VectorError(ValueError):
    """A vector file that does not follow the schema; the message is one line."""


@dataclass(frozen=True)
class InputFrame:
    time_us: int
    port: int
    frame: bytes


@dataclass(frozen=True)
class VectorCase:
    name: str
    description: str
    timing: Timing
    config: RouterConfig
    packets: tuple[InputFrame, ...]


class _Fields:
    """Typed access to one JSON object; errors say which file and field."""

    def __init__(self, source: str, path: str, value: Any) -> None:
        if not isinstance(value, dict):
            raise VectorError(f"{source}: {path}: expected an object")
        self.source, self.path, self.value = source, path, value

    def _fail(self, key: str, expected: str) -> VectorError:
        return VectorError(f"{self.source}: {self.path}.{key}: expected {expected}")

    def raw(self, key: str, default: Any = ...) -> Any:
        if key in self.value:
            return self.value[key]
        if default is ...:
            raise self._fail(key, "a value (missing)")
        return default

    def integer(self, key: str, default: int | None = None, bits: int = 64) -> int:
        value = self.raw(key, ... if default is None else default)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 1 << bits:
            raise self._fail(key, f"an unsigned integer below 2^{bits}")
        return value

    def text(self, key: str, default: str | None = None) -> str:
        value = self.raw(key, ... if default is None else default)
        if not isinstance(value, str):
            raise self._fail(key, "a string")
        return value

    def decimal(self, key: str, default: str) -> Decimal:
        text = self.text(key, default)
        try:
            return Decimal(text)
        except InvalidOperation:
            raise self._fail(key, 'a decimal number in a string, e.g. "0.002"') from None

    def parsed(self, key: str, parse: Any, expected: str) -> Any:
        text = self.text(key)
        try:
            return parse(text)
        except ValueError:
            raise self._fail(key, expected) from None

    def objects(self, key: str) -> list[_Fields]:
        value = self.raw(key)
        if not isinstance(value, list):
            raise self._fail(key, "a list")
        return [_Fields(self.source, f"{self.path}.{key}[{i}]", v) for i, v in enumerate(value)]

    def sub(self, key: str) -> _Fields:
        return _Fields(self.source, f"{self.path}.{key}", self.raw(key))


def _parse_prefix(text: str) -> tuple[int, int]:
    address, _, length = text.partition("/")
    if not length.isdigit():
        raise ValueError(text)
    return ip_to_int(address), int(length)


def _read_port(f: _Fields) -> PortConfig:
    a = f.sub("aqm")
    aqm = AqmConfig(
        mode=a.text("mode"),  # type: ignore[arg-type]
        w_q=a.decimal("w_q", "0.002"),
        max_p=a.decimal("max_p", "0.1"),
        th_min=a.integer("th_min", 5, bits=15),
        th_max=a.integer("th_max", 15, bits=15),
        seed=a.integer("seed", 1, bits=32),
    )
    return PortConfig(
        port=f.integer("port", bits=9),
        mac=f.parsed("mac", mac_to_bytes, "a MAC address like 02:00:00:00:00:01"),
        rate_bps=f.integer("rate_bps"),
        queue_limit=f.integer("queue_limit", bits=16),
        rbcc_capacity=f.integer("rbcc_capacity", bits=32),
        aqm=aqm,
    )


def read_config(f: _Fields) -> RouterConfig:
    routes = []
    for r in f.objects("routes"):
        prefix, length = r.parsed("prefix", _parse_prefix, "a prefix like 10.0.0.0/8")
        routes.append(Route(prefix, length, r.integer("next_hop", bits=32)))
    hops = [
        NextHop(
            h.integer("id", bits=32),
            h.integer("port", bits=9),
            h.parsed("mac", mac_to_bytes, "a MAC"),
        )
        for h in f.objects("next_hops")
    ]
    try:
        return RouterConfig(
            router_id=f.integer("router_id", bits=32),
            ports=tuple(_read_port(p) for p in f.objects("ports")),
            next_hops=tuple(hops),
            routes=tuple(routes),
            abt_slots=f.integer("abt_slots", bits=16),
            idle_timeout_us=f.integer("idle_timeout_us", bits=48),
            min_rate=f.integer("min_rate", bits=32),
            decay_len=f.integer("decay_len", bits=20),
        )
    except ValueError as err:
        if isinstance(err, VectorError):
            raise
        raise VectorError(f"{f.source}: {f.path}: {err}") from None


def read_case(source: str, data: Any) -> VectorCase:
    top = _Fields(source, "$", data)
    if top.raw("schema") != SCHEMA:
        raise VectorError(f"{source}: $.schema: expected {SCHEMA!r}")
    timing = top.text("timing")
    if timing not in ("exact", "any"):
        raise VectorError(f"{source}: $.timing: expected 'exact' or 'any'")
    packets = tuple(
        InputFrame(
            p.integer("time_us", bits=48),
            p.integer("port", bits=9),
            p.parsed("frame", bytes.fromhex, "hex bytes"),
        )
        for p in top.objects("packets")
    )
    return VectorCase(
        name=top.text("name"),
        description=top.text("description"),
        timing=timing,  # type: ignore[arg-type]
        config=read_config(top.sub("config")),
        packets=packets,
    )


def load_file(path: Path) -> tuple[VectorCase, dict[str, Any]]:
    """The case's inputs and the raw JSON (whose `expected` the caller compares)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as err:
        raise VectorError(f"{path}: not readable JSON: {err}") from None
    return read_case(str(path), data), data


def config_to_json(config: RouterConfig) -> dict[str, Any]:
    def aqm(p: PortConfig) -> dict[str, Any]:
        if p.aqm.mode == "fifo":
            return {"mode": "fifo"}
        a = p.aqm
        return {
            "mode": "red",
            "w_q": str(a.w_q),
            "max_p": str(a.max_p),
            "th_min": a.th_min,
            "th_max": a.th_max,
            "seed": a.seed,
        }

    return {
        "router_id": config.router_id,
        "abt_slots": config.abt_slots,
        "idle_timeout_us": config.idle_timeout_us,
        "min_rate": config.min_rate,
        "decay_len": config.decay_len,
        "ports": [
            {
                "port": p.port,
                "mac": mac_to_str(p.mac),
                "rate_bps": p.rate_bps,
                "queue_limit": p.queue_limit,
                "rbcc_capacity": p.rbcc_capacity,
                "aqm": aqm(p),
            }
            for p in config.ports
        ],
        "next_hops": [
            {"id": h.id, "port": h.port, "mac": mac_to_str(h.mac)} for h in config.next_hops
        ],
        "routes": [
            {"prefix": f"{ip_to_str(r.prefix)}/{r.length}", "next_hop": r.next_hop}
            for r in config.routes
        ],
    }


def installed_to_json(config: RouterConfig) -> dict[str, Any]:
    """The derived integers a target installs for each RED port (the decay table
    itself is left out: red.decay_table(w_q, decay_len) gives it)."""
    out: dict[str, Any] = {}
    for p in config.ports:
        if p.aqm.mode == "red":
            r = red.install(p.aqm, p.rate_bps)
            out[str(p.port)] = {
                "wq16": r.wq16,
                "th_min16": r.th_min16,
                "th_max16": r.th_max16,
                "slope": r.slope,
                "s_recip": r.s_recip,
                "seed": r.seed,
            }
    return {"red": out}
