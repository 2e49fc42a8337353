"""The report `make run` prints: what the router did with the traffic.

A pure function of the run's results (counters read over P4Runtime, the hosts'
JSON summaries), so it can be tested without a network.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ratelab_ctl.configfile import ControllerConfig
from ratelab_ctl.counters import CounterSnapshot
from ratelab_model.counters import DROP_CAUSES, PortCounters
from ratelab_model.packet import ip_to_str

from ratelab_sim.router_plan import Plan
from ratelab_sim.switch import SWITCH_LOSSES

Q16 = 1 << 16  # last_avg is Q16.16 packets


@dataclass(frozen=True)
class RunResults:
    config: ControllerConfig
    plan: Plan
    duration_s: float
    elapsed_s: float
    final: CounterSnapshot
    samples: list[CounterSnapshot]
    rbcc_senders: dict[str, dict[str, Any]]  # host name -> rbcc-send's JSON
    rbcc_receiver: dict[str, Any]
    udp_sender: dict[str, Any] | None
    udp_sink: dict[str, Any] | None
    udp_sender_name: str
    poll_interval_s: float
    # ratelab-switch's own port counters (GetPortStats); None where the target has none.
    switch_ports: dict[int, dict[str, Any]] | None = None


def _rate(bps: float) -> str:
    if bps >= 1e6:
        return f"{bps / 1e6:.2f} Mbit/s"
    return f"{bps / 1e3:.1f} kbit/s"


def fair_share(capacity: int, flows: int, min_rate: int) -> int:
    """What the router stamps when `flows` unlimited flows share a port (RBCC.md step 4,
    no flow limited elsewhere): capacity x floor(2^32 / n) >> 32, at least min_rate."""
    n = max(1, flows)
    return max((capacity * ((1 << 32) // n)) >> 32, min_rate)


def percentile(values: list[int], q: float) -> int:
    """Nearest-rank percentile of a non-empty list."""
    ordered = sorted(values)
    rank = max(1, math.ceil(q * len(ordered)))
    return ordered[rank - 1]


def held_longest(rates: list[dict[str, Any]], end_s: float) -> tuple[dict[str, Any], float]:
    """The rate record that held for the longest time (each holds until the next
    change, the last until `end_s`), and for how long."""
    best: tuple[dict[str, Any], float] = ({}, 0.0)
    for i, record in enumerate(rates):
        until = rates[i + 1]["t_s"] if i + 1 < len(rates) else max(end_s, record["t_s"])
        held = until - record["t_s"]
        if held > best[1] or not best[0]:
            best = (record, held)
    return best


def _port_table(final: dict[int, PortCounters]) -> list[str]:
    head = f"{'port':>4} {'in':>8} {'out':>8} {'bytes out':>11}  drops by cause"
    lines = [head]
    for port, pc in final.items():
        drops = [(c, getattr(pc, f"drop_{c}")) for c in DROP_CAUSES]
        text = ", ".join(f"{c} {n}" for c, n in drops if n) or "none"
        lines.append(f"{port:>4} {pc.packets_in:>8} {pc.packets_out:>8} {pc.bytes_out:>11}  {text}")
    return lines


def _queue_lines(results: RunResults, interval_s: float) -> list[str]:
    port = results.plan.bottleneck.port
    limit = results.plan.bottleneck.queue_limit
    if not results.final.gauges:
        return [f"queue at port {port}: the switch serves no register reads (no gauges)"]
    seen = [s.ports[port] for s in results.samples if port in s.ports]
    if not seen:
        return [f"queue at port {port}: no samples"]
    q = [pc.last_q for pc in seen]
    avg = [pc.last_avg / Q16 for pc in seen]
    return [
        f"queue at port {port} (limit {limit}), {len(q)} samples every {interval_s:g} s: "
        f"mean {sum(q) / len(q):.1f}, p95 {percentile(q, 0.95)}, max {max(q)} packets; "
        f"RED average mean {sum(avg) / len(avg):.2f}, max {max(avg):.2f}"
    ]


def _rbcc_lines(results: RunResults) -> list[str]:
    cfg = results.config.router
    port = results.plan.bottleneck
    flows = len(results.rbcc_senders)
    share = fair_share(port.rbcc_capacity, flows, cfg.min_rate)
    lines = [
        f"RBCC at port {port.port}: capacity {port.rbcc_capacity} B/s "
        f"({_rate(port.rbcc_capacity * 8)}), {flows} flow(s): fair share {share} B/s "
        f"({_rate(share * 8)})"
    ]
    for name, result in results.rbcc_senders.items():
        for flow in result.get("flows", []):
            span = float(flow.get("send_span_s") or 0.0)
            echoed, held = held_longest(flow.get("rates") or [], span)
            node = echoed.get("return_bottle_node")
            where = f" from {ip_to_str(node)}" if isinstance(node, int) and node else ""
            error = flow.get("error")
            lines.append(
                f"  {name} flow {flow.get('flow_id')}: asked {flow.get('desired_rate')} B/s, "
                f"echoed rate {echoed.get('return_rate')} B/s{where} for {held:.1f} of "
                f"{span:.1f} s, goodput {_rate(flow.get('goodput_bps') or 0)}, "
                f"{flow.get('retransmissions', 0)} retransmissions, {flow.get('state', '?')}"
                + (f" ({error})" if error else "")
            )
    pc = results.final.ports[port.port]
    misses = 100.0 * pc.abt_updates / pc.rbcc_packets if pc.rbcc_packets else 0.0
    lines.append(
        f"ABT at port {port.port}: {pc.rbcc_packets} RBCC packets, {pc.abt_hits} hits, "
        f"{pc.abt_updates} updates = {misses:.2f} % cache misses, "
        f"{pc.abt_collisions} collisions, {pc.abt_inserts} inserts, {pc.abt_removals} removals"
    )
    return lines


def _udp_lines(results: RunResults) -> list[str]:
    sent, sink = results.udp_sender, results.udp_sink
    if sent is None or sink is None:
        return []
    packets = sum(f.get("packets_sent", 0) for f in sent.get("flows") or [])
    flows = sink.get("flows") or []
    got = sum(f.get("packets_received", 0) for f in flows)
    rx_bps = sum(f.get("throughput_bps", 0) for f in flows)
    delays = [f["delay_mean_us"] for f in flows if f.get("delay_mean_us") is not None]
    lost = 100.0 * (packets - got) / packets if packets else 0.0
    delay = f", one-way delay mean {delays[0] / 1000:.1f} ms" if len(delays) == 1 else ""
    return [
        f"UDP {results.udp_sender_name} -> {results.plan.receiver.name}: {packets} sent, "
        f"{got} received ({lost:.1f} % lost), {_rate(rx_bps)} received{delay}"
    ]


def _switch_lines(results: RunResults) -> list[str]:
    if results.switch_ports is None:
        return []
    lost = [
        f"port {port} {name} {counts[name]}"
        for port, counts in sorted(results.switch_ports.items())
        for name in SWITCH_LOSSES
        if counts.get(name)
    ]
    if not lost:
        return [
            "switch: no frames lost outside the router program "
            "(rx_drops, mtu_drops and tx_errors 0 on every port)"
        ]
    return [
        f"switch: lost frames outside the router program, not counted above: {', '.join(lost)}"
        " (rx_drops: the switch was overloaded; the results understate what the router passed)"
    ]


def render(results: RunResults) -> str:
    plan = results.plan
    b = plan.bottleneck
    aqm = results.config.port_settings(b.port).aqm_name
    senders = ", ".join(f"{h.name} ({h.address}, port {h.port})" for h in plan.senders)
    lines = [
        "",
        f"== ratelab router run: {results.duration_s:g} s of traffic "
        f"({results.elapsed_s:.1f} s with setup and close) ==",
        f"senders {senders} -> {plan.receiver.name} ({plan.receiver.address}) through port "
        f"{b.port}: {_rate(b.rate_bps)}, {aqm}, queue limit {b.queue_limit}",
        "",
        *_port_table(results.final.ports),
        "",
        *_queue_lines(results, results.poll_interval_s),
        *_rbcc_lines(results),
        *_udp_lines(results),
        *_switch_lines(results),
    ]
    return "\n".join(lines)
