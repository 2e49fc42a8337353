"""E2's measurements (../shared/EXPERIMENTS.md E2), per run, from the flows
table: each burst's elapsed time (its longest flow), RTOs and spurious RTOs,
Jain's index between the two bursts, and the data segments' one-way delay.
The bursts are told apart by the flow names generators_e2 gives them (a1..
the first, b1.. the later one)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd
from ratelab_ctl import units

from ratelab_exp.generators_e2 import FIRST, LATER
from ratelab_exp.metrics import Metric, RunData


@dataclass(frozen=True)
class _Flow:
    start_s: float
    completion_s: float | None  # None: not completed
    bytes_received: int  # NA as 0, as a sum skips it


def _burst(d: RunData, prefix: str) -> list[_Flow]:
    """The burst's flows in the flows table's order (plain values: a run's
    metrics look at its bursts eight times, pandas made that a fifth of an E2
    run's time)."""
    starts = {
        str(f["name"]): units.parse_delay_us(str(f.get("start", "0s"))) / 1e6
        for f in d.topology["flows"]
        if str(f.get("name", "")).startswith(prefix)
    }
    columns = (d.flows[c].tolist() for c in ("flow", "completion_s", "bytes_received"))
    return [
        _Flow(starts[name], None if pd.isna(done) else float(done), 0 if pd.isna(got) else int(got))
        for name, done, got in zip(*columns, strict=True)
        if name in starts
    ]


def burst_elapsed_s(d: RunData, prefix: str) -> float:
    """From the burst's first flow's start (its SYN) to the last byte its last
    flow delivered; NaN if a flow of the burst did not complete (or it has none)."""
    rows = _burst(d, prefix)
    if not rows or any(f.completion_s is None for f in rows):
        return math.nan
    end = max(f.start_s + f.completion_s for f in rows if f.completion_s is not None)
    return end - min(f.start_s for f in rows)


def first_burst_s(d: RunData) -> float:
    return burst_elapsed_s(d, FIRST)


def later_burst_s(d: RunData) -> float:
    return burst_elapsed_s(d, LATER)


def burst_jain(d: RunData) -> float:
    """Jain's index of the two bursts' throughputs (bytes delivered over the
    burst's elapsed time): 1 when both got the same, 0.5 when one got all."""
    rates = []
    for prefix in (FIRST, LATER):
        elapsed = burst_elapsed_s(d, prefix)
        if math.isnan(elapsed) or elapsed <= 0:
            return math.nan
        rates.append(float(sum(f.bytes_received for f in _burst(d, prefix))) / elapsed)
    return sum(rates) ** 2 / (len(rates) * sum(r * r for r in rates))


def incomplete_flows(d: RunData) -> float:
    """Flows of either burst that did not deliver their whole transfer."""
    rows = _burst(d, FIRST) + _burst(d, LATER)
    return float(sum(f.completion_s is None for f in rows))


def tcp_spurious_rtos(d: RunData) -> float:
    """Retransmission timeouts the stack found spurious (Eifel detection with
    timestamps, RFC 3522: the ACK was for the original transmission)."""
    rows = d.flows[d.flows["transport"].str.startswith("tcp")]["tcp_spurious_rtos"]
    return float(pd.to_numeric(rows, errors="coerce").fillna(0).sum())


def _delays(d: RunData) -> pd.DataFrame:
    """The flows with per-packet one-way delays (the simulator records them for
    fixed-size transfers): their packet counts, means and maxima."""
    if "owd_packets" not in d.flows:
        return d.flows.iloc[0:0]
    return d.flows[pd.to_numeric(d.flows["owd_packets"], errors="coerce").fillna(0) > 0]


def owd_mean_ms(d: RunData) -> float:
    """The mean one-way delay of every data segment the receivers got (ms):
    from the server handing it to its interface to the mobile host."""
    rows = _delays(d)
    n = pd.to_numeric(rows["owd_packets"]).astype(float)
    if not n.sum():
        return math.nan
    return float((n * pd.to_numeric(rows["owd_mean_ms"]).astype(float)).sum() / n.sum())


def owd_max_ms(d: RunData) -> float:
    """The longest one-way delay of any data segment of the run (ms)."""
    rows = _delays(d)
    return float(pd.to_numeric(rows["owd_max_ms"]).max()) if len(rows) else math.nan


METRICS_E2: dict[str, Metric] = {
    "e2_first_burst_s": Metric(first_burst_s, "s", "lower", "first burst's longest flow"),
    "e2_later_burst_s": Metric(later_burst_s, "s", "lower", "later burst's longest flow"),
    "e2_burst_jain": Metric(burst_jain, "", "higher", "Jain's index between the bursts"),
    "e2_incomplete": Metric(incomplete_flows, "flows", "lower", "flows not completed"),
    "tcp_spurious_rtos": Metric(tcp_spurious_rtos, "timeouts", "lower", "spurious TCP RTOs"),
    "e2_owd_mean_ms": Metric(owd_mean_ms, "ms", "lower", "one-way delay (mean of the packets)"),
    "e2_owd_max_ms": Metric(owd_max_ms, "ms", "lower", "one-way delay (the longest packet's)"),
}
