"""What a `ratelab-net` run found: per-flow results from the hosts, per-port
counters from the routers, the packet balance, and the printed report.

Pure functions of the files and snapshots a run leaves, testable without a
network.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ratelab_ctl.counters import CounterSnapshot
from ratelab_model.counters import DROP_CAUSES, PortCounters
from ratelab_sim.switch import SWITCH_LOSSES

from ratelab_net.topology import Flow, Topology

_PING_LINE = re.compile(r"^\[(?P<t>[0-9.]+)\].*icmp_seq=(?P<seq>\d+).*time=(?P<rtt>[0-9.]+) ms")
Q16 = 1 << 16
NO_RATE = 0xFFFFFFFF  # an rbcc sender's return_rate before its first ACK


@dataclass
class FlowResult:
    flow: Flow
    goodput_bps: float | None = None
    rtt_ms: list[tuple[float, float]] = field(default_factory=list)  # (t_s, ms)
    cwnd: list[tuple[float, int]] = field(default_factory=list)  # (t_s, segments)
    ssthresh_changes: int | None = None
    retransmissions: int | None = None
    sent: int | None = None  # packets (ping, udp) or segments
    received: int | None = None
    note: str = ""
    stack: str | None = None  # tcp: "kernel" or "ratelab"
    rtos: int | None = None  # ratelab stack: retransmission timeouts ...
    spurious_rtos: int | None = None  # ... and those its timestamps showed needless
    rates: list[RateChange] = field(default_factory=list)  # rbcc: over time


@dataclass(frozen=True)
class RateChange:
    """An rbcc sender's rate from `t_s` on (bytes/s): what it sends at, what the
    routers echoed, and which router set the echoed rate (0: none)."""

    t_s: float
    rate: int
    return_rate: int | None  # None: no ACK yet (0xFFFFFFFF on the wire)
    bottle_node: int

    @property
    def bottle_router(self) -> str:
        """The router id that set the echoed rate, dotted (its router_id), or "-"."""
        return str(ipaddress.IPv4Address(self.bottle_node)) if self.bottle_node else "-"


def parse_ping(text: str) -> tuple[list[tuple[float, float]], int, int]:
    """(t_s from the first reply, rtt ms) per reply, packets sent, replies received."""
    samples = []
    for line in text.splitlines():
        m = _PING_LINE.match(line.strip())
        if m:
            samples.append((float(m["t"]), float(m["rtt"])))
    sent = received = 0
    m = re.search(r"(\d+) packets transmitted, (\d+) received", text)
    if m:
        sent, received = int(m[1]), int(m[2])
    t0 = samples[0][0] if samples else 0.0
    return [(t - t0, r) for t, r in samples], sent, received


def _load(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None


def flow_result(flow: Flow, out: Path) -> FlowResult:
    r = FlowResult(flow)
    if flow.transport == "ping":
        try:
            text = (out / f"{flow.name}.ping.txt").read_text()
        except OSError:
            r.note = "no ping output"
            return r
        r.rtt_ms, r.sent, r.received = parse_ping(text)
        return r
    data = _load(out / f"{flow.name}.json")
    if data is None or not data.get("flows"):
        r.note = "no results (the sender failed to write them)"
        try:  # its last words, saved by traffic.py
            last = (out / f"{flow.name}.stderr.txt").read_text().strip().splitlines()[-1:]
        except OSError:
            last = []
        if last:
            r.note = f"no results (the sender failed to write them: {last[0]})"
        return r
    f = data["flows"][0]
    r.retransmissions = f.get("retransmissions")
    if flow.transport == "tcp":
        r.goodput_bps = f.get("goodput_bps")
        r.stack = flow.tcp.stack if flow.tcp else "kernel"
        if r.stack == "ratelab":
            r.rtos, r.spurious_rtos = f.get("rtos"), f.get("spurious_rtos")
        for s in f.get("samples", []):
            if s.get("rtt_us"):
                r.rtt_ms.append((s["t_s"], s["rtt_us"] / 1000))
            if s.get("snd_cwnd") is not None:
                r.cwnd.append((s["t_s"], s["snd_cwnd"]))
        r.ssthresh_changes = f.get("ssthresh_changes")
    elif flow.transport == "rbcc":
        r.goodput_bps = f.get("goodput_bps")
        r.sent, r.received = f.get("segments"), f.get("segments_acked")
        r.rates = [
            RateChange(
                c["t_s"],
                c["rate"],
                None if c["return_rate"] == NO_RATE else c["return_rate"],
                c["return_bottle_node"],
            )
            for c in f.get("rates", [])
        ]
        if f.get("srtt_us"):
            r.note = f"srtt {f['srtt_us'] / 1000:.1f} ms, rate {f.get('rate')} B/s at the end"
            if r.rates and r.rates[-1].bottle_node:
                r.note += f" (set by {r.rates[-1].bottle_router})"
    else:  # udp
        r.sent = f.get("packets_sent")
        sink = _load(out / f"{flow.name}.sink.json")
        flows = (sink or {}).get("flows") or []
        r.received = sum(x.get("packets_received", 0) for x in flows)
        r.goodput_bps = sum(x.get("throughput_bps", 0) for x in flows)
    if flow.transport == "tcp" and f.get("error"):
        r.note = str(f["error"])
    if r.stack == "ratelab":  # packets its raw socket could not use or lost locally; RSTs
        keys = ("malformed", "local_drops", "resets_received", "resets_sent")
        counts = [f"{f[k]} {k.replace('_', ' ')}" for k in keys if f.get(k)]
        r.note = ", ".join(x for x in (r.note, *counts) if x)
    return r


# Per router: its switch's counters per port, or None where the target has none (BMv2).
SwitchStats = dict[str, dict[int, dict[str, int]] | None]


@dataclass(frozen=True)
class Balance:
    """Every packet a host put on its link arrived at a host, was dropped by a router
    for a counted cause, or was lost by a switch outside the router program (the
    network is drained at the end). `switch_losses` None: no switch reports them."""

    host_tx: int
    host_rx: int
    router_drops: int
    switch_losses: int | None = None

    @property
    def unaccounted(self) -> int:
        return self.host_tx - self.host_rx - self.router_drops - (self.switch_losses or 0)


def switch_losses(after: SwitchStats, before: SwitchStats) -> int | None:
    """What the switches lost between two GetPortStats readings (None: none reports)."""
    total, reported = 0, False
    for router, ports in after.items():
        if ports is None:
            continue
        reported = True
        base = before.get(router) or {}
        for port, counts in ports.items():
            old = base.get(port, {})
            total += sum(counts.get(k, 0) - old.get(k, 0) for k in SWITCH_LOSSES)
    return total if reported else None


def balance(
    before: dict[str, tuple[int, int]],
    after: dict[str, tuple[int, int]],
    routers: dict[str, CounterSnapshot],
    routers_before: dict[str, CounterSnapshot],
    switches: SwitchStats | None = None,
    switches_before: SwitchStats | None = None,
) -> Balance:
    tx = sum(after[h][0] - before[h][0] for h in after)
    rx = sum(after[h][1] - before[h][1] for h in after)
    drops = 0
    for name, snap in routers.items():
        base = routers_before[name].ports
        for port, pc in snap.ports.items():
            old = base.get(port, PortCounters())
            drops += sum(getattr(pc, f"drop_{c}") - getattr(old, f"drop_{c}") for c in DROP_CAUSES)
    lost = switch_losses(switches or {}, switches_before or {})
    return Balance(tx, rx, drops, lost)


def _kind(flow: Flow) -> str:
    """`tcp CC` for the kernel's TCP, `ratelab CC` for the ratelab stack's."""
    if flow.transport != "tcp":
        return flow.transport
    stack = "ratelab" if flow.tcp and flow.tcp.stack == "ratelab" else "tcp"
    return f"{stack} {flow.cc}"


def _rate(bps: float | None) -> str:
    if bps is None:
        return "-"
    return f"{bps / 1e6:.2f} Mbit/s" if bps >= 1e6 else f"{bps / 1e3:.1f} kbit/s"


def _rtt(samples: list[tuple[float, float]]) -> str:
    if not samples:
        return "-"
    values = sorted(v for _, v in samples)
    mean = sum(values) / len(values)
    return f"{values[0]:.1f}/{mean:.1f}/{values[-1]:.1f} ms"


def render(
    topo: Topology,
    flows: list[FlowResult],
    samples: dict[str, list[CounterSnapshot]],
    final: dict[str, CounterSnapshot],
    bal: Balance,
    notes: Sequence[str] = (),
) -> str:
    """The report; `notes` (what the run could not emulate) go right below the title."""
    lines = [f"== ratelab-net: {topo.filename}, {topo.duration_s:g} s =="]
    lines += [f"note: {n}" for n in notes]
    lines.append("")
    lines.append(
        f"{'flow':<10} {'kind':<15} {'route':<18} {'goodput':>13} {'rtt min/mean/max':>22} "
        f"{'retx':>5}  notes"
    )
    for r in flows:
        f = r.flow
        kind = _kind(f)
        route = f"{f.src}->{f.dst}"
        notes = []
        if r.sent is not None and r.received is not None:
            notes.append(f"{r.received}/{r.sent} received")
        if r.ssthresh_changes is not None:
            notes.append(f"{r.ssthresh_changes} ssthresh changes")
        if r.rtos is not None:
            notes.append(f"{r.rtos} RTOs ({r.spurious_rtos or 0} spurious)")
        if r.note:
            notes.append(r.note)
        retx = "-" if r.retransmissions is None else str(r.retransmissions)
        lines.append(
            f"{f.name:<10} {kind:<15} {route:<18} {_rate(r.goodput_bps):>13} "
            f"{_rtt(r.rtt_ms):>22} {retx:>5}  {', '.join(notes)}"
        )
    lines += ["", f"{'router port':<12} {'in':>8} {'out':>8} {'queue mean/max':>15}  drops"]
    for router, snap in final.items():
        for port, pc in snap.ports.items():
            q = [s.ports[port].last_q for s in samples.get(router, []) if port in s.ports]
            queue = f"{sum(q) / len(q):.1f}/{max(q)}" if q and snap.gauges else "-"
            drops = ", ".join(
                f"{c} {getattr(pc, f'drop_{c}')}" for c in DROP_CAUSES if getattr(pc, f"drop_{c}")
            )
            lines.append(
                f"{router + '.' + str(port):<12} {pc.packets_in:>8} {pc.packets_out:>8} "
                f"{queue:>15}  {drops or 'none'}"
            )
    verdict = "conserved" if bal.unaccounted == 0 else f"{bal.unaccounted} unaccounted"
    lost = (
        ""
        if bal.switch_losses is None
        else f", switches lost {bal.switch_losses} outside the router program"
    )
    lines += [
        "",
        f"packets: hosts sent {bal.host_tx}, hosts received {bal.host_rx}, routers dropped "
        f"{bal.router_drops}{lost}: {verdict}",
    ]
    if bal.switch_losses:
        lines.append(
            "  (rx_drops, mtu_drops, tx_errors in `ratelab-switch-cli port_stats`; rx_drops: "
            "an overloaded switch, so the results understate what the routers passed)"
        )
    return "\n".join(lines)


def summarize(
    flows: list[FlowResult],
    samples: dict[str, list[CounterSnapshot]],
    final: dict[str, CounterSnapshot],
    bal: Balance,
) -> str:
    """One line for comparing variants: each flow's goodput or RTT, the fullest
    queue, the drops."""
    parts = []
    for r in flows:
        if r.flow.transport == "ping":
            parts.append(f"{r.flow.name} rtt mean {_mean(r.rtt_ms)}")
        else:
            parts.append(f"{r.flow.name} {_rate(r.goodput_bps)}")
    worst = ("-", 0.0, 0)
    for router, snaps in samples.items():
        for port in sorted({p for s in snaps for p in s.ports}):
            q = [s.ports[port].last_q for s in snaps if port in s.ports]
            if q and sum(q) / len(q) > worst[1]:
                worst = (f"{router}.{port}", sum(q) / len(q), max(q))
    parts.append(f"queue {worst[0]} mean {worst[1]:.1f} max {worst[2]}")
    parts.append(f"{bal.router_drops} drops")
    return "; ".join(parts)


def _mean(samples: list[tuple[float, float]]) -> str:
    if not samples:
        return "-"
    return f"{sum(v for _, v in samples) / len(samples):.1f} ms"
