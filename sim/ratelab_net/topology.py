"""The topology file of `ratelab-net` (docs/NET.md): routers, hosts, links with
per-direction rate, delay, queue limit and AQM, and the flows to run.

Read with `yaml.compose` so that every problem is reported as
`file:line:col: error: path: what was expected` (ratelab_ctl's ConfigError),
before anything is built. The router settings a link carries (rate, delay,
queue_limit, utilisation, aqm, priority_queues, priority) are kept as the
file's own YAML nodes and validated later by the controller's loader
(routers.py), so their errors point into this file too.
"""

from __future__ import annotations

import copy
import io
import ipaddress
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from ratelab_ctl import units
from ratelab_ctl.configfile import ConfigError, Location

TRANSPORTS = ("tcp", "udp", "rbcc", "ping")
PATTERNS = ("bulk", "onoff", "stream", "poisson")  # poisson: udp only
_TOP_KEYS = ("duration", "poll_interval", "backend", "routers", "hosts", "links", "flows")
BACKENDS = ("mininet", "sim")  # where `ratelab-net run` runs a file (docs/NET.md "Simulation")
_ROUTER_KEYS = ("router_id", "rbcc")
_DIRECTION_KEYS = (
    *("rate", "trace", "delay", "jitter", "queue_limit", "utilisation", "aqm"),
    *("priority_queues", "priority"),  # a router port's strict-priority queues
)
_LINK_KEYS = ("ends", *_DIRECTION_KEYS, "forward", "reverse")
_FLOW_KEYS = (
    "name",
    "from",
    "to",
    "transport",
    "cc",
    "stack",
    "iw",
    "initial_rto",
    "min_rto",
    "sack",
    "delayed_ack",
    "prr",
    "rto_formula",
    "hystart",
    "send_buffer",
    "pattern",
    "rate",
    "initial_rate",
    "adopt_synack_rate",
    "on",
    "off",
    "size",
    "bytes",
    "interval",
    "start",
    "stop",
)
OVERRIDE = "<command line>"
TCP_CC_FILE = "/proc/sys/net/ipv4/tcp_available_congestion_control"
STACKS = ("kernel", "ratelab")
RATELAB_CCS = ("reno", "newreno", "cubic", "cubic-linux", "vegas")  # host_stacks/stack/src/cc
# Keys only a ratelab-stack TCP flow has (the kernel's are sysctls, not per flow).
RATELAB_KEYS = (
    "iw",
    "initial_rto",
    "min_rto",
    "sack",
    "delayed_ack",
    "prr",
    "rto_formula",
    "hystart",
    "send_buffer",
)
# Keys only an rbcc flow has: its sender's rate before the first ACK
# (host_stacks/README.md "Protocol decisions").
RBCC_KEYS = ("initial_rate", "adopt_synack_rate")
# How the stack computes its RTO: RFC 6298's max(min_rto, srtt + 4 rttvar), or
# Linux's srtt + max(G, 4 rttvar, min_rto) (host_stacks/README.md).
RTO_FORMULAS = ("rfc6298", "linux")
MAX_IW = 1000  # segments; the stack's own bound (tcp::Config::validate)
MIN_RTO_S, MAX_RTO_S = 0.001, 60.0  # initial and minimum RTO, as the stack bounds them
HOST_NET = ipaddress.IPv4Network("10.0.0.0/16")  # host i: 10.0.i.1/24, its gateway 10.0.i.254
MAX_HOSTS = 250
MAX_ROUTER_PORTS = 63  # router.p4's MAX_PORTS is 64: ports 1..63


def _loc(node: yaml.Node) -> Location:
    m = node.start_mark
    return Location(m.name, m.line + 1, m.column + 1)


def _err(node: yaml.Node, path: str, message: str) -> ConfigError:
    return ConfigError(_loc(node), path, message)


@dataclass(frozen=True)
class TraceFile:
    """A direction's mahimahi trace (docs/NET.md "Links from traces"), checked."""

    path: str  # absolute
    mean_rate_bps: int


@dataclass
class Direction:
    """Settings of one direction of a link, as the file's nodes (None: not given).
    With a `trace`, `nodes["rate"]` is the trace's mean rate (for the router's
    configuration: RBCC capacity, AQM presets), made at the trace's place."""

    nodes: dict[str, yaml.Node] = field(default_factory=dict)
    trace: TraceFile | None = None

    def text(self, key: str) -> str | None:
        node = self.nodes.get(key)
        return None if node is None else str(node.value)


@dataclass
class Link:
    a: str
    b: str
    forward: Direction  # a -> b
    reverse: Direction  # b -> a
    node: yaml.Node


@dataclass(frozen=True)
class TcpOptions:
    """A TCP flow's stack and, for the ratelab stack, its knobs (None: the stack's
    default, see host_stacks/README.md)."""

    stack: str = "kernel"
    iw: int | None = None
    initial_rto_s: float | None = None
    min_rto_s: float | None = None
    sack: bool | None = None
    delayed_ack: bool | None = None
    prr: bool | None = None
    rto_formula: str | None = None
    hystart: bool | None = None  # RFC 9406 HyStart++ in slow start
    # "auto" (Linux-like autotuning up to 4 MiB) or a fixed size in bytes
    send_buffer: str | int | None = None


@dataclass(frozen=True)
class RbccOptions:
    """An rbcc flow's sender settings before its first ACK (None: the flow's
    `rate`); with adopt_synack_rate the SYN-ACK is that first ACK."""

    initial_rate_bps: int | None = None
    adopt_synack_rate: bool = False


@dataclass
class Flow:
    name: str
    src: str
    dst: str
    transport: str
    cc: str | None
    pattern: str
    rate_bps: int | None
    on_s: float | None
    off_s: float | None
    size: int
    interval_s: float
    start_s: float
    stop_s: float
    node: yaml.Node
    tcp: TcpOptions | None = None  # tcp flows only
    transfer_bytes: int | None = None  # tcp: write this many bytes, then close
    rbcc: RbccOptions | None = None  # rbcc flows only


@dataclass
class Topology:
    filename: str
    duration_s: float
    poll_interval_s: float
    routers: dict[str, dict[str, yaml.Node]]  # name -> its settings' nodes
    hosts: list[str]
    links: list[Link]
    flows: list[Flow]
    node: yaml.Node
    host_nodes: dict[str, yaml.Node] = field(default_factory=dict)
    backend: str | None = None  # the file's `backend` (None: not given)

    def host_link(self, host: str) -> tuple[Link, str]:
        """The host's one link and the router at its other end."""
        for link in self.links:
            if host in (link.a, link.b):
                return link, link.b if link.a == host else link.a
        raise KeyError(host)

    def host_address(self, host: str) -> tuple[str, str]:
        """(address, gateway) of a host."""
        i = self.hosts.index(host) + 1
        return f"10.0.{i}.1", f"10.0.{i}.254"

    def stack_address(self, host: str) -> str:
        """The address ratelab-stack TCP flows from a host send from: in the host's
        /24 (so the routers route replies to its port) but not the kernel's, so the
        kernel never answers their segments (no RST); the flows share it, each on
        its own port."""
        return f"10.0.{self.hosts.index(host) + 1}.2"


class _Reader:
    def __init__(self, filename: str) -> None:
        self.filename = filename

    def mapping(self, node: yaml.Node, path: str, what: str) -> list[tuple[str, yaml.Node]]:
        if not isinstance(node, yaml.MappingNode):
            raise _err(node, path, f"expected {what}")
        out: list[tuple[str, yaml.Node]] = []
        seen: set[str] = set()
        for k, v in node.value:
            if not isinstance(k, yaml.ScalarNode):
                raise _err(k, path, "expected a plain key")
            if k.value in seen:
                raise _err(k, f"{path}.{k.value}".lstrip("."), "duplicate key")
            seen.add(k.value)
            out.append((k.value, v))
        return out

    def fields(
        self, node: yaml.Node, path: str, what: str, allowed: tuple[str, ...]
    ) -> dict[str, yaml.Node]:
        out = {}
        for key, value in self.mapping(node, path, what):
            if key not in allowed:
                raise _err(
                    value,
                    f"{path}.{key}".lstrip("."),
                    "unknown key; expected one of: " + ", ".join(allowed),
                )
            out[key] = value
        return out

    def scalar(self, node: yaml.Node, path: str, what: str) -> str:
        if not isinstance(node, yaml.ScalarNode):
            raise _err(node, path, f"expected {what}")
        return str(node.value)

    def seconds(self, node: yaml.Node, path: str, allow_zero: bool = True) -> float:
        text = self.scalar(node, path, "a duration like 10s or 200ms")
        try:
            value = units.parse_delay_us(text) / 1e6
        except ValueError:
            raise _err(node, path, f"expected a duration like 10s or 200ms, got {text!r}") from None
        if value < 0 or (value == 0 and not allow_zero):
            raise _err(node, path, "expected a duration above 0")
        return value

    def boolean(self, node: yaml.Node, path: str) -> bool:
        text = self.scalar(node, path, "true or false")
        value = yaml.SafeLoader.bool_values.get(text.lower())
        if value is None:
            raise _err(node, path, f"expected true or false, got {text!r}")
        return value

    def rate(self, node: yaml.Node, path: str) -> int:
        text = self.scalar(node, path, "a rate like 10mbit")
        try:
            value = units.parse_rate(text)
        except ValueError as e:
            raise _err(node, path, str(e)) from None
        if value <= 0:
            raise _err(node, path, "expected a rate above 0")
        return value

    def name(self, node: yaml.Node, path: str) -> str:
        text = self.scalar(node, path, "a name")
        if not text.replace("_", "").replace("-", "").isalnum() or len(text) > 10:
            raise _err(node, path, "expected a name of letters, digits, - and _ (10 at most)")
        return text


def _direction(reader: _Reader, nodes: dict[str, yaml.Node], path: str) -> Direction:
    return Direction({k: v for k, v in nodes.items() if k in _DIRECTION_KEYS})


def load_topology(path: str | Path, overrides: list[str] | None = None) -> Topology:
    filename = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise ConfigError(Location(filename, 1, 1), "", f"cannot read: {e.strerror}") from None
    return parse_topology(text, filename, overrides)


def _compose(text: str, filename: str) -> yaml.Node | None:
    stream = io.StringIO(text)
    stream.name = filename  # type: ignore[misc]  # PyYAML names its marks after the stream
    try:
        return yaml.compose(stream, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        where = Location(filename, mark.line + 1, mark.column + 1) if mark else None
        raise ConfigError(
            where or Location(filename, 1, 1), "", f"invalid YAML: {e.problem}"
        ) from None


_PATH = re.compile(r"^[A-Za-z_][\w-]*(\[\d+\])*(\.[A-Za-z_][\w-]*(\[\d+\])*)*$")
_SEGMENT = re.compile(r"([A-Za-z_][\w-]*)|\[(\d+)\]")


def apply_override(root: yaml.Node, assignment: str) -> None:
    """`links[1].queue_limit=200`: replace (or add) the value at a path of keys and
    list indexes; the value is YAML. Errors name the assignment."""
    key, sep, value = assignment.partition("=")
    new = _compose(value, OVERRIDE) if sep else None
    if new is None:
        raise ConfigError(Location(OVERRIDE, 1, 1), key.strip(), "expected PATH=VALUE")
    set_node(root, key.strip(), new, Location(OVERRIDE, 1, 1))


def set_node(root: yaml.Node, key: str, new: yaml.Node, where: Location) -> None:
    """Put `new` at `key` (keys and list indexes: `links[1].aqm`) in the node tree."""
    if not _PATH.match(key):
        raise ConfigError(where, key, "expected a path like links[1].queue_limit")
    parts = _SEGMENT.findall(key)
    node = root
    for n, (name, index) in enumerate(parts):
        last = n == len(parts) - 1
        if index:
            if not isinstance(node, yaml.SequenceNode) or int(index) >= len(node.value):
                raise ConfigError(where, key, f"no list item [{index}] there")
            if last:
                node.value[int(index)] = new
            node = node.value[int(index)]
            continue
        if not isinstance(node, yaml.MappingNode):
            raise ConfigError(where, key, f"{name!r}: not inside a mapping")
        for i, (k, v) in enumerate(node.value):
            if k.value == name:
                if last:
                    node.value[i] = (k, new)
                node = v
                break
        else:
            if not last:
                raise ConfigError(where, key, f"no key {name!r} there")
            k = yaml.ScalarNode("tag:yaml.org,2002:str", name, new.start_mark, new.end_mark)
            node.value.append((k, new))


def _pop_variants(root: yaml.Node) -> list[tuple[str, list[tuple[str, yaml.Node]]]]:
    """Remove and return the file's `variants:` (name -> {path: value})."""
    if not isinstance(root, yaml.MappingNode):
        return []
    for i, (k, v) in enumerate(root.value):
        if isinstance(k, yaml.ScalarNode) and k.value == "variants":
            del root.value[i]
            if not isinstance(v, yaml.MappingNode) or not v.value:
                raise _err(v, "variants", "expected a mapping of variant names to settings")
            out = []
            for name_node, settings in v.value:
                name = str(name_node.value)
                if not isinstance(settings, yaml.MappingNode):
                    raise _err(settings, f"variants.{name}", "expected {path: value, ...}")
                out.append((name, [(str(pk.value), pv) for pk, pv in settings.value]))
            return out
    return []


def load_variants(
    path: str | Path, overrides: list[str] | None = None, only: str | None = None
) -> list[tuple[str | None, Topology]]:
    """The file's topology once per variant (or once, when it has none), with
    `overrides` applied after each variant's own settings."""
    filename = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise ConfigError(Location(filename, 1, 1), "", f"cannot read: {e.strerror}") from None
    root = _compose(text, filename)
    if root is None:
        raise ConfigError(Location(filename, 1, 1), "", "empty file: expected a mapping")
    variants = _pop_variants(root)
    if only is not None:
        chosen = [v for v in variants if v[0] == only]
        if not chosen:
            names = ", ".join(n for n, _ in variants) or "none"
            raise ConfigError(
                Location(filename, 1, 1), "variants", f"no variant {only!r} (the file has: {names})"
            )
        variants = chosen
    out: list[tuple[str | None, Topology]] = []
    for name, settings in variants or [(None, [])]:
        tree = copy.deepcopy(root)
        for key, value in settings:
            set_node(tree, key, value, _loc(value))
        for assignment in overrides or []:
            apply_override(tree, assignment)
        out.append((name, _read(tree, filename)))
    return out


def parse_topology(text: str, filename: str, overrides: list[str] | None = None) -> Topology:
    root = _compose(text, filename)
    if root is None:
        raise ConfigError(Location(filename, 1, 1), "", "empty file: expected a mapping")
    if _pop_variants(root):
        raise _err(root, "variants", "this file has variants: load it with load_variants")
    for assignment in overrides or []:
        apply_override(root, assignment)
    return _read(root, filename)


def _read(root: yaml.Node, filename: str) -> Topology:
    r = _Reader(filename)
    top = r.fields(root, "", "a mapping (routers, hosts, links, flows)", _TOP_KEYS)
    for key in ("routers", "hosts", "links", "flows"):
        if key not in top:
            raise _err(root, key, "missing")
    duration = r.seconds(top["duration"], "duration", False) if "duration" in top else 10.0
    poll = (
        r.seconds(top["poll_interval"], "poll_interval", False) if "poll_interval" in top else 0.1
    )

    routers: dict[str, dict[str, yaml.Node]] = {}
    for name, node in r.mapping(top["routers"], "routers", "a mapping of router names"):
        r.name(_key_node(top["routers"], name), f"routers.{name}")
        settings = (
            {} if _is_null(node) else r.fields(node, f"routers.{name}", "a mapping", _ROUTER_KEYS)
        )
        routers[name] = settings
    if not routers:
        raise _err(top["routers"], "routers", "expected at least one router")

    hosts: list[str] = []
    host_nodes: dict[str, yaml.Node] = {}
    if isinstance(top["hosts"], yaml.SequenceNode):
        for i, item in enumerate(top["hosts"].value):
            name = r.name(item, f"hosts[{i}]")
            if name in hosts or name in routers:
                raise _err(item, f"hosts[{i}]", f"{name!r} is already a router or host")
            hosts.append(name)
            host_nodes[name] = item
    else:
        raise _err(top["hosts"], "hosts", "expected a list of host names")
    if len(hosts) > MAX_HOSTS:
        raise _err(top["hosts"], "hosts", f"at most {MAX_HOSTS} hosts")

    links: list[Link] = []
    if not isinstance(top["links"], yaml.SequenceNode):
        raise _err(top["links"], "links", "expected a list of links")
    for i, item in enumerate(top["links"].value):
        path = f"links[{i}]"
        f = r.fields(item, path, "a link mapping (ends, rate, delay, ...)", _LINK_KEYS)
        if "ends" not in f:
            raise _err(item, f"{path}.ends", "missing: the two nodes it joins, [a, b]")
        ends = f["ends"]
        if not isinstance(ends, yaml.SequenceNode) or len(ends.value) != 2:
            raise _err(ends, f"{path}.ends", "expected two node names, [a, b]")
        a, b = (r.scalar(n, f"{path}.ends", "a node name") for n in ends.value)
        for end, node in zip((a, b), ends.value, strict=True):
            if end not in routers and end not in hosts:
                raise _err(node, f"{path}.ends", f"{end!r} is neither a router nor a host")
        if a == b:
            raise _err(ends, f"{path}.ends", "a link joins two different nodes")
        if a in hosts and b in hosts:
            raise _err(ends, f"{path}.ends", "hosts connect to routers, not to each other")
        both = _direction(r, f, path)
        forward, reverse = Direction(dict(both.nodes)), Direction(dict(both.nodes))
        for key, target in (("forward", forward), ("reverse", reverse)):
            if key in f:
                extra = r.fields(f[key], f"{path}.{key}", "a mapping", _DIRECTION_KEYS)
                # A direction's own rate or trace replaces the link's other one.
                for mine, other in (("rate", "trace"), ("trace", "rate")):
                    if mine in extra and other not in extra:
                        target.nodes.pop(other, None)
                target.nodes.update(extra)
        for x, y, direction in ((a, b, forward), (b, a, reverse)):
            _read_trace(direction, f"{path} ({x} -> {y})", filename)
            _check_jitter(direction, f"{path} ({x} -> {y})")
        links.append(Link(a, b, forward, reverse, item))
    for host in hosts:
        mine = [lk for lk in links if host in (lk.a, lk.b)]
        if len(mine) != 1:
            raise _err(
                host_nodes[host], "hosts", f"host {host!r} needs exactly one link, has {len(mine)}"
            )
        _check_host_direction(host, mine[0], links.index(mine[0]))
    for router in routers:
        ports = [lk for lk in links if router in (lk.a, lk.b)]
        if len(ports) > MAX_ROUTER_PORTS:
            raise _err(top["routers"], f"routers.{router}", f"at most {MAX_ROUTER_PORTS} links")

    flows: list[Flow] = []
    if not isinstance(top["flows"], yaml.SequenceNode):
        raise _err(top["flows"], "flows", "expected a list of flows")
    for i, item in enumerate(top["flows"].value):
        flows.append(_flow(r, item, f"flows[{i}]", hosts, duration, {f.name for f in flows}))

    backend = None
    if "backend" in top:
        backend = r.scalar(top["backend"], "backend", "mininet or sim")
        if backend not in BACKENDS:
            raise _err(top["backend"], "backend", f"expected mininet or sim, got {backend!r}")
    return Topology(
        filename, duration, poll, routers, hosts, links, flows, root, host_nodes, backend
    )


def _read_trace(direction: Direction, path: str, filename: str) -> None:
    """Checks a direction's `trace` (a file relative to the topology file) with the
    engine's own parser, and gives the direction the trace's mean rate as `rate`."""
    node = direction.nodes.get("trace")
    if node is None:
        return
    import ratelab_engine

    if "rate" in direction.nodes:
        raise _err(node, f"{path}.trace", "expected either rate or trace, not both")
    if not isinstance(node, yaml.ScalarNode) or not str(node.value).strip():
        raise _err(node, f"{path}.trace", "expected a trace file name")
    trace = (Path(filename).parent / str(node.value)).resolve()
    try:
        text = trace.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise _err(node, f"{path}.trace", f"cannot read trace {str(trace)!r}: {e}") from None
    try:
        _, _, mean_rate = ratelab_engine.check_trace(text, str(trace))
    except ratelab_engine.EngineError as e:
        _, message = e.args
        raise _err(node, f"{path}.trace", message) from None
    if mean_rate <= 0:
        raise _err(node, f"{path}.trace", f"{trace}: expected a mean rate of at least 1 bit/s")
    direction.trace = TraceFile(str(trace), mean_rate)
    direction.nodes["rate"] = yaml.ScalarNode(
        "tag:yaml.org,2002:str", f"{mean_rate}bit", node.start_mark, node.end_mark
    )


def _check_jitter(direction: Direction, path: str) -> None:
    """`jitter`: the largest random extra delay of each frame on the direction
    (docs/NET.md "Jitter"), a delay like 1ms or 500us."""
    node = direction.nodes.get("jitter")
    if node is None:
        return
    try:
        units.parse_delay_us(str(node.value))
    except ValueError as e:
        raise _err(node, f"{path}.jitter", str(e)) from None


def _check_host_direction(host: str, link: Link, index: int) -> None:
    """The rate and delay of the direction leaving a host (no router's configuration
    checks them: the host's own qdiscs use them)."""
    out = link.forward if link.a == host else link.reverse
    peer = link.b if link.a == host else link.a
    for key, parse in (("rate", units.parse_rate), ("delay", units.parse_delay_us)):
        node = out.nodes.get(key)
        if node is None:
            continue
        path = f"links[{index}] ({host} -> {peer}).{key}"
        try:
            parse(str(node.value))
        except ValueError as e:
            raise _err(node, path, str(e)) from None


def _key_node(mapping: yaml.Node, key: str) -> yaml.Node:
    for k, _ in mapping.value:
        if k.value == key:
            return k
    return mapping


def kernel_congestion_controls() -> list[str] | None:
    """The TCP congestion controls this kernel offers (None: cannot tell)."""
    try:
        return Path(TCP_CC_FILE).read_text().split()
    except OSError:
        return None


def _is_null(node: yaml.Node) -> bool:
    return isinstance(node, yaml.ScalarNode) and node.tag.endswith(":null")


def _flow(
    r: _Reader, item: yaml.Node, path: str, hosts: list[str], duration: float, taken: set[str]
) -> Flow:
    f = r.fields(item, path, "a flow mapping (from, to, transport, ...)", _FLOW_KEYS)
    for key in ("from", "to", "transport"):
        if key not in f:
            raise _err(item, f"{path}.{key}", "missing")
    src = r.scalar(f["from"], f"{path}.from", "a host name")
    dst = r.scalar(f["to"], f"{path}.to", "a host name")
    for key, value in (("from", src), ("to", dst)):
        if value not in hosts:
            raise _err(f[key], f"{path}.{key}", f"{value!r} is not a host")
    if src == dst:
        raise _err(f["to"], f"{path}.to", "a flow goes to another host")
    transport = r.scalar(f["transport"], f"{path}.transport", "a transport")
    if transport not in TRANSPORTS:
        raise _err(f["transport"], f"{path}.transport", "expected one of " + ", ".join(TRANSPORTS))
    name = r.name(f["name"], f"{path}.name") if "name" in f else f"f{len(taken) + 1}"
    if name in taken:
        raise _err(f.get("name", item), f"{path}.name", f"flow name {name!r} is taken")
    cc = None
    tcp = None
    if transport == "tcp":
        cc = r.scalar(f["cc"], f"{path}.cc", "a congestion control") if "cc" in f else "cubic"
        tcp = _tcp_options(r, f, item, path, cc)
    else:
        for key in ("cc", "stack", *RATELAB_KEYS):
            if key in f:
                what = "a congestion control" if key == "cc" else key
                raise _err(f[key], f"{path}.{key}", f"only tcp flows have {what}")
    rbcc = None
    if transport == "rbcc":
        initial = r.rate(f["initial_rate"], f"{path}.initial_rate") if "initial_rate" in f else None
        adopt = "adopt_synack_rate" in f and r.boolean(
            f["adopt_synack_rate"], f"{path}.adopt_synack_rate"
        )
        rbcc = RbccOptions(initial, adopt)
    else:
        for key in RBCC_KEYS:
            if key in f:
                raise _err(f[key], f"{path}.{key}", f"only rbcc flows have {key}")
    pattern = r.scalar(f["pattern"], f"{path}.pattern", "a pattern") if "pattern" in f else "bulk"
    if pattern not in PATTERNS:
        raise _err(f["pattern"], f"{path}.pattern", "expected one of " + ", ".join(PATTERNS))
    rate = r.rate(f["rate"], f"{path}.rate") if "rate" in f else None
    if transport in ("udp", "rbcc") and rate is None:
        raise _err(item, f"{path}.rate", f"a {transport} flow needs a rate")
    if pattern == "stream" and rate is None:
        raise _err(item, f"{path}.rate", "a stream is limited to a rate: give one")
    on = r.seconds(f["on"], f"{path}.on", False) if "on" in f else None
    off = r.seconds(f["off"], f"{path}.off", False) if "off" in f else None
    if pattern == "onoff" and (on is None or off is None):
        raise _err(item, f"{path}.on", "an onoff flow needs both on and off")
    if pattern != "onoff" and (on is not None or off is not None):
        raise _err(f.get("on", f.get("off", item)), f"{path}.on", "on/off need pattern: onoff")
    if transport in ("rbcc", "ping") and pattern != "bulk":
        raise _err(f["pattern"], f"{path}.pattern", f"{transport} flows have no pattern")
    if pattern == "poisson" and transport != "udp":
        raise _err(f["pattern"], f"{path}.pattern", "poisson is a pattern of udp flows")
    size = 1000
    if "size" in f:
        text = r.scalar(f["size"], f"{path}.size", "an IPv4 packet size in bytes")
        if not text.isdigit() or not 100 <= int(text) <= 1500:
            raise _err(f["size"], f"{path}.size", "expected an IPv4 packet size 100..1500")
        size = int(text)
    transfer = None
    if "bytes" in f:
        if transport != "tcp":
            raise _err(f["bytes"], f"{path}.bytes", "only tcp flows have a transfer size")
        if pattern != "bulk":
            raise _err(f["bytes"], f"{path}.bytes", "a transfer needs pattern: bulk")
        transfer = _transfer_bytes(r, f["bytes"], f"{path}.bytes")
    interval = r.seconds(f["interval"], f"{path}.interval", False) if "interval" in f else 0.1
    start = r.seconds(f["start"], f"{path}.start") if "start" in f else 0.0
    stop = r.seconds(f["stop"], f"{path}.stop") if "stop" in f else duration
    if not start < stop <= duration:
        raise _err(f.get("stop", item), f"{path}.stop", f"expected start < stop <= {duration:g} s")
    taken.add(name)
    return Flow(
        name,
        src,
        dst,
        transport,
        cc,
        pattern,
        rate,
        on,
        off,
        size,
        interval,
        start,
        stop,
        item,
        tcp,
        transfer,
        rbcc,
    )


# A transfer size: `180kB`, `64KiB`, `2MB`, `1448B`, plain bytes, or `1500x1448`
# (segments x bytes each, as the studies give their transfers).
_BYTES = re.compile(r"^(\d+(?:\.\d+)?)\s*(B|kB|KiB|MB|MiB|GB|GiB)?$")
_SEGMENTS = re.compile(r"^(\d+)\s*x\s*(\d+)$")
_BYTE_UNITS = {"B": 1, "kB": 10**3, "KiB": 2**10, "MB": 10**6, "MiB": 2**20, "GB": 10**9}
_BYTE_UNITS["GiB"] = 2**30
MAX_TRANSFER = 2**40  # bytes; far above any study's transfer, below 64-bit trouble


def _transfer_bytes(r: _Reader, node: yaml.Node, path: str) -> int:
    expected = "a size like 180kB, 64KiB, 1500x1448 (segments x bytes) or plain bytes"
    text = r.scalar(node, path, expected).strip()
    segments = _SEGMENTS.match(text)
    if segments:
        value = int(segments.group(1)) * int(segments.group(2))
    else:
        m = _BYTES.match(text)
        if not m:
            raise _err(node, path, f"expected {expected}, got {text!r}")
        exact = float(m.group(1)) * _BYTE_UNITS[m.group(2) or "B"]
        value = round(exact)
        if abs(exact - value) > 1e-6:
            raise _err(node, path, f"expected a whole number of bytes, got {text!r}")
    if not 1 <= value <= MAX_TRANSFER:
        raise _err(node, path, f"expected 1 byte to 1TiB, got {text!r}")
    return value


def _tcp_options(
    r: _Reader, f: dict[str, yaml.Node], item: yaml.Node, path: str, cc: str
) -> TcpOptions:
    """The stack of a tcp flow, its congestion control checked against that stack,
    and the ratelab stack's knobs (an error on a kernel flow)."""
    stack = r.scalar(f["stack"], f"{path}.stack", "a stack") if "stack" in f else "kernel"
    if stack not in STACKS:
        raise _err(
            f["stack"], f"{path}.stack", f"expected one of {', '.join(STACKS)}, got {stack!r}"
        )
    cc_node = f.get("cc", item)
    if stack == "kernel":
        for key in RATELAB_KEYS:
            if key in f:
                raise _err(
                    f[key],
                    f"{path}.{key}",
                    f"a kernel TCP flow has no {key}: it needs stack: ratelab",
                )
        offered = kernel_congestion_controls()
        if offered is not None and cc not in offered:
            hint = " (stack: ratelab has it)" if cc in RATELAB_CCS else ""
            raise _err(
                cc_node,
                f"{path}.cc",
                f"{cc!r} is not available in this kernel (available: {' '.join(offered)}){hint}",
            )
        return TcpOptions()
    if cc not in RATELAB_CCS:
        raise _err(
            cc_node,
            f"{path}.cc",
            f"expected one of {', '.join(RATELAB_CCS)} (stack: ratelab), got {cc!r}",
        )
    iw = None
    if "iw" in f:
        text = r.scalar(f["iw"], f"{path}.iw", "an initial window in segments")
        if not text.isdigit() or not 1 <= int(text) <= MAX_IW:
            raise _err(f["iw"], f"{path}.iw", f"expected 1 to {MAX_IW} segments, got {text!r}")
        iw = int(text)
    rto = {key: _rto(r, f[key], f"{path}.{key}") for key in ("initial_rto", "min_rto") if key in f}
    flags = {
        key: r.boolean(f[key], f"{path}.{key}")
        for key in ("sack", "delayed_ack", "prr", "hystart")
        if key in f
    }
    if cc == "cubic-linux" and flags.get("hystart"):
        raise _err(
            f["hystart"],
            f"{path}.hystart",
            "cubic-linux leaves slow start by Linux's HyStart: no HyStart++ on top",
        )
    rto_formula = None
    if "rto_formula" in f:
        node = f["rto_formula"]
        rto_formula = r.scalar(node, f"{path}.rto_formula", "an RTO formula")
        if rto_formula not in RTO_FORMULAS:
            expected = f"expected one of {', '.join(RTO_FORMULAS)}, got {rto_formula!r}"
            raise _err(node, f"{path}.rto_formula", expected)
    send_buffer = (
        _send_buffer(r, f["send_buffer"], f"{path}.send_buffer") if "send_buffer" in f else None
    )
    return TcpOptions(
        stack,
        iw,
        initial_rto_s=rto.get("initial_rto"),
        min_rto_s=rto.get("min_rto"),
        sack=flags.get("sack"),
        delayed_ack=flags.get("delayed_ack"),
        prr=flags.get("prr"),
        rto_formula=rto_formula,
        hystart=flags.get("hystart"),
        send_buffer=send_buffer,
    )


# The stack's send buffer bounds (tcp::Config::validate: 2 x its 1,460-byte MSS to 1 GiB).
MIN_SEND_BUFFER, MAX_SEND_BUFFER = 2 * 1460, 2**30


def _send_buffer(r: _Reader, node: yaml.Node, path: str) -> str | int:
    """`auto` or a fixed size (`256kB`, `1MiB`, plain bytes)."""
    expected = "auto or a size like 256kB, 1MiB or plain bytes"
    text = r.scalar(node, path, expected).strip()
    if text == "auto":
        return text
    m = _BYTES.match(text)
    if not m:
        raise _err(node, path, f"expected {expected}, got {text!r}")
    exact = float(m.group(1)) * _BYTE_UNITS[m.group(2) or "B"]
    value = round(exact)
    if abs(exact - value) > 1e-6 or not MIN_SEND_BUFFER <= value <= MAX_SEND_BUFFER:
        raise _err(node, path, f"expected auto or {MIN_SEND_BUFFER} B to 1GiB, got {text!r}")
    return value


def _rto(r: _Reader, node: yaml.Node, path: str) -> float:
    value = r.seconds(node, path)
    if not MIN_RTO_S <= value <= MAX_RTO_S:
        raise _err(node, path, f"expected 1ms to 60s, got {node.value!r}")
    return value
