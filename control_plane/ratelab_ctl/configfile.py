"""The router configuration file (YAML): loading, validation, command-line overrides.

The file is read with `yaml.compose`, so every value keeps its line and column;
the first problem found is raised as one `ConfigError`, printed as
`file:line:col: error: <field path>: <what was expected>`. The result is the
reference model's `RouterConfig` (the model and the controller agree on the
router's state by construction) plus the few settings only the controller
needs (device id, switch address, how each port's numbers were derived).

Field paths are dotted: `ports.3.aqm.w_q`, `next_hops.recv.port`,
`routes.10.0.2.0/24`, `rbcc.min_rate`. The same paths name the fields that
`ratelab-ctl set` overrides. docs/CONTROLLER.md is the format reference.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import TypeVar

import yaml
from ratelab_model import red
from ratelab_model.config import (
    DEFAULT_ABT_SLOTS,
    DEFAULT_DECAY_LEN,
    DEFAULT_IDLE_TIMEOUT_US,
    DEFAULT_MIN_RATE,
    DEFAULT_UTILISATION,
    AqmConfig,
    NextHop,
    PortConfig,
    Route,
    RouterConfig,
)
from ratelab_model.presets import PRESETS, Link

from ratelab_ctl import units

DEFAULT_ADDRESS = "127.0.0.1:9559"
MAX_PORT_NUMBER = 511  # 9-bit egress_spec; the compiled program may allow fewer (MAX_PORTS)
UNLIMITED_CAPACITY = 0xFFFFFFFF  # an unlimited port never lowers a flow's rate
OVERRIDE_FILE = "<command line>"

T = TypeVar("T")

_TOP_KEYS = (
    "router_id",
    "device_id",
    "address",
    "rbcc",
    "decay_len",
    "ports",
    "next_hops",
    "routes",
)
_PORT_KEYS = (
    *("mac", "rate", "delay", "queue_limit", "utilisation", "rbcc_capacity", "aqm"),
    *("priority_queues", "priority"),
)
_PRIORITY_KEYS = ("protocols", "ports", "dscp")
# simple_switch's --priority-queues allows 8; so do router.p4 (MAX_QUEUES) and the engine
MAX_PRIORITY_QUEUES = 8
# IPv4 protocol names a classification rule may use (any number 0..255 works too)
PROTOCOL_NUMBERS = {"icmp": 1, "tcp": 6, "udp": 17, "rbcc": 253}
_PORT_RANGE = re.compile(r"^\s*([0-9]+)\s*-\s*([0-9]+)\s*$")
_RBCC_KEYS = ("min_rate", "idle_timeout", "abt_slots", "utilisation")
_AQM_KEYS = ("preset", "seed", "w_q", "max_p", "th_min", "th_max")
_HOP_KEYS = ("port", "mac")
_BDP = re.compile(r"^\s*(?:([1-9][0-9]*)\s*x\s*)?bdp\s*$", re.IGNORECASE)
_AQM_EXPECTED = "fifo, a preset (" + ", ".join(PRESETS) + ") or a mapping of RED parameters"


@dataclass(frozen=True)
class Location:
    filename: str
    line: int  # 1-based
    col: int  # 1-based

    def __str__(self) -> str:
        return f"{self.filename}:{self.line}:{self.col}"


class ConfigError(Exception):
    """One configuration problem, with where it is and what was expected."""

    def __init__(self, location: Location, path: str, message: str) -> None:
        self.location = location
        self.path = path
        self.message = message
        super().__init__(str(self))

    def __str__(self) -> str:
        where = f"{self.path}: " if self.path else ""
        return _one_line(f"{self.location}: error: {where}{self.message}")


def _one_line(text: str) -> str:
    """`text` with control characters escaped (a key may hold a newline)."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


@dataclass(frozen=True)
class PortSettings:
    """How a port's installed numbers were derived (the model keeps only the results)."""

    port: int
    link_rate_bps: int  # 0 = unlimited
    utilisation: Decimal
    aqm_name: str  # "fifo", a preset name, or "red" for explicit parameters
    delay_us: int | None = None
    explicit_capacity: bool = False  # rbcc_capacity given, not derived from rate x utilisation


def rbcc_capacity(rate_bps: int, utilisation: Decimal) -> int:
    """RBCC.md: capacity = link rate x target utilisation, in B/s (rounded down);
    an unlimited port (rate 0) never lowers a rate. ValueError if over 32 bits."""
    if rate_bps == 0:
        return UNLIMITED_CAPACITY
    capacity = int(Decimal(rate_bps) * utilisation / 8)
    if capacity >= 1 << 32:
        raise ValueError(f"expected rate x utilisation / 8 to fit 32 bits (B/s), got {capacity}")
    return capacity


@dataclass(frozen=True)
class PortPriority:
    """A port's strict-priority queues and what goes into them (docs/CONTROLLER.md
    "Priority queues"): (value, priority) pairs per packet field; a packet gets the
    highest priority any of them gives it, 0 otherwise. Not in the reference model:
    only the switch's queueing changes, never a packet or a counter's meaning."""

    port: int
    queues: int  # 1..MAX_PRIORITY_QUEUES; 1 = one FIFO, as without
    protocols: tuple[tuple[int, int], ...] = ()  # (IPv4 protocol, priority)
    l4_ports: tuple[tuple[int, int], ...] = ()  # (TCP/UDP port, source or destination)
    dscp: tuple[tuple[int, int], ...] = ()  # (DSCP 0..63, priority)


@dataclass(frozen=True)
class ControllerConfig:
    router: RouterConfig
    ports: tuple[PortSettings, ...]
    next_hop_names: tuple[tuple[str, int], ...]  # (name, NextHop.id)
    device_id: int = 0
    address: str = DEFAULT_ADDRESS
    # ports with more than one queue or a classification rule, in file order
    priority: tuple[PortPriority, ...] = ()
    filename: str = field(default="<config>", compare=False)
    locations: Mapping[str, Location] = field(default_factory=dict, compare=False, repr=False)

    def port_settings(self, port: int) -> PortSettings:
        for p in self.ports:
            if p.port == port:
                return p
        raise KeyError(port)

    def hop_name(self, hop_id: int) -> str:
        for name, i in self.next_hop_names:
            if i == hop_id:
                return name
        raise KeyError(hop_id)

    def locate(self, path: str) -> Location:
        """Where `path` (or its nearest written parent) is in the file."""
        while True:
            if path in self.locations:
                return self.locations[path]
            if "." not in path:
                return self.locations.get("", Location(self.filename, 1, 1))
            path = path.rsplit(".", 1)[0]

    def error(self, path: str, message: str) -> ConfigError:
        return ConfigError(self.locate(path), path, message)


# ------------------------------------------------------------------ loading


def load_config(path: str | Path, overrides: Sequence[str] = ()) -> ControllerConfig:
    """Read, override (`key=value` strings, see `apply_override`) and validate a file."""
    filename = str(path)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise ConfigError(Location(filename, 1, 1), "", f"cannot read: {e.strerror}") from None
    return parse_config(text, filename, overrides)


def parse_config(text: str, filename: str, overrides: Sequence[str] = ()) -> ControllerConfig:
    root = _compose(text, filename)
    if root is None:
        raise ConfigError(Location(filename, 1, 1), "", "empty file: expected a mapping")
    for arg in overrides:
        root = apply_override(root, arg)
    return _Loader(filename).load(root)


def load_config_node(root: yaml.Node, filename: str) -> ControllerConfig:
    """Validate a configuration given as an already composed YAML node tree, e.g. one
    built by a tool from a file of its own (errors point at the nodes' marks)."""
    return _Loader(filename).load(root)


def _compose(text: str, name: str, col_offset: int = 0) -> yaml.Node | None:
    stream = io.StringIO(text)
    stream.name = name  # type: ignore[misc]  # PyYAML names its marks after the stream
    try:
        node = yaml.compose(stream, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line, col = (mark.line + 1, mark.column + 1 + col_offset) if mark else (1, 1)
        problem = e.problem or e.context or "invalid YAML"
        raise ConfigError(Location(name, line, col), "", f"invalid YAML: {problem}") from None
    except yaml.reader.ReaderError as e:
        # A character YAML does not allow: PyYAML's message spans two lines, and the
        # place is an offset into the text.
        before = text[: e.position]
        line = before.count("\n") + 1
        col = e.position - before.rfind("\n") + (col_offset if line == 1 else 0)
        code = ord(e.character) if isinstance(e.character, str) else int(e.character)
        char = f"#x{code:04x}"
        problem = f"unacceptable character {char}: {e.reason}"
        raise ConfigError(Location(name, line, col), "", f"invalid YAML: {problem}") from None
    except yaml.YAMLError as e:
        problem = " ".join(str(e).split())  # one line, whatever PyYAML wrote
        raise ConfigError(Location(name, 1, 1), "", f"invalid YAML: {problem}") from None
    if node is not None and col_offset:
        _shift_columns(node, col_offset)
    return node


def _shift_columns(node: yaml.Node, offset: int) -> None:
    for mark in (node.start_mark, node.end_mark):
        if mark is not None and mark.line == 0:
            mark.column += offset
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            _shift_columns(k, offset)
            _shift_columns(v, offset)
    elif isinstance(node, yaml.SequenceNode):
        for v in node.value:
            _shift_columns(v, offset)


def _loc(node: yaml.Node) -> Location:
    m = node.start_mark
    return Location(m.name, m.line + 1, m.column + 1)


# ------------------------------------------------------------------ overrides


def apply_override(root: yaml.Node, arg: str) -> yaml.Node:
    """Set `key=value` in the composed document before validation.

    `key` is a dotted field path (`ports.3.aqm`, `rbcc.min_rate`,
    `routes.10.0.9.0/24`); `value` is YAML (`redok-edge`, `0.9`,
    `{preset: red-lte, seed: 7}`); the value `~` removes the key. Errors point
    into the argument as `<command line>:1:col`.
    """
    key, sep, value = arg.partition("=")
    if not sep or not key.strip():
        raise ConfigError(Location(OVERRIDE_FILE, 1, 1), "", f"expected key=value, got {arg!r}")
    key = key.strip()
    value_node = _compose(value, OVERRIDE_FILE, col_offset=len(arg) - len(value))
    if value_node is None:
        value_node = yaml.ScalarNode("tag:yaml.org,2002:null", "")
        value_node.start_mark = value_node.end_mark = yaml.Mark(
            OVERRIDE_FILE, len(key) + 1, 0, len(key) + 1, None, None
        )
    delete = value_node.tag == "tag:yaml.org,2002:null"
    if not isinstance(root, yaml.MappingNode):
        return root  # the loader reports the wrong top-level type
    node: yaml.MappingNode = root
    done = ""
    rest = key
    while True:
        pairs = node.value
        matches = [
            i
            for i, (k, _) in enumerate(pairs)
            if isinstance(k, yaml.ScalarNode)
            and (rest == k.value or rest.startswith(k.value + "."))
        ]
        if matches:
            i = max(matches, key=lambda j: len(pairs[j][0].value))
            name = pairs[i][0].value
        else:
            i = -1
            name = rest if "/" in rest else rest.split(".", 1)[0]
        rest = rest[len(name) + 1 :]
        done = f"{done}.{name}" if done else name
        if not rest:
            if delete:
                if i >= 0:
                    del pairs[i]
            elif i >= 0:
                pairs[i] = (pairs[i][0], value_node)
            else:
                key_node = yaml.ScalarNode("tag:yaml.org,2002:str", name)
                key_node.start_mark = key_node.end_mark = value_node.start_mark
                pairs.append((key_node, value_node))
            return root
        if i < 0:
            child = yaml.MappingNode("tag:yaml.org,2002:map", [])
            child.start_mark = child.end_mark = value_node.start_mark
            key_node = yaml.ScalarNode("tag:yaml.org,2002:str", name)
            key_node.start_mark = key_node.end_mark = value_node.start_mark
            pairs.append((key_node, child))
            node = child
            continue
        child = pairs[i][1]
        if not isinstance(child, yaml.MappingNode):
            raise ConfigError(
                Location(OVERRIDE_FILE, 1, 1), done, f"is not a mapping, cannot set {key!r}"
            )
        node = child


# ------------------------------------------------------------------ validation


class _Loader:
    def __init__(self, filename: str) -> None:
        self.filename = filename
        self.locations: dict[str, Location] = {}

    # -- generic node readers ----------------------------------------------

    def err(self, node: yaml.Node, path: str, message: str) -> ConfigError:
        return ConfigError(_loc(node), path, message)

    def mapping(
        self, node: yaml.Node, path: str, what: str
    ) -> list[tuple[str, yaml.Node, yaml.Node]]:
        """(key, key node, value node) triples; duplicate and non-scalar keys are errors."""
        if not isinstance(node, yaml.MappingNode):
            raise self.err(node, path, f"expected {what}, got {_kind(node)}")
        seen: dict[str, yaml.Node] = {}
        out = []
        for k, v in node.value:
            if not isinstance(k, yaml.ScalarNode):
                raise self.err(k, path, f"expected a plain key, got {_kind(k)}")
            if k.value in seen:
                first = _loc(seen[k.value])
                raise self.err(
                    k, _join(path, k.value), f"duplicate key (first given at line {first.line})"
                )
            seen[k.value] = k
            # a scalar is found at its value, a block (port, next hop...) at its key
            self.locations[_join(path, k.value)] = _loc(v if isinstance(v, yaml.ScalarNode) else k)
            out.append((k.value, k, v))
        return out

    def fields(
        self, node: yaml.Node, path: str, what: str, allowed: Sequence[str], required: Iterable[str]
    ) -> dict[str, yaml.Node]:
        out: dict[str, yaml.Node] = {}
        for k, key_node, v in self.mapping(node, path, what):
            if k not in allowed:
                raise self.err(
                    key_node, _join(path, k), "unknown key; expected one of: " + ", ".join(allowed)
                )
            out[k] = v
        for k in required:
            if k not in out:
                raise self.err(node, path, f"missing required key {k!r}")
        return out

    def scalar(self, node: yaml.Node, path: str, expected: str) -> str:
        if not isinstance(node, yaml.ScalarNode) or node.tag == "tag:yaml.org,2002:null":
            raise self.err(node, path, f"expected {expected}, got {_kind(node)}")
        return node.value

    def value(self, node: yaml.Node, path: str, expected: str, parse: Callable[[str], T]) -> T:
        text = self.scalar(node, path, expected)
        try:
            return parse(text)
        except ValueError as e:
            raise self.err(node, path, str(e)) from None

    def integer(
        self, node: yaml.Node, path: str, lo: int, hi: int, what: str = "an integer"
    ) -> int:
        expected = f"{what} in {lo}..{hi}"
        v = self.value(node, path, expected, lambda t: units.parse_int(t, expected))
        if not lo <= v <= hi:
            raise self.err(node, path, f"expected {expected}, got {v}")
        return v

    def decimal(self, node: yaml.Node, path: str, expected: str) -> Decimal:
        return self.value(node, path, expected, lambda t: units.parse_decimal(t, expected))

    # -- the document --------------------------------------------------------

    def load(self, root: yaml.Node) -> ControllerConfig:
        self.locations[""] = _loc(root)
        top = self.fields(
            root, "", "a mapping of router settings", _TOP_KEYS, ("router_id", "ports")
        )
        router_id = self.value(
            top["router_id"],
            "router_id",
            "a router id",
            _parse_router_id,
        )
        device_id = 0
        if "device_id" in top:
            device_id = self.integer(top["device_id"], "device_id", 0, 2**64 - 1)
        address = DEFAULT_ADDRESS
        if "address" in top:
            address = self.value(top["address"], "address", "HOST:PORT", _parse_address)
        min_rate, idle_timeout_us, abt_slots, utilisation = self.rbcc(top.get("rbcc"))
        decay_len = DEFAULT_DECAY_LEN
        if "decay_len" in top:
            decay_len = self.integer(top["decay_len"], "decay_len", 1, 2**32 - 1)

        ports: list[PortConfig] = []
        settings: list[PortSettings] = []
        priorities: list[PortPriority] = []
        port_pairs = self.mapping(top["ports"], "ports", "a mapping of port number to port")
        if not port_pairs:
            raise self.err(top["ports"], "ports", "expected at least one port")
        for key, key_node, node in port_pairs:
            path = f"ports.{key}"
            number = self.value(
                key_node,
                path,
                f"a port number 0..{MAX_PORT_NUMBER}",
                lambda t: _parse_port_number(t),
            )
            if any(p.port == number for p in ports):
                raise self.err(key_node, path, f"port {number} is given twice")
            port, setting = self.port(number, node, path, utilisation)
            ports.append(port)
            settings.append(setting)
            priority = self.priority(number, node, path)
            if priority is not None:
                priorities.append(priority)
        numbers = [p.port for p in ports]

        hops, hop_names = self.next_hops(top.get("next_hops"), numbers)
        routes = self.routes(top.get("routes"), dict(hop_names))

        try:
            router = RouterConfig(
                router_id=router_id,
                ports=tuple(ports),
                next_hops=tuple(hops),
                routes=tuple(routes),
                abt_slots=abt_slots,
                idle_timeout_us=idle_timeout_us,
                min_rate=min_rate,
                decay_len=decay_len,
            )
        except ValueError as e:  # the checks above are meant to make this unreachable
            raise self.err(root, "", str(e)) from None
        return ControllerConfig(
            router=router,
            ports=tuple(settings),
            next_hop_names=tuple(hop_names),
            device_id=device_id,
            address=address,
            priority=tuple(priorities),
            filename=self.filename,
            locations=dict(self.locations),
        )

    def utilisation(self, node: yaml.Node, path: str) -> Decimal:
        value = self.decimal(node, path, "a fraction in (0, 1]")
        if not Decimal(0) < value <= Decimal(1):
            raise self.err(node, path, f"expected a fraction in (0, 1], got {value}")
        return value

    def rbcc(self, node: yaml.Node | None) -> tuple[int, int, int, Decimal]:
        min_rate, idle_us, slots = DEFAULT_MIN_RATE, DEFAULT_IDLE_TIMEOUT_US, DEFAULT_ABT_SLOTS
        utilisation = DEFAULT_UTILISATION
        if node is None:
            return min_rate, idle_us, slots, utilisation
        f = self.fields(node, "rbcc", "a mapping of RBCC settings", _RBCC_KEYS, ())
        if "utilisation" in f:
            utilisation = self.utilisation(f["utilisation"], "rbcc.utilisation")
        if "min_rate" in f:
            min_rate = self.integer(f["min_rate"], "rbcc.min_rate", 0, 2**32 - 1, "a rate in B/s")
        if "idle_timeout" in f:
            idle_us = self.value(
                f["idle_timeout"], "rbcc.idle_timeout", units.DELAY_EXPECTED, units.parse_delay_us
            )
            if idle_us >= 1 << 48:
                raise self.err(f["idle_timeout"], "rbcc.idle_timeout", "expected below 2^48 us")
        if "abt_slots" in f:
            slots = self.integer(f["abt_slots"], "rbcc.abt_slots", 1, 2**31)
            if slots & (slots - 1):
                raise self.err(
                    f["abt_slots"],
                    "rbcc.abt_slots",
                    f"expected a power of two (the program's ABT_SLOTS), got {slots}",
                )
        return min_rate, idle_us, slots, utilisation

    def port(
        self, number: int, node: yaml.Node, path: str, utilisation: Decimal
    ) -> tuple[PortConfig, PortSettings]:
        f = self.fields(node, path, "a mapping of port settings", _PORT_KEYS, ("mac", "rate"))
        mac = self.value(f["mac"], f"{path}.mac", "a MAC address", units.parse_mac)
        rate = self.value(f["rate"], f"{path}.rate", units.RATE_EXPECTED, units.parse_rate)
        delay_us = None
        if "delay" in f:
            delay_us = self.value(
                f["delay"], f"{path}.delay", units.DELAY_EXPECTED, units.parse_delay_us
            )
        if "utilisation" in f:
            utilisation = self.utilisation(f["utilisation"], f"{path}.utilisation")
        aqm, aqm_name, preset_limit = self.aqm(f.get("aqm"), f"{path}.aqm")

        if "queue_limit" in f:
            queue_limit = self.queue_limit(f["queue_limit"], f"{path}.queue_limit", rate, delay_us)
        elif preset_limit is not None:
            queue_limit = preset_limit
        else:
            raise self.err(node, path, "missing required key 'queue_limit' (packets, or 2xBDP)")

        if "rbcc_capacity" in f:
            capacity = self.integer(
                f["rbcc_capacity"], f"{path}.rbcc_capacity", 0, 2**32 - 1, "a rate in B/s"
            )
        else:
            try:
                capacity = rbcc_capacity(rate, utilisation)
            except ValueError as e:
                raise self.err(f["rate"], f"{path}.rate", str(e)) from None
        port = PortConfig(number, mac, rate, queue_limit, capacity, aqm)
        explicit = "rbcc_capacity" in f
        return port, PortSettings(number, rate, utilisation, aqm_name, delay_us, explicit)

    def priority(self, number: int, node: yaml.Node, path: str) -> PortPriority | None:
        """`priority_queues` and `priority` of a port (None: neither is given)."""
        f = self.fields(node, path, "a mapping of port settings", _PORT_KEYS, ())
        if "priority_queues" not in f:
            if "priority" in f:
                raise self.err(
                    f["priority"],
                    f"{path}.priority",
                    f"needs priority_queues (2..{MAX_PRIORITY_QUEUES}) beside it to put packets in",
                )
            return None
        queues = self.integer(
            f["priority_queues"],
            f"{path}.priority_queues",
            1,
            MAX_PRIORITY_QUEUES,
            "a number of strict-priority queues",
        )
        if "priority" not in f:
            return PortPriority(number, queues)
        rules = self.fields(
            f["priority"],
            f"{path}.priority",
            "a mapping of classification rules",
            _PRIORITY_KEYS,
            (),
        )
        if queues < 2:
            raise self.err(
                f["priority"], f"{path}.priority", "needs priority_queues of 2 or more, got 1"
            )
        out: dict[str, list[tuple[int, int]]] = {}
        for kind, rule_node in rules.items():
            rule_path = f"{path}.priority.{kind}"
            pairs: list[tuple[int, int]] = []
            seen: dict[int, str] = {}
            for text, key_node, value in self.mapping(
                rule_node, rule_path, f"a mapping of {_RULE_WHAT[kind]} to priority"
            ):
                level = self.integer(
                    value,
                    f"{rule_path}.{text}",
                    1,
                    queues - 1,
                    f"a priority (priority_queues is {queues}; 0 is every other packet's)",
                )
                for v in self.rule_values(kind, text, key_node, f"{rule_path}.{text}"):
                    if v in seen:
                        raise self.err(
                            key_node,
                            f"{rule_path}.{text}",
                            f"{v} is already given by {rule_path}.{seen[v]}",
                        )
                    seen[v] = text
                    pairs.append((v, level))
            out[kind] = pairs
        return PortPriority(
            number,
            queues,
            tuple(out.get("protocols", ())),
            tuple(out.get("ports", ())),
            tuple(out.get("dscp", ())),
        )

    def rule_values(self, kind: str, text: str, node: yaml.Node, path: str) -> list[int]:
        """The field values a classification key stands for: a protocol (name or
        number), a DSCP, a TCP/UDP port or a range of them `LOW-HIGH`."""
        if kind == "protocols":
            name = text.strip().lower()
            if name in PROTOCOL_NUMBERS:
                return [PROTOCOL_NUMBERS[name]]
            expected = "an IPv4 protocol (" + ", ".join(PROTOCOL_NUMBERS) + ") or a number"
            return [self.integer(node, path, 0, 255, expected)]
        if kind == "dscp":
            return [self.integer(node, path, 0, 63, "a DSCP")]
        m = _PORT_RANGE.match(text)
        if m is None:
            return [self.integer(node, path, 1, 65535, "a TCP/UDP port (or LOW-HIGH)")]
        low, high = int(m[1]), int(m[2])
        if not 1 <= low <= high <= 65535:
            raise self.err(node, path, f"expected a port range LOW-HIGH in 1..65535, got {text!r}")
        return list(range(low, high + 1))

    def queue_limit(self, node: yaml.Node, path: str, rate: int, delay_us: int | None) -> int:
        expected = "a queue limit in packets 0..65535, or NxBDP like 2xBDP"
        text = self.scalar(node, path, expected)
        m = _BDP.match(text)
        if m is None:
            return self.integer(node, path, 0, 65535, "a queue limit in packets")
        port_path = path.rsplit(".", 1)[0]
        if delay_us is None or rate == 0:
            raise self.err(
                node, path, f"{text.strip()} needs the port's rate and one-way delay (delay: 50ms)"
            )
        if delay_us % 1000:
            raise self.err(
                node, path, f"{text.strip()} needs {port_path}.delay in whole milliseconds"
            )
        bdp = Link(port_path, rate, delay_us // 1000).bdp_packets
        limit = int(m.group(1) or 1) * bdp
        if limit > 65535:
            raise self.err(node, path, f"expected at most 65535 packets, {text.strip()} is {limit}")
        return limit

    def aqm(self, node: yaml.Node | None, path: str) -> tuple[AqmConfig, str, int | None]:
        """(AqmConfig, name, the preset's queue limit or None)."""
        if node is None:
            return AqmConfig("fifo"), "fifo", None
        if isinstance(node, yaml.ScalarNode) and node.tag != "tag:yaml.org,2002:null":
            name = node.value.strip()
            if name == "fifo":
                return AqmConfig("fifo"), "fifo", None
            if name in PRESETS:
                return PRESETS[name].aqm(), name, PRESETS[name].queue_limit
            raise self.err(node, path, f"expected {_AQM_EXPECTED}, got {name!r}")
        if not isinstance(node, yaml.MappingNode):
            raise self.err(node, path, f"expected {_AQM_EXPECTED}, got {_kind(node)}")
        f = self.fields(node, path, "RED parameters", _AQM_KEYS, ())
        seed = 1
        if "seed" in f:
            seed = self.integer(f["seed"], f"{path}.seed", 0, 2**32 - 1)
        if "preset" in f:
            for k in ("w_q", "max_p", "th_min", "th_max"):
                if k in f:
                    raise self.err(
                        f[k], f"{path}.{k}", "expected either a preset or RED parameters, not both"
                    )
            name = self.scalar(f["preset"], f"{path}.preset", "a preset name").strip()
            if name not in PRESETS:
                raise self.err(
                    f["preset"],
                    f"{path}.preset",
                    "expected one of " + ", ".join(PRESETS) + f", got {name!r}",
                )
            return PRESETS[name].aqm(seed), name, PRESETS[name].queue_limit
        for k in ("w_q", "max_p", "th_min", "th_max"):
            if k not in f:
                raise self.err(node, path, f"missing required key {k!r} (or give a preset)")
        w_q = self.decimal(f["w_q"], f"{path}.w_q", "a fraction in (0, 1)")
        if not Decimal(0) < w_q < Decimal(1):
            raise self.err(f["w_q"], f"{path}.w_q", f"expected a fraction in (0, 1), got {w_q}")
        probe = AqmConfig("red", w_q, Decimal("0.1"), 0, 1, seed)
        if red.install(probe, 0).wq16 == 0:
            raise self.err(
                f["w_q"], f"{path}.w_q", f"expected at least 1/131072 (Q16 rounds {w_q} to 0)"
            )
        max_p = self.decimal(f["max_p"], f"{path}.max_p", "a probability in (0, 1]")
        if not Decimal(0) < max_p <= Decimal(1):
            raise self.err(
                f["max_p"], f"{path}.max_p", f"expected a probability in (0, 1], got {max_p}"
            )
        th_min = self.integer(f["th_min"], f"{path}.th_min", 0, 32766, "packets")
        th_max = self.integer(f["th_max"], f"{path}.th_max", 1, 32767, "packets")
        if th_max <= th_min:
            raise self.err(
                f["th_max"], f"{path}.th_max", f"expected more than th_min ({th_min}), got {th_max}"
            )
        return AqmConfig("red", w_q, max_p, th_min, th_max, seed), "red", None

    def next_hops(
        self, node: yaml.Node | None, ports: list[int]
    ) -> tuple[list[NextHop], list[tuple[str, int]]]:
        if node is None:
            return [], []
        hops: list[NextHop] = []
        names: list[tuple[str, int]] = []
        for name, _, hop_node in self.mapping(node, "next_hops", "a mapping of name to next hop"):
            path = f"next_hops.{name}"
            f = self.fields(hop_node, path, "a next hop {port, mac}", _HOP_KEYS, _HOP_KEYS)
            port = self.integer(f["port"], f"{path}.port", 0, MAX_PORT_NUMBER, "a port number")
            if port not in ports:
                raise self.err(
                    f["port"],
                    f"{path}.port",
                    "expected a configured port (one of "
                    + ", ".join(map(str, sorted(ports)))
                    + f"), got {port}",
                )
            mac = self.value(f["mac"], f"{path}.mac", "a MAC address", units.parse_mac)
            hop_id = len(hops) + 1
            hops.append(NextHop(hop_id, port, mac))
            names.append((name, hop_id))
        return hops, names

    def routes(self, node: yaml.Node | None, hops: dict[str, int]) -> list[Route]:
        if node is None:
            return []
        routes: list[Route] = []
        seen: dict[tuple[int, int], str] = {}
        for text, key_node, value in self.mapping(
            node, "routes", "a mapping of prefix to next hop name"
        ):
            path = f"routes.{text}"
            prefix, length = self.value(key_node, path, "an IPv4 prefix", units.parse_prefix)
            if (prefix, length) in seen:
                raise self.err(
                    key_node,
                    path,
                    f"duplicate route: the same prefix as routes.{seen[prefix, length]}",
                )
            seen[prefix, length] = text
            name = self.scalar(value, path, "a next hop name")
            if name not in hops:
                known = ", ".join(hops) if hops else "none defined"
                raise self.err(value, path, f"expected a next hop name ({known}), got {name!r}")
            routes.append(Route(prefix, length, hops[name]))
        return routes


_RULE_WHAT = {
    "protocols": "IPv4 protocol (icmp, tcp, udp, rbcc or a number)",
    "ports": "TCP/UDP port (source or destination; LOW-HIGH for a range)",
    "dscp": "DSCP (0..63)",
}


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _kind(node: yaml.Node) -> str:
    if isinstance(node, yaml.MappingNode):
        return "a mapping"
    if isinstance(node, yaml.SequenceNode):
        return "a list"
    if node.tag == "tag:yaml.org,2002:null":
        return "nothing"
    return repr(node.value)


def _parse_router_id(text: str) -> int:
    expected = "a router id (a 32-bit number or a dotted quad like 10.0.0.1)"
    if "." in text:
        try:
            return units.parse_ipv4(text)
        except ValueError:
            raise ValueError(f"expected {expected}, got {text!r}") from None
    value = units.parse_int(text, expected)
    if not 0 <= value < 1 << 32:
        raise ValueError(f"expected {expected}, got {value}")
    return value


def _parse_port_number(text: str) -> int:
    value = units.parse_int(text, f"a port number 0..{MAX_PORT_NUMBER}")
    if not 0 <= value <= MAX_PORT_NUMBER:
        raise ValueError(f"expected a port number 0..{MAX_PORT_NUMBER}, got {value}")
    return value


def _parse_address(text: str) -> str:
    host, sep, port = text.strip().rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"expected HOST:PORT like 127.0.0.1:9559, got {text!r}")
    return text.strip()
