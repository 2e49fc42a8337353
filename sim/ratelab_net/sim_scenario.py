"""A topology file (docs/NET.md) as a scenario of ratelab's simulator
(sim/netsim/README.md "Scenario format").

Routers get the entries of the same controller plan `ratelab-net` pushes over
P4Runtime (ratelab_model.p4_entries of `plan_routers`) and the queue depths
the switch is started with; every link direction its own rate and delay (a
host's egress FIFO its queue limit); every flow its transport, pattern and
TCP knobs; pings are ICMP echo requests. What the simulator cannot run (a
kernel-only congestion control, a knob its stack lacks, a zero rate) is a
ConfigError naming the field in the file.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import yaml
from ratelab_ctl import units
from ratelab_ctl.configfile import ConfigError, Location
from ratelab_ctl.priority import config_entries, priority_queues
from ratelab_ctl.switch_options import MIN_SWITCH_QUEUE

from ratelab_net.routers import RouterPlan, flow_port, router_ports
from ratelab_net.topology import RATELAB_CCS, Direction, Flow, Topology

NS_PER_S = 1_000_000_000
# A direction without a rate: in Mininet as fast as the veth pair and the switch
# go; in the simulator 10 Gbit/s (a 1,514-byte frame in 1.2 µs).
UNLIMITED_RATE_BPS = 10_000_000_000
HOST_QUEUE = 100  # packets; a host's egress without a numeric queue_limit (network.py)
IP_UDP_HEADERS = 28  # a topology's UDP size is the IPv4 total length, netsim's the payload
DRAIN_S = 1.0  # run past the traffic, as ratelab-net does, so the network drains
# router.p4's registers the queue taps read at index = port: its own queue count,
# and the queue and RED average at the last admission, the gauges a Mininet run
# polls (ratelab_ctl.counters.GAUGE_REGISTERS), which the report and plots show.
SAMPLE_REGISTERS = (
    "queue_length",
    "RouterIngress.admission.last_q",
    "RouterIngress.admission.last_avg",
)


# TcpOptions fields the simulator's TcpKnobs carry (stack: the stack is ratelab's anyway)
_SIM_KNOBS = (
    *("stack", "iw", "initial_rto_s", "min_rto_s", "sack", "delayed_ack", "prr"),
    *("rto_formula", "hystart", "send_buffer"),
)


def field_location(node: yaml.Node, key: str | None = None) -> Location:
    """Where `key` of a mapping node is in the file (the node itself if absent)."""
    if key is not None and isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if getattr(k, "value", None) == key:
                node = v
                break
    m = node.start_mark
    return Location(m.name, m.line + 1, m.column + 1)


def _ns(seconds: float) -> int:
    return round(seconds * NS_PER_S)


def _direction(out: Direction, leaves_host: bool, path: str) -> dict[str, Any]:
    rate = out.text("rate")
    delay = out.text("delay")
    rate_bps = units.parse_rate(rate) if rate else UNLIMITED_RATE_BPS
    if rate_bps <= 0:
        raise ConfigError(
            field_location(out.nodes["rate"]),
            f"{path}.rate",
            f"expected a rate above 0 in the simulator, got {rate!r}",
        )
    spec: dict[str, Any] = {
        "rate_bps": rate_bps,
        "delay_ns": units.parse_delay_us(delay) * 1000 if delay else 0,
    }
    if jitter := out.text("jitter"):
        spec["jitter_ns"] = units.parse_delay_us(jitter) * 1000
    if out.trace is not None:
        # The capacity follows the trace ("rate" is only its mean, for the router).
        del spec["rate_bps"]
        spec["trace"] = out.trace.path
    if leaves_host:
        limit = out.text("queue_limit")
        spec["queue_limit"] = int(limit) if limit and limit.isdigit() else HOST_QUEUE
    return spec


def router_spec(plan: RouterPlan) -> dict[str, Any]:
    """A router's plan in the simulator's router format (sim/netsim/README.md)."""
    config = plan.config.router
    queues = priority_queues(plan.config)
    return {
        "name": plan.name,
        "entries": [
            {
                "table": e.table,
                "key": [list(k) if isinstance(k, tuple) else k for k in e.key],
                "action": e.action,
                "params": list(e.params),
            }
            for e in config_entries(plan.config)
        ],
        "ports": [
            {
                "port": p.port,
                "queue_depth": max(MIN_SWITCH_QUEUE, 2 * p.queue_limit),
                **({"priority_queues": queues[p.port]} if p.port in queues else {}),
            }
            for p in config.ports
        ],
    }


def _links(topo: Topology) -> list[dict[str, Any]]:
    ports = router_ports(topo)
    number = {(p.router, p.link_index): p.port for ps in ports.values() for p in ps}
    links = []
    for i, link in enumerate(topo.links):

        def end(name: str, index: int = i) -> dict[str, Any]:
            if name in topo.routers:
                return {"node": name, "port": number[(name, index)]}
            return {"node": name}

        links.append(
            {
                "a": end(link.a),
                "b": end(link.b),
                "forward": _direction(
                    link.forward, link.a in topo.hosts, f"links[{i}] ({link.a} -> {link.b})"
                ),
                "reverse": _direction(
                    link.reverse, link.b in topo.hosts, f"links[{i}] ({link.b} -> {link.a})"
                ),
            }
        )
    return links


def unsupported(flow: Flow, index: int) -> ConfigError | None:
    """Why the simulator cannot run this flow (None: it can)."""
    path = f"flows[{index}]"
    if flow.tcp is not None:
        for knob in dataclasses.fields(flow.tcp):
            if knob.name not in _SIM_KNOBS and getattr(flow.tcp, knob.name) is not None:
                key = knob.name.removesuffix("_s")
                return ConfigError(
                    field_location(flow.node, key),
                    f"{path}.{key}",
                    "the simulator does not take this knob yet (sim/netsim TcpKnobs)",
                )
    if flow.transport == "tcp" and flow.cc not in RATELAB_CCS:
        return ConfigError(
            field_location(flow.node, "cc"),
            f"{path}.cc",
            f"{flow.cc!r} is a kernel-only congestion control: the simulator runs "
            f"ratelab's stacks ({', '.join(RATELAB_CCS)})",
        )
    return None


def _flow(flow: Flow, port: int | None) -> dict[str, Any]:
    """A flow in the simulator's format; `port` is its receiver's TCP/UDP
    port, the one its Mininet receiver listens on (routers.flow_port)."""
    spec: dict[str, Any] = {
        "name": flow.name,
        "from": flow.src,
        "to": flow.dst,
        "start_ns": _ns(flow.start_s),
        "stop_ns": _ns(flow.stop_s),
    }
    if flow.transport == "tcp":
        if flow.pattern == "onoff":
            app: dict[str, Any] = {
                "kind": "on_off",
                "on_ns": _ns(flow.on_s or 0),
                "off_ns": _ns(flow.off_s or 0),
            }
        elif flow.pattern == "stream":
            app = {"kind": "stream", "rate_bps": flow.rate_bps}
        elif flow.transfer_bytes is not None:  # `bytes`: a transfer, then close
            app = {"kind": "transfer", "bytes": flow.transfer_bytes}
        else:
            app = {"kind": "bulk"}
        cc = kernel_knobs(flow.cc or "").get("cc", flow.cc) if _kernel(flow) else flow.cc
        tcp: dict[str, Any] = {"cc": cc, "app": app}
        knobs = _knobs(flow)
        if knobs:
            tcp["knobs"] = knobs
        if flow.transfer_bytes is not None:  # a bounded list: each segment's one-way delay
            tcp["packet_delays"] = True
        spec["tcp"] = tcp
    elif flow.transport == "udp":
        udp: dict[str, Any] = {
            "pattern": "poisson" if flow.pattern == "poisson" else "cbr",
            "rate_bps": flow.rate_bps,
            "size": flow.size - IP_UDP_HEADERS,
        }
        if flow.on_s is not None and flow.off_s is not None:
            udp["on_ns"], udp["off_ns"] = _ns(flow.on_s), _ns(flow.off_s)
        spec["udp"] = udp
    elif flow.transport == "ping":
        # iputils' ping as ratelab-net runs it: 56 data bytes, the flow's interval
        spec["ping"] = {"interval_ns": _ns(flow.interval_s)}
    else:  # rbcc
        spec["rbcc"] = {"rate_bps": flow.rate_bps, "size": flow.size}
        if flow.rbcc is not None and flow.rbcc.initial_rate_bps is not None:
            spec["rbcc"]["initial_rate_bps"] = flow.rbcc.initial_rate_bps
        if flow.rbcc is not None and flow.rbcc.adopt_synack_rate:
            spec["rbcc"]["adopt_synack_rate"] = True
    if port is not None:
        spec["port"] = port
    return spec


# What a `stack: kernel` flow runs with where the stack's defaults are not
# Linux's (docs/NET.md "What differs from Mininet"): the RTO as tcp_set_rto()
# computes it (the 200 ms floor on the variance term, not on the RTO) and
# proportional rate reduction in fast recovery (Linux's only way since 3.2);
# Cubic as `cubic-linux`, tcp_cubic.c's Cubic: its window arithmetic and its
# HyStart (host_stacks/stack/src/cc/cubic_linux.rs); the receiver's quick ACKs
# (every segment ACKed at a transfer's start and while its window grows, the
# ACK spacing HyStart's ACK train needs; host_stacks/stack/src/tcp/
# quickack.rs). IW10, the 200 ms minimum and 1 s initial RTO, SACK,
# timestamps, the 40 ms delayed-ACK timer and the send buffer that grows with
# cwnd are the stack's defaults already.
LINUX_KNOBS: dict[str, Any] = {"rto_formula": "linux", "prr": True, "quickack": True}
LINUX_CCS = {"cubic": "cubic-linux"}


def kernel_knobs(cc: str) -> dict[str, Any]:
    """The ratelab stack's settings that make it behave as Linux's TCP with `cc`:
    the knobs, and `cc` when the simulator runs another variant of it."""
    return {**LINUX_KNOBS, **({"cc": LINUX_CCS[cc]} if cc in LINUX_CCS else {})}


def _kernel(flow: Flow) -> bool:
    return flow.tcp is None or flow.tcp.stack == "kernel"


def _knobs(flow: Flow) -> dict[str, Any]:
    """A `stack: ratelab` flow's knobs the file gives (the rest: the stack's
    defaults); a kernel flow's Linux-like settings (kernel_knobs)."""
    tcp = flow.tcp
    if tcp is None or _kernel(flow):
        return {k: v for k, v in kernel_knobs(flow.cc or "").items() if k != "cc"}
    knobs: dict[str, Any] = {}
    if tcp.iw is not None:
        knobs["iw"] = tcp.iw
    if tcp.initial_rto_s is not None:
        knobs["initial_rto_ns"] = _ns(tcp.initial_rto_s)
    if tcp.min_rto_s is not None:
        knobs["min_rto_ns"] = _ns(tcp.min_rto_s)
    for key in ("sack", "delayed_ack", "prr", "rto_formula", "hystart", "send_buffer"):
        value = getattr(tcp, key)
        if value is not None:
            knobs[key] = value
    return knobs


def build_scenario(topo: Topology, plans: list[RouterPlan], seed: int = 0) -> dict[str, Any]:
    """The scenario of one topology (one variant); raises ConfigError for a flow
    the simulator cannot run. The run lasts the topology's duration plus DRAIN_S."""
    for i, flow in enumerate(topo.flows):
        problem = unsupported(flow, i)
        if problem is not None:
            raise problem
    return {
        "seed": seed,
        "duration_ns": _ns(topo.duration_s + DRAIN_S),
        "sample": {"interval_ns": _ns(topo.poll_interval_s), "registers": list(SAMPLE_REGISTERS)},
        "routers": [router_spec(p) for p in plans],
        "hosts": [{"name": h, "address": topo.host_address(h)[0]} for h in topo.hosts],
        "links": _links(topo),
        "flows": [_flow(f, flow_port(topo, i)) for i, f in enumerate(topo.flows)],
    }
