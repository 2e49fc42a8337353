"""E4's measurements (bufferbloat, sim/experiments/e4.yaml): what a long-lived
TCP flow's queue does to everyone else: ping round trips, the time of the
periodic web downloads (the topology's TCP flows with a `bytes` transfer),
and the long flow's own goodput and window (the TCP flows without one)."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from ratelab_exp.metrics import Metric, RunData


def _downloads(topology: dict[str, Any]) -> set[str]:
    return {
        f["name"]
        for f in topology.get("flows", [])
        if f.get("transport") == "tcp" and f.get("bytes") is not None
    }


def _long_flows(topology: dict[str, Any]) -> set[str]:
    return {
        f["name"]
        for f in topology.get("flows", [])
        if f.get("transport") == "tcp" and f.get("bytes") is None
    }


def _rtts(d: RunData) -> pd.Series:
    if d.pings.empty:
        return pd.Series(dtype=float)
    return pd.to_numeric(d.pings["rtt_ms"], errors="coerce").dropna()


def ping_rtt_ms(d: RunData) -> float:
    """Every ping reply's round trip, averaged (ms)."""
    rtts = _rtts(d)
    return float(rtts.mean()) if len(rtts) else math.nan


def ping_rtt_p95_ms(d: RunData) -> float:
    """The 95th percentile of the ping replies' round trips (ms)."""
    rtts = _rtts(d)
    return float(rtts.quantile(0.95)) if len(rtts) else math.nan


def _completions(d: RunData) -> pd.Series:
    rows = d.flows[d.flows["flow"].isin(list(_downloads(d.topology)))]
    if "completion_s" not in rows:
        return pd.Series(dtype=float)
    return pd.to_numeric(rows["completion_s"], errors="coerce")


def download_time_s(d: RunData) -> float:
    """The web downloads' time from SYN to the last byte read, averaged over
    the downloads that finished (s)."""
    done = _completions(d).dropna()
    return float(done.mean()) if len(done) else math.nan


def download_time_max_s(d: RunData) -> float:
    """The slowest finished web download (s)."""
    done = _completions(d).dropna()
    return float(done.max()) if len(done) else math.nan


def downloads_done_pct(d: RunData) -> float:
    """Web downloads read in full by the end of the run, in percent."""
    times = _completions(d)
    return 100.0 * float(times.notna().sum()) / len(times) if len(times) else math.nan


def long_flow_goodput(d: RunData) -> float:
    """The long-lived TCP flows' goodput (the receiver's), summed (bit/s)."""
    rows = d.flows[d.flows["flow"].isin(list(_long_flows(d.topology)))]
    values = pd.to_numeric(rows["goodput_bps"], errors="coerce").dropna()
    return float(values.sum()) if len(values) else math.nan


def long_flow_cwnd(d: RunData) -> float:
    """The long-lived TCP flows' cwnd averaged over time, then over the flows
    (segments)."""
    means = d.flow_means[d.flow_means.index.isin(list(_long_flows(d.topology)))]
    values = means["cwnd"].dropna()
    return float(values.mean()) if len(values) else math.nan


METRICS_E4: dict[str, Metric] = {
    "ping_rtt_ms": Metric(ping_rtt_ms, "ms", "lower", "ping RTT (mean)"),
    "ping_rtt_p95_ms": Metric(ping_rtt_p95_ms, "ms", "lower", "ping RTT (95th percentile)"),
    "download_time_s": Metric(download_time_s, "s", "lower", "web download time (mean)"),
    "download_time_max_s": Metric(download_time_max_s, "s", "lower", "web download time (slowest)"),
    "downloads_done_pct": Metric(downloads_done_pct, "%", "higher", "web downloads finished"),
    "long_flow_goodput": Metric(long_flow_goodput, "bit/s", "higher", "long flow's goodput"),
    "long_flow_cwnd": Metric(long_flow_cwnd, "segments", "higher", "long flow's mean cwnd"),
}
