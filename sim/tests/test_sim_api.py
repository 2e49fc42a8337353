"""ratelab_net.simulate (sim_api.py): a topology (file or dict) in the simulator, results as
pandas DataFrames, CSV and Parquet files, deterministic."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import ratelab_net
from ratelab_ctl.configfile import ConfigError
from ratelab_net.sim_api import Results
from ratelab_sim.build import ROOT


def _three_routers() -> dict[str, Any]:
    """Like the three-router example, as a dict."""
    return {
        "duration": "6s",
        "routers": {
            "r1": {"router_id": "10.0.0.1"},
            "r2": {"router_id": "10.0.0.2"},
            "r3": {"router_id": "10.0.0.3"},
        },
        "hosts": ["src1", "src2", "dst"],
        "links": [
            {"ends": ["src1", "r1"], "rate": "100mbit", "delay": "1ms"},
            {"ends": ["src2", "r1"], "rate": "100mbit", "delay": "1ms"},
            {"ends": ["r1", "r2"], "rate": "20mbit", "delay": "5ms", "queue_limit": 100},
            {
                "ends": ["r2", "r3"],
                "rate": "8mbit",
                "delay": "10ms",
                "queue_limit": "2xBDP",
                "utilisation": 0.9,
                "aqm": "red-hspa",
            },
            {"ends": ["r3", "dst"], "rate": "100mbit", "delay": "1ms"},
        ],
        "flows": [
            {"name": "rbcc1", "from": "src1", "to": "dst", "transport": "rbcc", "rate": "8mbit"},
            {"name": "reno", "from": "src2", "to": "dst", "transport": "tcp", "cc": "reno"},
            {
                "name": "udp",
                "from": "src2",
                "to": "dst",
                "transport": "udp",
                "rate": "1mbit",
                "start": "1s",
                "stop": "3s",
            },
        ],
    }


@pytest.fixture(scope="module")
def results() -> Results:
    return ratelab_net.simulate(_three_routers(), seed=1)


def test_dataframes_columns_and_values(results: Results) -> None:
    flows = results.flows.set_index("flow")
    assert list(flows.index) == ["rbcc1", "reno", "udp"]
    for col in ("from", "to", "transport", "goodput_bps", "tcp_cwnd", "udp_lost", "rbcc_rate"):
        assert col in flows.columns
    assert flows.loc["reno", "transport"] == "tcp/reno"
    assert flows.loc["reno", "tcp_bytes_acked"] > 0
    assert pd.isna(flows.loc["reno", "udp_sent"])
    # r2 hands the RBCC flow its share of 90 % of 8 Mbit/s (it shares with nobody)
    assert flows.loc["rbcc1", "rbcc_rate"] == 900_000
    assert flows.loc["udp", "udp_received"] > 0

    assert list(results.ports.columns) == [
        "node", "port", "rx_packets", "rx_bytes", "tx_packets", "tx_bytes",
    ]  # fmt: skip
    assert set(results.ports["node"]) == {"r1", "r2", "r3", "src1", "src2", "dst"}

    samples = results.samples
    assert list(samples.columns) == [
        "time_s", "flow", "cwnd", "ssthresh", "srtt_ms", "rate", "return_rate", "bottle_node",
        "in_flight", "delivered", "written",
    ]  # fmt: skip
    reno = samples[samples["flow"] == "reno"]
    assert len(reno) == 71  # every 0.1 s of 6 s + 1 s drain, from its start at 0
    assert reno["cwnd"].min() >= 1 and reno["srtt_ms"].max() > 30
    # bytes acked only grow, to the sender's total, with bytes in flight on the way
    assert reno["delivered"].is_monotonic_increasing
    assert reno["delivered"].iloc[-1] == flows.loc["reno", "tcp_bytes_acked"]
    assert reno["in_flight"].max() > 0
    # the application's bytes: ahead of the acked ones, to the stack's total
    assert reno["written"].is_monotonic_increasing
    assert (reno["written"] >= reno["delivered"]).all()
    assert reno["written"].iloc[-1] == flows.loc["reno", "tcp_bytes_written"] > 0
    assert flows.loc["reno", "tcp_bytes_written"] >= flows.loc["reno", "tcp_bytes_acked"]
    assert samples[samples["flow"] == "rbcc1"]["in_flight"].isna().all()
    rbcc = samples[samples["flow"] == "rbcc1"]
    assert (rbcc["return_rate"].dropna() == 900_000).any()
    assert (rbcc["bottle_node"] == 0x0A000002).any()  # set by r2

    queues = results.queues
    assert list(queues.columns) == [
        "time_s", "router", "port", "queue_packets", "queue_length", "last_q", "last_avg",
    ]  # fmt: skip
    assert (queues["queue_packets"] == queues["queue_length"]).all()

    assert list(results.drops.columns) == ["node", "port", "cause", "packets"]
    assert list(results.counters.columns) == ["router", "port", "counter", "packets", "bytes"]
    abt = results.counters[(results.counters["router"] == "r2")]
    assert "abt_hits" in set(abt["counter"])


def test_files_are_byte_identical_for_the_same_seed(tmp_path: Path, results: Results) -> None:
    again = ratelab_net.simulate(_three_routers(), seed=1)
    for writer in ("to_csv", "to_parquet"):
        a = getattr(results, writer)(tmp_path / f"a_{writer}")
        b = getattr(again, writer)(tmp_path / f"b_{writer}")
        assert [p.name for p in a] == [p.name for p in b]
        assert len(a) == 7
        for x, y in zip(a, b, strict=True):
            assert x.read_bytes() == y.read_bytes(), x.name
    back = pd.read_parquet(tmp_path / "a_to_parquet" / "flows.parquet")
    assert list(back["flow"]) == ["rbcc1", "reno", "udp"]
    assert (tmp_path / "a_to_csv" / "samples.csv").read_text().startswith("time_s,flow,cwnd,")


def test_example_file_with_ping_and_variants() -> None:
    res = ratelab_net.simulate(ROOT / "sim" / "examples" / "three_routers.yaml")
    flows = res.flows.set_index("flow")
    # a request every 0.2 s for 15 s; RED at the bottleneck drops a few (6 with
    # the kernel Reno flow simulated as Linux's, whose PRR keeps more in flight)
    assert flows.loc["ping", "ping_sent"] == 75
    assert 65 <= flows.loc["ping", "ping_received"] == len(res.pings)
    assert list(res.pings.columns) == ["flow", "seq", "sent_s", "rtt_ms"]
    assert res.pings["seq"].is_monotonic_increasing and res.pings["seq"].max() <= 74
    assert res.pings["rtt_ms"].min() > 2 * (1 + 5 + 10 + 1)  # the path's delays
    dumbbell = ROOT / "sim" / "examples" / "dumbbell.yaml"
    with pytest.raises(ConfigError, match=r"variants .*pass variant="):
        ratelab_net.simulate(dumbbell)
    with pytest.raises(ConfigError, match="no variant 'nope'"):
        ratelab_net.simulate(dumbbell, variant="nope")


def test_dict_sets_and_bad_input() -> None:
    topo = _three_routers()
    slow = ratelab_net.simulate(topo, seed=1, sets=["links[3].rate=2mbit"])
    # the bottleneck at 2 Mbit/s: r2 hands out 90 % of it
    assert slow.flows.set_index("flow").loc["rbcc1", "rbcc_rate"] == 225_000
    topo["flows"][1]["cc"] = "bbr"  # this kernel's or not, never the simulator's
    with pytest.raises(ConfigError, match=r"^<dict>:\d+:\d+: error: flows\[1\]\.cc: 'bbr' is "):
        ratelab_net.simulate(topo)
