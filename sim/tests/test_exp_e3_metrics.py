"""E3's catalogue (metrics_e3.py) on hand-made tables whose answers are
worked out by hand, n/a where the data cannot give one, and E3 --quick with
the new metrics in its report. No root."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pandas as pd
from ratelab_exp.metrics import METRICS, RunData

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent

# two senders through r1 -> r2 (10 Mbit/s) to two sinks; 10 s of traffic
TOPOLOGY = {
    "duration": "10s",
    "routers": {"r1": {}, "r2": {}},
    "hosts": ["a", "b", "c", "x", "y"],
    "links": [
        {"ends": ["a", "r1"], "rate": "1gbit"},  # r1 port 1
        {"ends": ["b", "r1"], "rate": "1gbit"},  # r1 port 2
        {"ends": ["c", "r1"], "rate": "1gbit"},  # r1 port 3
        {"ends": ["r1", "r2"], "rate": "10mbit"},  # r1 port 4, r2 port 1
        {"ends": ["r2", "x"], "rate": "1gbit"},  # r2 port 2
        {"ends": ["r2", "y"], "rate": "1gbit"},  # r2 port 3
    ],
}


def _flow(name: str, src: str, transport: str, mbit: float, **extra: object) -> dict[str, object]:
    return {
        "flow": name,
        "from": src,
        "to": "x",
        "transport": transport,
        "goodput_bps": mbit * 1e6,
        "bytes_received": mbit * 1e6 / 8 * 5,  # five seconds' worth
        "one_way_delay_mean_ns": 20e6,
        "tcp_min_rtt_ns": 30e6,
        **extra,
    }


def _data(flows: list[dict[str, object]], drops: pd.DataFrame | None = None) -> RunData:
    ports = pd.DataFrame(
        [
            # r1 -> r2 sent 8 Mbit/s for the 11 s run: 80 % of 10 Mbit/s
            {"node": "r1", "port": 4, "tx_bytes": 8e6 / 8 * 11},
            # r2 -> x: far below 1 Gbit/s
            {"node": "r2", "port": 2, "tx_bytes": 9e6 / 8 * 11},
            {"node": "a", "port": 0, "tx_bytes": 6e6 / 8 * 11},  # 6 Mbit/s over 10 + 1 s
            {"node": "b", "port": 0, "tx_bytes": 3e6 / 8 * 11},
        ]
    )
    means = pd.DataFrame({"cwnd": {"t1": 10.0, "t2": 10.0}, "srtt_ms": {"t1": 45.0, "t2": 35.0}})
    empty = pd.DataFrame()
    return RunData(
        pd.DataFrame(flows),
        ports,
        pd.Series(dtype=float),
        means,
        drops if drops is not None else pd.DataFrame(columns=["node", "port", "packets"]),
        empty,
        TOPOLOGY,
        {},
    )


def _value(name: str, d: RunData) -> float:
    return METRICS[name].compute(d)


def test_e3_catalogue_by_hand() -> None:
    drops = pd.DataFrame(
        [
            {"node": "r1", "port": 4, "cause": "queue_full", "packets": 7},
            {"node": "r2", "port": 2, "cause": "queue_full", "packets": 100},
        ]
    )
    d = _data(
        [
            _flow("t1", "a", "tcp/reno", 4.0),
            _flow("t2", "b", "tcp/reno", 1.0, one_way_delay_mean_ns=40e6),
            _flow("u1", "c", "udp/cbr", 2.0),
        ],
        drops,
    )
    assert math.isclose(_value("tcp_queueing_delay_ms", d), ((45 - 30) + (35 - 30)) / 2)
    assert math.isclose(_value("tcp_owd_ms", d), 30.0)
    assert math.isclose(_value("tcp_completion_s", d), 5.0)
    assert math.isclose(_value("tcp_send_rate", d), (6e6 + 3e6) / 2)
    assert math.isclose(_value("tcp_utility_pf", d), math.log(4) + math.log(1))
    assert math.isclose(_value("tcp_utility_mpd", d), -(1 / 4 + 1 / 1))
    assert math.isclose(_value("tcp_product_fairness", d), (4 / 2.5) * (1 / 2.5))
    # the bottleneck is r1.4 (80 % of its rate), not r2.2 (more bits, 1 Gbit/s)
    assert math.isclose(_value("bottleneck_send_rate", d), 8e6)
    assert _value("bottleneck_drops", d) == 7.0
    assert math.isclose(_value("tcp_bandwidth_share_pct", d), 100 * 2.5e6 / 10e6)
    # 4, 1 and 2 Mbit/s for five seconds each, over the 11 s run
    assert math.isclose(_value("net_throughput", d), 7e6 * 5 / 11)
    assert math.isclose(_value("net_utilisation_pct", d), 100 * 7e6 * 5 / 11 / 10e6)
    equal = _data([_flow("t1", "a", "tcp/reno", 3.0), _flow("t2", "b", "tcp/reno", 3.0)])
    assert math.isclose(_value("tcp_product_fairness", equal), 1.0)
    assert _value("bottleneck_drops", equal) == 0.0


def test_e3_catalogue_not_available() -> None:
    # two TCP flows from one host: the host's counters are not one flow's
    shared = _data([_flow("t1", "a", "tcp/reno", 4.0), _flow("t2", "a", "tcp/reno", 1.0)])
    assert math.isnan(_value("tcp_send_rate", shared))
    starved = _data([_flow("t1", "a", "tcp/reno", 4.0), _flow("t2", "b", "tcp/reno", 0.0)])
    for name in ("tcp_utility_pf", "tcp_utility_mpd"):
        assert math.isnan(_value(name, starved)), name
    assert _value("tcp_product_fairness", starved) == 0.0
    udp_only = _data([_flow("u1", "c", "udp/cbr", 2.0)])
    for name in ("tcp_queueing_delay_ms", "tcp_owd_ms", "tcp_completion_s", "tcp_send_rate"):
        assert math.isnan(_value(name, udp_only)), name
    assert math.isnan(_value("tcp_product_fairness", udp_only))


def test_e3_quick_reports_the_catalogue(tmp_path: Path) -> None:
    out = tmp_path / "e3"
    args = ["run", str(ROOT / "sim/experiments/e3.yaml"), "--quick", "--workers", "2"]
    proc = subprocess.run(
        [str(BIN / "ratelab-exp"), *args, "--out", str(out)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    runs = pd.read_parquet(out / "runs.parquet")
    assert (runs["status"] == "ok").all()
    # the 48 Mbit/s bottleneck is offered 72: it is the busiest port and full
    assert runs["bottleneck_send_rate"].between(0.9 * 48e6 * 3 / 4, 48e6).all()
    assert runs["net_utilisation_pct"].between(40, 100).all()
    assert runs["tcp_queueing_delay_ms"].gt(0).all()  # the FIFO stands
    # a sender's bits over the run against its bits received over its active time
    assert runs["tcp_send_rate"].gt(0.5 * runs["tcp_mean_throughput"]).all()
    assert runs["tcp_product_fairness"].between(0, 1).all()
    assert (runs["bottleneck_drops"] <= runs["packets_lost"]).all()
    report = (out / "report.md").read_text()
    assert "proportional-fair utility" in report
    assert (out / "tcp_queueing_delay_ms-cdf.png").exists()
