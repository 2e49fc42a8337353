"""E5's measurements (../shared/EXPERIMENTS.md, E5): goodput, RTT, one-way
delay and ssthresh changes of each path and traffic of
sim/experiments/e5_paths.yaml, where TCP flow `<path>-<traffic>` is the
download of that traffic over that path; and each stream's goodput as a share
of the same run's bulk goodput over its path (the check that the streams ran at
50 % and 25 % of it). A flow a run does not have is n/a."""

from __future__ import annotations

import math
from collections.abc import Callable

from ratelab_exp.metrics import Metric, RunData

PATHS = {"p3m": "3 Mbit/s path", "hspa": "HSPA path", "lte": "LTE path"}
TRAFFIC = {"bulk": "bulk", "onof": "on-off", "st50": "stream 50 %", "st25": "stream 25 %"}
STREAM_SHARES = {"st50": 50, "st25": 25}


def _flow_value(d: RunData, flow: str, column: str) -> float:
    rows = d.flows[d.flows["flow"] == flow]
    if rows.empty or column not in rows:
        return math.nan
    value = rows[column].iloc[0]
    return math.nan if value is None or value != value else float(value)


def goodput_kBps(d: RunData, flow: str) -> float:
    """Bytes the receiving application read over the time from its first byte
    to its last, in KB/s (1 KB = 1,000 bytes)."""
    return _flow_value(d, flow, "goodput_bps") / 8 / 1000


def rtt_ms(d: RunData, flow: str) -> float:
    """The sender's smoothed RTT averaged over its samples (every
    poll_interval) to the traffic's end (ms)."""
    if flow not in d.flow_means.index:
        return math.nan
    return float(d.flow_means.loc[flow, "srtt_ms"])


def owd_ms(d: RunData, flow: str) -> float:
    """Mean one-way delay at the application: each message from its write at
    the sender to its last byte read at the receiver, so the time it waits in
    the sender's buffer counts (ms)."""
    rows = d.flows[d.flows["flow"] == flow]
    if rows.empty or float(rows["bytes_received"].iloc[0]) == 0:
        return math.nan
    return _flow_value(d, flow, "one_way_delay_mean_ns") / 1e6


def ssthresh_changes(d: RunData, flow: str) -> float:
    return _flow_value(d, flow, "tcp_ssthresh_changes")


def stream_share_pct(d: RunData, path: str, traffic: str) -> float:
    """The stream's goodput over the bulk flow's on the same path in the same
    run, in percent."""
    bulk = _flow_value(d, f"{path}-bulk", "goodput_bps")
    stream = _flow_value(d, f"{path}-{traffic}", "goodput_bps")
    return 100.0 * stream / bulk if bulk else math.nan


def _per_flow(f: Callable[[RunData, str], float], flow: str) -> Callable[[RunData], float]:
    return lambda d: f(d, flow)


def _share(path: str, traffic: str) -> Callable[[RunData], float]:
    return lambda d: stream_share_pct(d, path, traffic)


def _metrics() -> dict[str, Metric]:
    out: dict[str, Metric] = {}
    quantities = (
        ("goodput", goodput_kBps, "KB/s", "higher", "goodput"),
        ("rtt", rtt_ms, "ms", "lower", "RTT"),
        ("owd", owd_ms, "ms", "lower", "one-way delay"),
        ("ssthresh", ssthresh_changes, "changes", "lower", "ssthresh changes"),
    )
    for path, path_title in PATHS.items():
        for traffic, traffic_title in TRAFFIC.items():
            flow = f"{path}-{traffic}"
            for key, f, unit, better, title in quantities:
                out[f"e5_{key}_{path}_{traffic}"] = Metric(
                    _per_flow(f, flow), unit, better, f"{title}, {path_title}, {traffic_title}"
                )
        for traffic, share in STREAM_SHARES.items():
            out[f"e5_share_{path}_{traffic}"] = Metric(
                _share(path, traffic),
                "%",
                "higher",
                f"stream's goodput of the bulk goodput (asked {share} %), {path_title}",
            )
    return out


METRICS_E5 = _metrics()
