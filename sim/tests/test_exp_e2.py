"""E2 (sim/experiments/e2.yaml): the generator's network and bursts, E2's
metrics on hand-made tables, its findings in the study's terms on a
hand-made runs table, bad setups, and the quick size end to end."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from ratelab_exp.generators import GENERATORS
from ratelab_exp.generators_e2 import SETUPS, later_start_s
from ratelab_exp.metrics import METRICS, RunData
from ratelab_exp.report_e2 import findings
from ratelab_exp.spec import load_experiment
from ratelab_net.routers import plan_routers
from ratelab_net.sim_api import _topologies

BIN = Path(sys.executable).parent
EXP = Path(__file__).resolve().parents[2] / "sim" / "experiments"


def _make(seed: int = 1, **params: Any) -> dict[str, Any]:
    return GENERATORS["e2"].make(params, seed).topology


def _bottleneck(topology: dict[str, Any]) -> Any:
    """The router's port toward the mobile host, as the controller configures it."""
    (_, topo), *_ = _topologies(topology, None, [])
    (plan,) = plan_routers(topo)
    return {p.port: p for p in plan.config.router.ports}[2]


@pytest.mark.parametrize(
    ("setup", "rate", "limit", "aqm"),
    [
        ("edge-bdp", 160_000, 7, "fifo"),  # 160 kbit/s x 2 x 250 ms: 6.7 packets
        ("edge-2xbdp", 160_000, 14, "fifo"),
        ("edge-50", 160_000, 50, "fifo"),
        ("edge-red", 160_000, 14, "red"),  # red-edge: 2 x BDP
        ("edge-redok", 160_000, 50, "red"),
        ("hspa-bdp", 2_000_000, 24, "fifo"),
        ("hspa-redok", 2_000_000, 100, "red"),
        ("lte-2xbdp", 50_000_000, 250, "fifo"),
        ("lte-red", 50_000_000, 250, "red"),
        ("lte-redok", 50_000_000, 400, "red"),
    ],
)
def test_bottleneck_of_each_setup(setup: str, rate: int, limit: int, aqm: str) -> None:
    port = _bottleneck(_make(setup=setup))
    assert (port.rate_bps, port.queue_limit, port.aqm.mode) == (rate, limit, aqm)


def test_setups_are_the_studys() -> None:
    assert len(SETUPS) == 13 and "edge-50" in SETUPS and "hspa-50" not in SETUPS


def test_bursts() -> None:
    topo = _make(setup="edge-bdp", flows=18)
    first = [f for f in topo["flows"] if f["name"].startswith("a")]
    later = [f for f in topo["flows"] if f["name"].startswith("b")]
    assert len(first) == len(later) == 18
    assert all(f["bytes"] == 10_000 for f in first)
    assert sum(f["bytes"] for f in first) == sum(f["bytes"] for f in later) == 180_000
    assert {(f["stack"], f["cc"], f["sack"]) for f in topo["flows"]} == {
        ("ratelab", "newreno", True)
    }
    # one round trip (2 x 261 ms) plus half of 180 kB at 160 kbit/s
    assert later_start_s({"setup": "edge-bdp", "later_fraction": 0.5, "total_bytes": 180_000,
                          "sender_delay_ms": 11}) == pytest.approx(0.522 + 4.5)  # fmt: skip
    packet_s = 1500 * 8 / 160_000  # the jitter: one packet time of the link
    starts = [float(f["start"][:-1]) for f in first]
    assert all(0 <= s < packet_s for s in starts) and len(set(starts)) > 1
    assert all(5.022 <= float(f["start"][:-1]) < 5.022 + packet_s for f in later)
    # the seed draws the starts: the same seed the same network
    assert _make(1, setup="edge-bdp", flows=18) == topo
    assert _make(2, setup="edge-bdp", flows=18) != topo
    uneven = _make(setup="lte-bdp", flows=7)["flows"][:7]
    assert [f["bytes"] for f in uneven] == [25_715] * 2 + [25_714] * 5


def _data(
    flows: list[tuple[str, float, float | None, int, int]],
    owd: list[tuple[int, float, float]] | None = None,
) -> RunData:
    """(name, start s, completion s or None, bytes received, spurious RTOs) per
    flow, and (packets, mean ms, max ms) of its one-way delays."""
    owd = owd or [(0, math.nan, math.nan)] * len(flows)
    table = pd.DataFrame(
        {
            "flow": [f[0] for f in flows],
            "transport": "tcp/newreno",
            "completion_s": pd.array([f[2] for f in flows], dtype="Float64"),
            "bytes_received": [f[3] for f in flows],
            "tcp_spurious_rtos": pd.array([f[4] for f in flows], dtype="Int64"),
            "owd_packets": pd.array([o[0] or None for o in owd], dtype="Int64"),
            "owd_mean_ms": pd.array([o[1] for o in owd], dtype="Float64"),
            "owd_max_ms": pd.array([o[2] for o in owd], dtype="Float64"),
        }
    )
    topology = {"flows": [{"name": f[0], "start": f"{f[1]}s"} for f in flows]}
    empty = pd.DataFrame()
    return RunData(table, empty, pd.Series(dtype=float), empty, empty, empty, topology, {})


def test_metrics() -> None:
    d = _data(
        [
            ("a1", 0.01, 2.0, 90_000, 1),
            ("a2", 0.0, 1.5, 90_000, 0),
            ("b1", 5.0, 3.0, 90_000, 2),
            ("b2", 5.02, 4.0, 90_000, 0),
        ]
    )
    # from the first SYN to the last byte: a1 ends at 2.01, b2 at 9.02
    assert METRICS["e2_first_burst_s"].compute(d) == pytest.approx(2.01)
    assert METRICS["e2_later_burst_s"].compute(d) == pytest.approx(4.02)
    rates = [180_000 / 2.01, 180_000 / 4.02]
    jain = sum(rates) ** 2 / (2 * sum(r * r for r in rates))
    assert METRICS["e2_burst_jain"].compute(d) == pytest.approx(jain)
    assert METRICS["tcp_spurious_rtos"].compute(d) == 3
    assert METRICS["e2_incomplete"].compute(d) == 0
    assert math.isnan(METRICS["e2_owd_mean_ms"].compute(d))  # no packet delays recorded
    owd = [(10, 400.0, 700.0), (30, 600.0, 900.0), (0, math.nan, math.nan)]
    three = [("a1", 0.0, 2.0, 90_000, 0), ("a2", 0.0, 2.0, 90_000, 0), ("b1", 5.0, 2.0, 1, 0)]
    # the mean over the packets: 10 at 400 ms, 30 at 600 ms
    assert METRICS["e2_owd_mean_ms"].compute(_data(three, owd)) == pytest.approx(550.0)
    assert METRICS["e2_owd_max_ms"].compute(_data(three, owd)) == 900.0
    cut = _data([("a1", 0.0, 2.0, 90_000, 0), ("b1", 5.0, None, 1_000, 0)])
    assert math.isnan(METRICS["e2_later_burst_s"].compute(cut))
    assert math.isnan(METRICS["e2_burst_jain"].compute(cut))
    assert METRICS["e2_incomplete"].compute(cut) == 1
    assert METRICS["e2_first_burst_s"].compute(cut) == 2.0


def _runs(times: dict[tuple[str, str, int], list[float]]) -> pd.DataFrame:
    """A runs table: (setup, transport, flows) -> first-burst times (the later
    burst 1 s longer each), RTOs 2 per run, 1 spurious for the IRTO1 ones."""
    rows = []
    for (setup, transport, n), values in times.items():
        for i, v in enumerate(values):
            rows.append(
                {
                    "case": f"{setup}-{n}",
                    "transport": transport,
                    "replication": i,
                    "status": "ok",
                    "param.generator.setup": setup,
                    "param.generator.flows": str(n),
                    "e2_first_burst_s": v,
                    "e2_later_burst_s": v + 1,
                    "tcp_rtos": 2.0,
                    "tcp_spurious_rtos": 1.0 if transport.endswith("rto1") else 0.0,
                    "e2_burst_jain": 0.9,
                    "e2_owd_mean_ms": 300.0 if transport.startswith("iw10") else 200.0,
                    "e2_incomplete": 0.0,
                }
            )
    return pd.DataFrame(rows)


def test_findings_in_the_studys_terms() -> None:
    exp = load_experiment(EXP / "e2.yaml")
    times = {}
    for setup, n in (("edge-bdp", 6), ("lte-red", 6), ("lte-red", 18)):
        times[(setup, "iw3-rto3", n)] = [10.0, 12.0]
        times[(setup, "iw3-rto1", n)] = [10.0, 12.0]  # IRTO1 the same as IRTO3
        times[(setup, "iw10-rto3", n)] = [8.0, 8.0]  # IW10 faster ...
        times[(setup, "iw10-rto1", n)] = [8.0, 8.0]
    times[("edge-bdp", "iw10-rto1", 6)] = [22.0, 22.0]  # ... except here, and slower
    found = findings(exp, _runs(times))
    first = next(line for line in found if line.startswith("IW10 vs IW3") and "first" in line)
    # 3 cases x 2 initial RTOs: faster in 5, slower in 1
    assert "IW10 finished faster in 5 of 6 cases, slower in 1, the same in 0" in first
    assert "largest loss edge-bdp, 6 flows (iw10-rto1 vs iw3-rto1): 11 s -> 22 s" in first
    rto = next(line for line in found if line.startswith("IRTO1 vs IRTO3") and "first" in line)
    assert "IRTO1 finished faster in 0 of 6 cases, slower in 1, the same in 5" in rto
    assert "largest loss edge-bdp, 6 flows (iw10-rto1 vs iw10-rto3): 8 s -> 22 s" in rto
    rtos = next(line for line in found if line.startswith("RTOs:"))
    assert "iw3-rto1 2 RTOs per run, 6 spurious in 6 runs, 50 % of them" in rtos
    assert "iw3-rto3 2 RTOs per run, 0 spurious in 6 runs" in rtos
    assert "every flow of every run delivered its whole transfer" in found
    assert (
        "one-way delay on EDGE (median of the runs' mean per packet, ms): by queue bdp 250; "
        "by transport iw3-rto3 200, iw3-rto1 200, iw10-rto3 300, iw10-rto1 300"
    ) in found


def test_bad_setup_is_one_line_and_runs_nothing(tmp_path: Path) -> None:
    text = (EXP / "e2.yaml").read_text()
    bad = tmp_path / "e2.yaml"
    bad.write_text(text.replace("    - hspa-bdp\n", "    - hspa-50\n"))
    out = tmp_path / "out"
    proc = subprocess.run(
        [str(BIN / "ratelab-exp"), "run", str(bad), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 2, proc.stderr
    line = proc.stderr.strip()
    assert "\n" not in line and "generator.setup: expected one of edge-bdp, " in line
    assert "got 'hspa-50'" in line and not out.exists()


def test_e2_quick(tmp_path: Path) -> None:
    out = tmp_path / "e2"
    proc = subprocess.run(
        [str(BIN / "ratelab-exp"), "run", str(EXP / "e2.yaml"), "--quick", "--workers", "2",
         "--out", str(out)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    runs = pd.read_parquet(out / "runs.parquet")
    assert len(runs) == 4 * 2 * 4 and (runs["status"] == "ok").all()
    assert (runs["e2_incomplete"] == 0).all()
    # 180 kB need at least its serialisation time: 9 s on EDGE, 29 ms on LTE
    edge = runs["param.generator.setup"].str.startswith("edge")
    for burst in ("e2_first_burst_s", "e2_later_burst_s"):
        assert runs[edge][burst].gt(9).all() and runs[~edge][burst].gt(0.029).all()
    assert runs["e2_burst_jain"].between(0.5, 1).all()
    assert (runs["tcp_spurious_rtos"] <= runs["tcp_rtos"]).all()
    # no packet crosses faster than the path: 11 ms + the link's delay + one
    # 1,514-byte serialisation at its rate (EDGE 250 + 75.7 ms, LTE 15 + 0.24)
    fastest = {"edge": 11 + 250 + 75.7, "lte": 11 + 15 + 0.24}
    for link, floor in fastest.items():
        mine = runs[runs["param.generator.setup"].str.startswith(link)]
        assert mine["e2_owd_mean_ms"].gt(floor).all()
        assert (mine["e2_owd_max_ms"] >= mine["e2_owd_mean_ms"]).all()
    flows = pd.read_parquet(out / "flows.parquet")
    assert flows.groupby("run_id")["bytes_received"].sum().eq(360_000).all()
    # the report's IW10 vs IW3 count, recomputed from the runs
    medians = runs.groupby(["case", "transport"])["e2_first_burst_s"].median().unstack()
    faster = sum((medians[f"iw10-rto{r}"] < medians[f"iw3-rto{r}"]).sum() for r in ("1", "3"))
    report = (out / "report.md").read_text()
    assert (
        f"- IW10 vs IW3 (same initial RTO), first burst: IW10 finished faster in {faster} of 8 "
        in report
    )
    for png in ("e2-bursts-edge", "e2-bursts-lte", "e2-rtos", "e2-owd"):
        assert (out / f"{png}.png").exists() and (out / f"{png}.pdf").exists()
