"""E5 (sim/experiments/e5.yaml): the quick size end to end (every path and
traffic measured, the streams at their share of the bulk goodput, the LTE
path's trace found from the base topology's folder, the report's findings the
data's, the bag plot and series written), the metrics on hand-made tables, the
bag plot's hull, and a bag without x refused in one line. No root."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import matplotlib
import pandas as pd
from ratelab_exp.metrics import METRICS, RunData
from ratelab_exp.metrics_e5 import PATHS, TRAFFIC
from ratelab_exp.report import _bag, _hull

matplotlib.use("Agg")

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
EXP = ROOT / "sim" / "experiments"
BASE_RTT_MS = {"p3m": 60.0, "hspa": 70.0, "lte": 40.0}  # e5_paths.yaml
STREAM_KBIT = {  # e5_paths.yaml's stream rates
    "p3m-st50": 1295,
    "p3m-st25": 648,
    "hspa-st50": 2581,
    "hspa-st25": 1291,
    "lte-st50": 5745,
    "lte-st25": 2873,
}


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "ratelab-exp"), *args], capture_output=True, text=True, cwd=ROOT, timeout=600
    )


def test_e5_quick(tmp_path: Path) -> None:
    out = tmp_path / "e5"
    proc = _run("run", str(EXP / "e5.yaml"), "--quick", "--workers", "2", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    runs = pd.read_parquet(out / "runs.parquet")
    assert len(runs) == 12 and (runs["status"] == "ok").all()  # 2 buffers x 2 seeds x 3 CCs
    flows = pd.read_parquet(out / "flows.parquet")
    assert flows.groupby("run_id")["flow"].count().eq(24).all()  # 12 downloads, 12 UDP
    tcp = flows[flows["transport"].str.startswith("tcp")].copy()
    tcp["cc"] = tcp["transport"].str.removeprefix("tcp/")
    assert (tcp["cc"].to_numpy() == runs.set_index("run_id").loc[tcp["run_id"], "transport"]).all()
    for path in PATHS:
        for traffic in TRAFFIC:
            flow = f"{path}-{traffic}"
            mine = tcp[tcp["flow"] == flow].set_index("run_id").loc[runs["run_id"]]
            goodput = runs[f"e5_goodput_{path}_{traffic}"].to_numpy()
            # KB/s: the simulator's bit/s over 8,000
            assert (abs(goodput - mine["goodput_bps"].to_numpy() / 8000) < 1e-6).all(), flow
            assert (goodput > 0).all(), flow
            owd = runs[f"e5_owd_{path}_{traffic}"]
            assert (owd >= BASE_RTT_MS[path] / 2).all(), flow
            rtt = runs[f"e5_rtt_{path}_{traffic}"]
            assert (rtt >= BASE_RTT_MS[path]).all(), flow
            changes = runs[f"e5_ssthresh_{path}_{traffic}"].to_numpy()
            assert (changes == mine["tcp_ssthresh_changes"].to_numpy()).all(), flow
            if flow in STREAM_KBIT:  # an application-limited stream gets its rate
                assert (abs(goodput / (STREAM_KBIT[flow] / 8) - 1) < 0.05).all(), flow
        for traffic, share in (("st50", 50), ("st25", 25)):
            got = runs[f"e5_share_{path}_{traffic}"]
            assert got.between(share * 0.85, share * 1.15).all(), (path, got.tolist())
    # unlimited buffers: nothing is lost, so no download ever retransmits
    unlimited = runs[runs["case"].str.contains("queue_limit=4000")]["run_id"]
    assert len(unlimited) == 6
    assert tcp[tcp["run_id"].isin(unlimited)]["tcp_retransmissions"].eq(0).all()
    limited = runs[runs["case"].str.contains("queue_limit=5xBDP")]
    medians = limited.groupby("transport")["e5_rtt_p3m_bulk"].median()
    report = (out / "report.md").read_text()
    assert f"lowest median RTT, 3 Mbit/s path, bulk: {medians.idxmin()} " in report
    assert medians.idxmin() == "vegas"  # the delay-based one keeps the 5 x BDP queue empty
    for name in ("e5_goodput_p3m_bulk-box", "e5_rtt_lte_st50-bag", "series-cwnd"):
        assert (out / f"{name}.png").exists() and (out / f"{name}.pdf").exists(), name
    assert "RTT, LTE path, stream 50 % against one-way delay" in report


def _data(flows: list[dict[str, object]], srtt: dict[str, float]) -> RunData:
    empty = pd.DataFrame()
    means = pd.DataFrame({"cwnd": dict.fromkeys(srtt, 10.0), "srtt_ms": srtt})
    return RunData(pd.DataFrame(flows), empty, pd.Series(dtype=float), means, empty, empty, {}, {})


def test_e5_metrics_on_tables() -> None:
    flow = {
        "transport": "tcp/reno",
        "tcp_ssthresh_changes": 4,
        "one_way_delay_mean_ns": 35e6,
        "bytes_received": 1000,
    }
    d = _data(
        [
            {**flow, "flow": "p3m-bulk", "goodput_bps": 2.4e6},
            {**flow, "flow": "p3m-st50", "goodput_bps": 1.2e6},
            {**flow, "flow": "p3m-st25", "goodput_bps": 0.6e6, "bytes_received": 0},
        ],
        {"p3m-bulk": 250.0, "p3m-st50": 61.5},
    )
    assert METRICS["e5_goodput_p3m_bulk"].compute(d) == 300.0  # 2.4 Mbit/s = 300 KB/s
    assert METRICS["e5_rtt_p3m_st50"].compute(d) == 61.5
    assert METRICS["e5_owd_p3m_bulk"].compute(d) == 35.0
    assert METRICS["e5_ssthresh_p3m_bulk"].compute(d) == 4.0
    assert METRICS["e5_share_p3m_st50"].compute(d) == 50.0
    assert METRICS["e5_share_p3m_st25"].compute(d) == 25.0
    assert math.isnan(METRICS["e5_owd_p3m_st25"].compute(d))  # nothing received
    assert math.isnan(METRICS["e5_rtt_p3m_st25"].compute(d))  # no sRTT sample
    for key in ("goodput", "rtt", "owd", "ssthresh"):  # a flow the run does not have
        assert math.isnan(METRICS[f"e5_{key}_lte_bulk"].compute(d)), key
    assert math.isnan(METRICS["e5_share_lte_st50"].compute(d))
    assert METRICS["e5_goodput_hspa_onof"].title == "goodput, HSPA path, on-off"
    assert METRICS["e5_rtt_hspa_onof"].better == "lower"


def test_hull_and_bag() -> None:
    square = [(0.0, 0.0), (2.0, 0.0), (2.0, 2.0), (0.0, 2.0)]
    assert sorted(_hull([*square, (1.0, 1.0), (1.0, 0.0)])) == sorted(square)
    assert _hull([(1.0, 1.0), (1.0, 1.0)]) == [(1.0, 1.0)]
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    # six points near (0, 0) and six far out: the bag is the near half's hull
    near = [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0), (0.5, 0.0), (0.0, 0.5)]
    far = [(-9.0, -9.0), (9.0, -9.0), (9.0, 9.0), (-9.0, 9.0), (8.0, 8.0), (-8.0, 8.0)]
    xs = pd.Series([p[0] for p in near + far])
    ys = pd.Series([p[1] for p in near + far])
    _bag(ax, xs, ys, "tab:blue")
    polygons = [p for p in ax.patches if hasattr(p, "get_xy")]
    assert len(polygons) == 1
    corners = {(round(x, 6), round(y, 6)) for x, y in polygons[0].get_xy()}
    assert corners == {(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)}
    median = ax.collections[-1].get_offsets()[0]
    assert tuple(median) == (0.25, 0.75)  # the coordinates' medians
    plt.close(fig)


def test_bag_needs_x(tmp_path: Path) -> None:
    text = (EXP / "e5.yaml").read_text()
    bad = text.replace(
        "  - {metric: e5_rtt_p3m_bulk, x: e5_owd_p3m_bulk, kinds: [bag]}",
        "  - {metric: e5_rtt_p3m_bulk, kinds: [bag]}",
    )
    assert bad != text
    path = tmp_path / "e5.yaml"
    path.write_text(bad)
    (tmp_path / "e5_paths.yaml").write_text((EXP / "e5_paths.yaml").read_text())
    out = tmp_path / "out"
    proc = _run("run", str(path), "--out", str(out))
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "figures[" in lines[0] and "].x: a scatter needs x" in lines[0]
    assert "as a bag does" in lines[0] and not out.exists()
