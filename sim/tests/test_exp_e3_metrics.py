"""E3's catalogue (metrics_e3.py) on hand-made tables whose answers are
worked out by hand, n/a where the data cannot give one, and E3 --quick with
the new metrics in its report. No root."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pandas as pd
from ratelab_exp.metrics import METRICS, RunData, flow_means
from ratelab_exp.runner import _samples

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
    means = pd.DataFrame(
        {
            "cwnd": {"t1": 10.0, "t2": 10.0},
            "srtt_ms": {"t1": 45.0, "t2": 35.0},
            "in_flight": {"t1": 30_000.0, "t2": 10_000.0},
            "in_flight_cov": {"t1": 0.2, "t2": 0.4},
            "delivery_bps": {"t1": 4e6, "t2": 1e6},
            "delivery_cov": {"t1": 0.1, "t2": 0.3},
        }
    )
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
            # t1: 2 recoveries of 30 and 50 ms; t2: 1 of 100 ms; u1: none (UDP)
            _flow("t1", "a", "tcp/reno", 4.0, tcp_recoveries_ended=2, tcp_recovery_ns=80e6),
            _flow(
                "t2",
                "b",
                "tcp/reno",
                1.0,
                one_way_delay_mean_ns=40e6,
                tcp_recoveries_ended=1,
                tcp_recovery_ns=100e6,
            ),
            _flow("u1", "c", "udp/cbr", 2.0, tcp_recoveries_ended=None, tcp_recovery_ns=None),
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
    # from the flow samples' means (flow_means): in flight, its CoV, delivery rate
    assert math.isclose(_value("tcp_mean_in_flight", d), 20_000)
    assert math.isclose(_value("tcp_in_flight_cov", d), 0.3)
    assert math.isclose(_value("tcp_delivery_rate", d), 2.5e6)
    assert math.isclose(_value("tcp_throughput_cov", d), 0.2)
    assert math.isclose(_value("net_in_flight", d), 40_000)
    assert math.isclose(_value("tcp_recovery_ms", d), (40 + 100) / 2)
    # the BDP: 10 Mbit/s x 30 ms (each flow's smallest RTT) = 37,500 bytes
    assert math.isclose(_value("tcp_bdp_utilisation_pct", d), (80 + 100 * 10 / 37.5) / 2)
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
    # samples without in_flight and delivered (Mininet's): the columns are NaN
    kernel = _data([_flow("t1", "a", "tcp/reno", 4.0)])
    kernel.flow_means = flow_means([_sample("t1", 0, 10)], 10**9)
    in_flight = ("tcp_mean_in_flight", "tcp_in_flight_cov", "tcp_bdp_utilisation_pct")
    for name in (*in_flight, "tcp_delivery_rate", "tcp_throughput_cov", "net_in_flight"):
        assert math.isnan(_value(name, udp_only)), name
        assert math.isnan(_value(name, kernel)), name
    # recovery time: a flow that never recovered is left out; none, or no column: n/a
    calm = {"tcp_recoveries_ended": 0, "tcp_recovery_ns": 0}
    one = _data(
        [
            _flow("t1", "a", "tcp/reno", 4.0, **calm),
            _flow("t2", "b", "tcp/reno", 1.0, tcp_recoveries_ended=4, tcp_recovery_ns=200e6),
        ]
    )
    assert math.isclose(_value("tcp_recovery_ms", one), 50.0)
    both_calm = _data([_flow("t1", "a", "tcp/reno", 4.0, **calm)])
    assert math.isnan(_value("tcp_recovery_ms", both_calm))
    assert math.isnan(_value("tcp_recovery_ms", kernel))
    # a TCP flow never sampled: the network's sum is unknown
    unsampled = _data([_flow("t1", "a", "tcp/reno", 4.0), _flow("t3", "b", "tcp/reno", 1.0)])
    assert math.isnan(_value("net_in_flight", unsampled))


def _sample(flow: str, time_ms: int, cwnd: int | None, **extra: object) -> dict[str, object]:
    return {"time_ns": time_ms * 10**6, "flow": flow, "cwnd": cwnd, "srtt_ns": 40e6, **extra}


def test_app_send_rate_by_hand() -> None:
    """The bytes each TCP application wrote over its time writing."""
    d = _data(
        [
            _flow("t1", "a", "tcp/reno", 4.0, tcp_bytes_written=2_000_000),  # 16 Mbit in 4 s
            _flow("t2", "b", "tcp/reno", 1.0, tcp_bytes_written=5_000_000),  # 40 Mbit in 10 s
            _flow("u1", "c", "udp/cbr", 2.0, tcp_bytes_written=None),
        ]
    )
    d.topology = {
        **TOPOLOGY,
        "flows": [
            {"name": "t1", "start": "2s", "stop": "6s"},
            {"name": "t2"},  # from 0 to the traffic's end, 10 s
            {"name": "u1", "start": "1s"},
        ],
    }
    assert math.isclose(_value("tcp_app_send_rate", d), (4e6 + 4e6) / 2)
    # a stop past the traffic's end counts to the end
    d.topology["flows"][0]["stop"] = "20s"
    assert math.isclose(_value("tcp_app_send_rate", d), (16e6 / 8 + 4e6) / 2)
    # no written bytes (Mininet's flows) or no TCP flow: n/a
    assert math.isnan(_value("tcp_app_send_rate", _data([_flow("t1", "a", "tcp/reno", 4.0)])))
    assert math.isnan(_value("tcp_app_send_rate", _data([_flow("u1", "c", "udp/cbr", 2.0)])))


def test_app_rate_series_from_written() -> None:
    raw = [
        {**_sample("t1", 0, 10), "written": 0},
        {**_sample("t1", 100, 10), "written": 50_000},
        {**_sample("t1", 300, 10), "written": 75_000},
        _sample("t2", 300, 10),  # no written bytes (Mininet's samples)
    ]
    rows = _samples(raw, ["app_rate_mbps"])
    # none before the first interval; 50,000 bytes in 0.1 s, then 25,000 in 0.2 s
    assert [r["app_rate_mbps"] for r in rows] == [None, 4.0, 1.0, None]


def test_flow_means_of_in_flight_and_delivery_by_hand() -> None:
    samples = [
        _sample("t1", 0, 10, in_flight=1000, delivered=0),
        _sample("t2", 0, 4),  # no in_flight or delivered (Mininet's samples)
        _sample("r", 0, None, in_flight=None, delivered=None),  # RBCC: not TCP
        _sample("t1", 100, 10, in_flight=3000, delivered=12_500),
        _sample("t1", 200, 10, in_flight=2000, delivered=37_500),
        _sample("t1", 300, 99, in_flight=99_999, delivered=99_999),  # after the traffic
    ]
    means = flow_means(samples, 200 * 10**6)
    assert list(means.index) == ["t1", "t2"]
    t1 = means.loc["t1"]
    assert (t1["cwnd"], t1["srtt_ms"], t1["in_flight"]) == (10, 40, 2000)
    # 1000, 3000, 2000 bytes: population standard deviation sqrt(2/3) x 1000
    assert math.isclose(t1["in_flight_cov"], math.sqrt(2 / 3) * 1000 / 2000)
    # 12,500 then 25,000 bytes acked in 0.1 s: 1 and 2 Mbit/s
    assert math.isclose(t1["delivery_bps"], 1.5e6)
    assert math.isclose(t1["delivery_cov"], 0.5 / 1.5)
    t2 = means.loc["t2"]
    assert t2["cwnd"] == 4
    assert all(math.isnan(t2[c]) for c in ("in_flight", "in_flight_cov", "delivery_bps"))


def test_throughput_series_from_delivered() -> None:
    raw = [
        {**_sample("t1", 0, 10), "in_flight": 0, "delivered": 0},
        {**_sample("t1", 100, 10), "in_flight": 5000, "delivered": 25_000},
        {**_sample("t1", 300, 10), "in_flight": 4000, "delivered": 50_000},
    ]
    rows = _samples(raw, ["in_flight", "throughput_mbps"])
    assert [r["in_flight"] for r in rows] == [0, 5000, 4000]
    # none before the first interval; 25,000 bytes in 0.1 s, then in 0.2 s
    assert [r["throughput_mbps"] for r in rows] == [None, 2.0, 1.0]


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
    # the flows' acked bytes over the traffic's 3 s (slow start included) give
    # a little less than their goodput (first to last byte read, the sender's
    # backlog draining after the stop at full speed); a flow keeps its share
    # of the BDP and more in flight (the FIFO stands)
    rate = runs["tcp_delivery_rate"] / runs["tcp_mean_throughput"]
    assert rate.between(0.7, 1.0).all(), rate
    assert runs["tcp_bdp_utilisation_pct"].gt(100 / 6).all()
    assert runs["tcp_throughput_cov"].gt(0).all() and runs["tcp_in_flight_cov"].gt(0).all()
    assert (runs["net_in_flight"] - 3 * runs["tcp_mean_in_flight"]).abs().lt(1e-6).all()
    # a recovery waits at least the 15 ms RTT for its retransmission's ACK
    assert runs["tcp_recovery_ms"].between(15, 1000).all(), runs["tcp_recovery_ms"]
    report = (out / "report.md").read_text()
    assert "proportional-fair utility" in report
    assert (out / "tcp_queueing_delay_ms-cdf.png").exists()
    # each application offers 16 Mbit/s; its connection takes what its send
    # buffer has room for: about what the flow delivers, never above the offer
    app = runs["tcp_app_send_rate"]
    assert app.between(runs["tcp_delivery_rate"], 16.2e6).all(), app
    for series in ("in_flight", "throughput_mbps", "app_rate_mbps"):
        assert (out / f"series-{series}.png").exists(), series
