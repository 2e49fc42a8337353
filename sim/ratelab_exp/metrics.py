"""Per-run measurements, computed from a simulated run's tables and its
topology. Each metric says its unit and whether lower or higher is better,
so the report can say which transport did best without being told."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from ratelab_ctl import units
from ratelab_net.sim_scenario import DRAIN_S

SEGMENT = 1448  # TCP data bytes in a 1,500-byte packet with timestamps (generators.py)


@dataclass
class RunData:
    """What a metric sees: the run's tables, its topology (a dict) and the
    fixed-size transfers (flow -> packets) it was given."""

    flows: pd.DataFrame
    ports: pd.DataFrame
    queue_means: pd.Series  # (router, port) -> queue length averaged over the samples
    flow_means: pd.DataFrame  # TCP flow -> FLOW_MEAN_COLUMNS (flow_means)
    drops: pd.DataFrame
    counters: pd.DataFrame
    topology: dict[str, Any]
    transfers: dict[str, int]
    pings: pd.DataFrame = field(default_factory=pd.DataFrame)  # flow, seq, sent_s, rtt_ms


@dataclass(frozen=True)
class Metric:
    compute: Callable[[RunData], float]
    unit: str
    better: str  # "lower" or "higher"
    title: str


def queue_means(samples: list[dict[str, Any]]) -> pd.Series:
    """Each router port's queue length averaged over ratelab-netsim's
    queue_samples (summed as they come: building the table costs more)."""
    sums: dict[tuple[str, int], list[float]] = {}
    for s in samples:
        acc = sums.setdefault((s["router"], s["port"]), [0.0, 0])
        acc[0] += s["queue_packets"]
        acc[1] += 1
    return pd.Series({k: total / n for k, (total, n) in sums.items()}, dtype=float)


# flow_means' columns: in_flight in bytes, delivery_bps in bit/s, *_cov unitless
FLOW_MEAN_COLUMNS = [
    "cwnd",
    "srtt_ms",
    "in_flight",
    "in_flight_cov",
    "delivery_bps",
    "delivery_cov",
]


def _add(acc: list[float], value: float) -> None:
    """One more value into [sum, count, sum of squares]."""
    acc[0] += value
    acc[1] += 1
    acc[2] += value * value


def _mean_cov(acc: list[float]) -> tuple[float, float]:
    """The mean and the coefficient of variation (population standard
    deviation over the mean; NaN for a mean of 0) of an _add accumulator."""
    total, n, squares = acc
    if not n:
        return math.nan, math.nan
    mean = total / n
    if mean <= 0:
        return mean, math.nan
    return mean, math.sqrt(max(squares / n - mean * mean, 0.0)) / mean


def flow_means(samples: list[dict[str, Any]], until_ns: int) -> pd.DataFrame:
    """Each TCP sender's cwnd (segments), sRTT (ms) and bytes in flight (and
    its CoV over the samples) averaged over ratelab-netsim's flow_samples up
    to `until_ns` (the traffic's end, not the drain after it), and its
    delivery rate: the bytes acknowledged between two consecutive samples
    over their interval (bit/s), averaged over the intervals, and its CoV. A
    flow without a value (no sRTT sample; samples without in_flight or
    delivered, as from Mininet) has NaN there."""
    sums: dict[str, dict[str, list[float]]] = {}
    last: dict[str, tuple[int, int]] = {}  # flow -> (time_ns, delivered) of its last sample
    for s in samples:
        if s["time_ns"] > until_ns or s["cwnd"] is None:
            continue
        flow = s["flow"]
        acc = sums.setdefault(flow, {k: [0.0, 0, 0.0] for k in ("cwnd", "srtt", "flight", "rate")})
        _add(acc["cwnd"], s["cwnd"])
        if s["srtt_ns"] is not None:
            _add(acc["srtt"], s["srtt_ns"] / 1e6)
        if s.get("in_flight") is not None:
            _add(acc["flight"], s["in_flight"])
        delivered = s.get("delivered")
        if delivered is None:
            continue
        before = last.get(flow)
        if before is not None and s["time_ns"] > before[0]:
            _add(acc["rate"], (delivered - before[1]) * 8e9 / (s["time_ns"] - before[0]))
        last[flow] = (s["time_ns"], delivered)
    rows = {}
    for flow, acc in sums.items():
        flight, flight_cov = _mean_cov(acc["flight"])
        rate, rate_cov = _mean_cov(acc["rate"])
        cwnd, srtt = _mean_cov(acc["cwnd"])[0], _mean_cov(acc["srtt"])[0]
        rows[flow] = [cwnd, srtt, flight, flight_cov, rate, rate_cov]
    return pd.DataFrame.from_dict(rows, orient="index", columns=FLOW_MEAN_COLUMNS)


def _port_means(d: RunData) -> pd.Series:
    return d.queue_means


def max_avg_queue(d: RunData) -> float:
    means = _port_means(d)
    return float(means.max()) if len(means) else math.nan


def avg_queue(d: RunData) -> float:
    means = _port_means(d)
    return float(means.mean()) if len(means) else math.nan


def packets_lost(d: RunData) -> float:
    return float(d.drops["packets"].sum()) if not d.drops.empty else 0.0


def _duration_s(d: RunData) -> float:
    """The simulated run: the topology's duration and the drain after it."""
    return units.parse_delay_us(str(d.topology["duration"])) / 1e6 + DRAIN_S


def router_port_rates(topology: dict[str, Any]) -> dict[tuple[str, int], int]:
    """(router, port) -> the rate of the direction leaving it (bit/s). A router's
    ports are numbered 1, 2, ... in the order its links appear (docs/NET.md)."""
    routers = set(topology["routers"])
    count: dict[str, int] = {}
    rates: dict[tuple[str, int], int] = {}
    for link in topology["links"]:
        a, b = link["ends"]
        for end, direction in ((a, "forward"), (b, "reverse")):
            if end not in routers:
                continue
            count[end] = count.get(end, 0) + 1
            rate = (link.get(direction) or {}).get("rate", link.get("rate"))
            if rate is not None:
                rates[(end, count[end])] = units.parse_rate(str(rate))
    return rates


def max_link_utilisation(d: RunData) -> float:
    """The busiest router egress port's bits sent over its capacity for the
    whole simulated run (duration and drain), in percent."""
    rates = router_port_rates(d.topology)
    best = math.nan
    seconds = _duration_s(d)
    for row in d.ports.itertuples(index=False):
        rate = rates.get((row.node, row.port))
        if rate:
            util = 100.0 * row.tx_bytes * 8 / (rate * seconds)
            best = util if math.isnan(best) else max(best, util)
    return best


def _effective_rates(d: RunData) -> pd.Series:
    """Bits delivered over the time to deliver them, per source (the
    simulator's goodput: received bytes over the flow's active time)."""
    data = d.flows[d.flows["transport"] != "ping"]
    return data["goodput_bps"].astype(float)


def mean_effective_rate(d: RunData) -> float:
    rates = _effective_rates(d)
    return float(rates.mean()) if len(rates) else math.nan


def slowest_source(d: RunData) -> float:
    rates = _effective_rates(d)
    return float(rates.min()) if len(rates) else math.nan


def delivered_pct(d: RunData) -> float:
    """Share of the fixed-size transfers delivered by the end of the run: TCP
    bytes received of packets x 1,448; RBCC segments acknowledged of packets."""
    if not d.transfers:
        return math.nan
    got = want = 0.0
    for row in d.flows[d.flows["flow"].isin(list(d.transfers))].itertuples(index=False):
        packets = d.transfers[row.flow]
        if str(row.transport).startswith("rbcc"):
            done = row.rbcc_segments_acked
            got += min(float(0 if pd.isna(done) else done), packets)
        else:
            got += min(float(row.bytes_received), packets * SEGMENT) / SEGMENT
        want += packets
    return 100.0 * got / want if want else math.nan


def _counter(d: RunData, name: str) -> float:
    rows = d.counters[d.counters["counter"] == name]
    return float(rows["packets"].sum())


def abt_miss_pct(d: RunData) -> float:
    """ABT lookups that found no entry (inserts) in percent of all lookups
    (hits, updates, inserts); NaN where no RBCC packet crossed a router."""
    lookups = sum(_counter(d, c) for c in ("abt_hits", "abt_updates", "abt_inserts"))
    return 100.0 * _counter(d, "abt_inserts") / lookups if lookups else math.nan


def abt_updates(d: RunData) -> float:
    """ABT updates per scenario; NaN where no RBCC packet crossed a router."""
    lookups = sum(_counter(d, c) for c in ("abt_hits", "abt_updates", "abt_inserts"))
    return _counter(d, "abt_updates") if lookups else math.nan


def _throughputs(d: RunData, transport: str) -> pd.Series:
    rows = d.flows[d.flows["transport"].str.startswith(transport)]
    return rows["goodput_bps"].astype(float)


def tcp_mean_throughput(d: RunData) -> float:
    t = _throughputs(d, "tcp")
    return float(t.mean()) if len(t) else math.nan


def tcp_jain_fairness(d: RunData) -> float:
    """Jain's index of the TCP flows' throughputs (1: equal shares)."""
    t = _throughputs(d, "tcp")
    if not len(t) or (t**2).sum() == 0:
        return math.nan
    return float(t.sum() ** 2 / (len(t) * (t**2).sum()))


def tcp_mean_srtt_ms(d: RunData) -> float:
    """The TCP flows' sRTT averaged over time (to the traffic's end), then over
    the flows (ms)."""
    values = d.flow_means["srtt_ms"].dropna()
    return float(values.mean()) if len(values) else math.nan


def tcp_retransmissions(d: RunData) -> float:
    rows = d.flows[d.flows["transport"].str.startswith("tcp")]["tcp_retransmissions"]
    return float(rows.fillna(0).sum())


def tcp_rtos(d: RunData) -> float:
    rows = d.flows[d.flows["transport"].str.startswith("tcp")]["tcp_rtos"]
    return float(rows.fillna(0).sum())


def tcp_mean_cwnd(d: RunData) -> float:
    """The TCP flows' cwnd averaged over time, then over the flows (segments)."""
    values = d.flow_means["cwnd"].dropna()
    return float(values.mean()) if len(values) else math.nan


def tcp_entropy_fairness(d: RunData) -> float:
    """Shannon entropy of the TCP flows' throughput shares over its maximum
    log(n) (1: equal shares)."""
    t = _throughputs(d, "tcp")
    t = t[t > 0]
    if len(t) < 2:
        return math.nan
    shares = t / t.sum()
    return float(-(shares * shares.map(math.log)).sum() / math.log(len(t)))


def max_queue_delay_ms(d: RunData) -> float:
    """The highest router port's average queue as queueing delay: packets x
    1,500 bytes over the port's rate (ms)."""
    rates = router_port_rates(d.topology)
    delays = [
        mean * 1500 * 8 / rates[key] * 1e3 for key, mean in d.queue_means.items() if rates.get(key)
    ]
    return max(delays) if delays else math.nan


def udp_loss_pct(d: RunData) -> float:
    rows = d.flows[d.flows["transport"].str.startswith("udp")]
    sent = float(rows["udp_sent"].fillna(0).sum())
    return 100.0 * float(rows["udp_lost"].fillna(0).sum()) / sent if sent else math.nan


METRICS: dict[str, Metric] = {
    "max_avg_queue": Metric(max_avg_queue, "packets", "lower", "highest average queue"),
    "avg_queue": Metric(avg_queue, "packets", "lower", "average queue"),
    "packets_lost": Metric(packets_lost, "packets", "lower", "total packets lost"),
    "max_link_utilisation": Metric(
        max_link_utilisation, "%", "higher", "highest average link utilisation"
    ),
    "mean_effective_rate": Metric(mean_effective_rate, "bit/s", "higher", "effective bit rate"),
    "slowest_source": Metric(slowest_source, "bit/s", "higher", "slowest source's bit rate"),
    "delivered_pct": Metric(delivered_pct, "%", "higher", "data delivered"),
    "abt_miss_pct": Metric(abt_miss_pct, "%", "lower", "ABT cache misses"),
    "abt_updates": Metric(abt_updates, "updates", "lower", "ABT updates"),
    "tcp_mean_throughput": Metric(tcp_mean_throughput, "bit/s", "higher", "TCP throughput"),
    "tcp_jain_fairness": Metric(tcp_jain_fairness, "", "higher", "Jain's fairness (TCP)"),
    "tcp_mean_srtt_ms": Metric(tcp_mean_srtt_ms, "ms", "lower", "TCP smoothed RTT"),
    "tcp_retransmissions": Metric(tcp_retransmissions, "segments", "lower", "retransmissions"),
    "udp_loss_pct": Metric(udp_loss_pct, "%", "lower", "UDP loss"),
    "tcp_rtos": Metric(tcp_rtos, "timeouts", "lower", "TCP retransmission timeouts"),
    "tcp_mean_cwnd": Metric(tcp_mean_cwnd, "segments", "higher", "TCP mean cwnd"),
    "tcp_entropy_fairness": Metric(
        tcp_entropy_fairness, "", "higher", "entropy fairness (TCP throughput)"
    ),
    "max_queue_delay_ms": Metric(
        max_queue_delay_ms, "ms", "lower", "highest average queueing delay"
    ),
}

# E5's metrics (metrics_e5.py imports Metric and RunData from here)
from ratelab_exp.metrics_e5 import METRICS_E5  # noqa: E402

METRICS.update(METRICS_E5)

# the rest of E3's catalogue (metrics_e3.py)
from ratelab_exp.metrics_e3 import METRICS_E3  # noqa: E402

METRICS.update(METRICS_E3)

# the studies' own metrics (each module imports Metric and RunData from here)
from ratelab_exp.metrics_e4 import METRICS_E4  # noqa: E402

METRICS.update(METRICS_E4)

from ratelab_exp.metrics_e2 import METRICS_E2  # noqa: E402

METRICS.update(METRICS_E2)
