"""ratelab-exp (sim/ratelab_exp): experiment files checked before anything
runs, a sweep on an embedded LocalCluster, resuming after a kill, a failing
run recorded without stopping the sweep, a Dask cluster started by hand, and
E1's quick size with its report. No root: the simulator runs everything."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from ratelab_exp.overrides import apply

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
EXP = ROOT / "sim" / "experiments"

# A small dumbbell: one TCP flow for 2 s, a CBR UDP flow beside it.
TOPOLOGY = """\
duration: 2s
poll_interval: 0.1s
routers: {r1: {}}
hosts: [a, b]
links:
  - {ends: [a, r1], rate: 100mbit, delay: 1ms}
  - {ends: [r1, b], rate: 5mbit, delay: 5ms, queue_limit: 30}
flows:
  - {name: bulk, from: a, to: b, transport: tcp, stack: ratelab, cc: reno}
  - {name: cbr, from: a, to: b, transport: udp, rate: 1mbit}
"""

EXPERIMENT = """\
name: tiny
base: topology.yaml
sweep:
  links[1].queue_limit: [10, 40]
replications: 2
seed: 3
transports:
  reno:
    flows[0].cc: reno
  cubic:
    flows[0].cc: cubic
metrics: [avg_queue, packets_lost, tcp_mean_throughput]
figures: [{metric: avg_queue, kinds: [cdf, box]}]
"""


def _write(tmp: Path, experiment: str = EXPERIMENT) -> Path:
    (tmp / "topology.yaml").write_text(TOPOLOGY)
    path = tmp / "exp.yaml"
    path.write_text(experiment)
    return path


def _run(*args: str, **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "ratelab-exp"), *args], capture_output=True, text=True, timeout=300, **kw
    )


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (("seed: 3", "seed: 3\nreplicas: 2"), "exp.yaml:7:1: error: replicas: unknown key"),
        (
            ("sweep:\n  links[1].queue_limit: [10, 40]", "sweep: {}"),
            "exp.yaml:3:8: error: sweep: empty sweep",
        ),
        (
            ("cubic:\n    flows[0].cc: cubic", "quic:\n    flows[0].transport: quic"),
            "exp.yaml:11:5: error: transports.quic: flows[0].transport: expected one of tcp",
        ),
        (
            ("metrics: [avg_queue,", "metrics: [avg_queues,"),
            "exp.yaml:12:11: error: metrics[0]: unknown metric 'avg_queues'",
        ),
        (("links[1].queue_limit: [10, 40]", "links[1].queue_limit: []"), "expected a non-empty"),
        (
            ("seed: 3", "seed: 3\nquick: {replication: 1}"),
            "exp.yaml:7:9: error: quick.replication: unknown key",
        ),
        (
            ("figures: [", "series: [inflight]\nfigures: ["),
            "exp.yaml:13:9: error: series: expected a list of cwnd, ssthresh, srtt_ms, rate",
        ),
        (
            ("kinds: [cdf, box]", "kinds: [scatter]"),
            "exp.yaml:13:11: error: figures[0].x: a scatter needs x",
        ),
    ],
)
def test_bad_file_is_one_line_and_runs_nothing(
    tmp_path: Path, change: tuple[str, str], expected: str
) -> None:
    assert change[0] in EXPERIMENT
    path = _write(tmp_path, EXPERIMENT.replace(*change))
    out = tmp_path / "out"
    proc = _run("run", str(path), "--out", str(out), "--workers", "1")
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and expected in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr
    assert not out.exists()


def test_overrides_every_item_and_removal() -> None:
    topo = {"flows": [{"cc": "reno", "stack": "ratelab"}, {"cc": "cubic"}]}
    out = apply(topo, {"flows[*].transport": "rbcc", "flows[*].cc": None, "flows[1].rate": "1mbit"})
    assert out["flows"] == [
        {"stack": "ratelab", "transport": "rbcc"},
        {"transport": "rbcc", "rate": "1mbit"},
    ]
    assert topo["flows"][0]["cc"] == "reno"  # the input is not changed


def test_sweep_tables_report_and_failed_run(tmp_path: Path) -> None:
    # the third case's zero rate is refused by the simulator only: that run fails
    # (for both transports and replications) and the others go on
    experiment = EXPERIMENT.replace(
        "sweep:\n  links[1].queue_limit: [10, 40]",
        "cases:\n  - links[1].queue_limit: 10\n  - links[1].queue_limit: 40\n"
        "  - links[1].rate: 0kbit",
    )
    path = _write(tmp_path, experiment)
    out = tmp_path / "out"
    proc = _run("run", str(path), "--out", str(out), "--workers", "2")
    assert proc.returncode == 1, proc.stderr  # finished, with failures
    assert "tiny: 12/12 runs, 4 failed" in proc.stderr
    assert proc.stderr.strip().endswith("ratelab-exp: 4 runs failed (listed in the report)")
    assert "Traceback" not in proc.stderr and "ERROR" not in proc.stderr
    assert "failed (case links[1].rate=0kbit, transport reno, seed 3)" in proc.stderr
    runs = pd.read_parquet(out / "runs.parquet")
    assert len(runs) == 12 and (runs["status"] == "failed").sum() == 4
    assert set(runs[runs["status"] == "failed"]["case"]) == {"links[1].rate=0kbit"}
    errors = runs[runs["status"] == "failed"]["error"]
    assert errors.str.startswith(
        "ConfigError: links[1] (r1 -> b).rate: expected a rate above 0"
    ).all()
    flows = pd.read_csv(out / "flows.csv")
    assert len(flows) == 8 * 2 and set(flows["flow"]) == {"bulk", "cbr"}
    assert len(pd.read_parquet(out / "ports.parquet")) > 0
    ok = runs[runs["status"] == "ok"]
    small = ok[ok["case"] == "links[1].queue_limit=10"]["avg_queue"]
    large = ok[ok["case"] == "links[1].queue_limit=40"]["avg_queue"]
    assert small.max() < large.min()  # a deeper FIFO holds a longer queue
    report = (out / "report.md").read_text()
    assert "## Failed runs" in report and "seed 4" in report
    assert "[links[1].queue_limit=10] lowest median average queue:" in report
    for name in ("avg_queue-cdf", "avg_queue-box"):
        assert (out / f"{name}.png").stat().st_size > 0
        assert (out / f"{name}.pdf").stat().st_size > 0
    assert "<table>" in (out / "report.html").read_text()
    # a rerun only rebuilds the report
    again = _run("run", str(path), "--out", str(out), "--workers", "1")
    assert again.returncode == 1 and "12 runs, 12 already done" in again.stderr
    assert "runs," not in again.stderr.split("already done", 1)[1]
    rebuilt = _run("report", str(out))
    assert rebuilt.returncode == 1 and (out / "report.md").read_text() == report
    nothing = _run("report", str(tmp_path))
    assert nothing.returncode == 1 and "no experiment.json" in nothing.stderr


def test_interrupted_sweep_resumes(tmp_path: Path) -> None:
    experiment = EXPERIMENT.replace("replications: 2", "replications: 5")
    path = _write(tmp_path, experiment)
    out = tmp_path / "out"
    cmd = [str(BIN / "ratelab-exp"), "run", str(path), "--out", str(out), "--workers", "1"]
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, start_new_session=True)
    runs_dir = out / "runs"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if runs_dir.exists() and len(list(runs_dir.glob("*.json"))) >= 3:
            break
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)  # the runner, the cluster and its workers
    proc.wait()
    kept = {p.name: p.read_text() for p in runs_dir.glob("*.json")}
    assert 3 <= len(kept) < 20, "the sweep finished before it could be interrupted"
    for text in kept.values():
        assert json.loads(text)["status"] == "ok"  # every file is whole
    again = _run("run", str(path), "--out", str(out), "--workers", "2")
    assert again.returncode == 0, again.stderr
    assert f"20 runs, {len(kept)} already done" in again.stderr
    assert "tiny: 20/20 runs, 0 failed" in again.stderr
    for name, text in kept.items():
        assert (runs_dir / name).read_text() == text  # finished runs are not run again
    assert len(pd.read_parquet(out / "runs.parquet")) == 20


def _sigint_default() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # a parent that ignores it


def test_ctrl_c_stops_a_sweep_with_one_line(tmp_path: Path) -> None:
    """A terminal's Ctrl-C (SIGINT to the whole process group: the runner,
    the cluster's workers and their simulators): status 130, the one line, no
    worker's traceback, every finished run kept whole."""
    path = _write(tmp_path, EXPERIMENT.replace("replications: 2", "replications: 5"))
    out = tmp_path / "out"
    cmd = [str(BIN / "ratelab-exp"), "run", str(path), "--out", str(out), "--workers", "2"]
    proc = subprocess.Popen(
        cmd,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=_sigint_default,
    )
    assert proc.stderr is not None
    for line in proc.stderr:
        if line.startswith("tiny: ") and "/20 runs," in line:  # the first progress line
            break
    os.killpg(proc.pid, signal.SIGINT)
    rest = proc.stderr.read()
    assert proc.wait(timeout=60) == 130, rest
    assert "Traceback" not in rest
    assert rest.strip().splitlines()[-1] == "ratelab-exp: interrupted; the finished runs are kept"
    kept = list((out / "runs").glob("*.json"))
    assert 1 <= len(kept) < 20
    assert all(json.loads(p.read_text())["status"] == "ok" for p in kept)


def test_e1_quick_on_a_cluster_started_by_hand(tmp_path: Path) -> None:
    sched_file = tmp_path / "scheduler.json"
    common = ["--no-dashboard", "--scheduler-file", str(sched_file)]
    scheduler = subprocess.Popen(
        [str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port", "0", *common],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    worker = None
    try:
        deadline = time.monotonic() + 60
        while not sched_file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        worker = subprocess.Popen(
            [str(BIN / "dask"), "worker", "--nworkers", "2", "--nthreads", "1", *common],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=tmp_path,
        )
        address = json.loads(sched_file.read_text())["address"]
        out = tmp_path / "e1"
        proc = _run(
            "run", str(EXP / "e1.yaml"), "--quick", "--scheduler", address, "--out", str(out)
        )
        assert proc.returncode == 0, proc.stderr
        assert "e1: 9/9 runs, 0 failed" in proc.stderr
        runs = pd.read_parquet(out / "runs.parquet")
        assert sorted(set(runs["transport"])) == ["rbcc", "reno", "vegas"]
        assert (runs["status"] == "ok").all()
        # the three transports ran the same scenarios (paired by seed)
        assert runs.groupby("seed")["transport"].nunique().eq(3).all()
        rbcc = runs[runs["transport"] == "rbcc"]
        assert rbcc["abt_updates"].gt(0).all() and rbcc["abt_miss_pct"].between(0, 100).all()
        assert runs[runs["transport"] != "rbcc"]["abt_updates"].isna().all()
        report = (out / "report.md").read_text()
        medians = runs.groupby("transport")["avg_queue"].median()
        best = medians.idxmin()
        assert f"lowest median average queue: {best} " in report
        for m in ("max_avg_queue", "packets_lost", "max_link_utilisation", "slowest_source"):
            assert (out / f"{m}-cdf.png").exists() and (out / f"{m}-hist.pdf").exists()
    finally:
        for p in (worker, scheduler):
            if p is not None:
                p.terminate()
                try:
                    p.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()


def test_e3_quick(tmp_path: Path) -> None:
    out = tmp_path / "e3"
    proc = _run("run", str(EXP / "e3.yaml"), "--quick", "--workers", "2", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    runs = pd.read_parquet(out / "runs.parquet")
    assert len(runs) == 6 and (runs["status"] == "ok").all()
    flows = pd.read_parquet(out / "flows.parquet")
    udp = flows[flows["transport"].str.startswith("udp")]
    assert len(udp) == 6 * 3 and udp["udp_received"].gt(0).all()
    # the bottleneck is offered 72 Mbit/s: it is full and its FIFO stands
    assert runs["max_link_utilisation"].between(60, 101).all()
    assert runs["max_avg_queue"].gt(10).all()
    # the bottleneck drains a 1,500-byte packet in 0.25 ms at 48 Mbit/s
    assert (runs["max_queue_delay_ms"] - runs["max_avg_queue"] * 0.25).abs().max() < 1e-9
    assert runs["tcp_entropy_fairness"].between(0.5, 1).all()
    assert runs["tcp_mean_cwnd"].gt(1).all() and runs["tcp_rtos"].ge(0).all()
    medians = runs.groupby("transport")["tcp_mean_srtt_ms"].median()
    report = (out / "report.md").read_text()
    assert f"lowest median TCP smoothed RTT: {medians.idxmin()} " in report
    assert (out / "tcp_mean_throughput-box.png").exists()
    assert (out / "tcp_mean_throughput-vs-tcp_mean_srtt_ms.pdf").exists()
    samples = pd.read_parquet(out / "samples.parquet")
    assert {"run_id", "time_s", "flow", "cwnd", "srtt_ms"} <= set(samples.columns)
    assert set(samples["flow"]) == {"tcp1", "tcp2", "tcp3"}
    assert samples.groupby("run_id")["time_s"].max().ge(3).all()  # 3 s and the drain
    assert (out / "series-cwnd.png").exists() and (out / "series-srtt_ms.pdf").exists()


GENERATED = """\
name: gen
generator:
  name: e1
  params: {routers: 3, extra_links: 0, pairs: 2, packets: 20, start_spread_s: 1.0, duration_s: 20.0}
sweep:
  generator.pairs: [2, 3]
replications: 2
seed: 7
transports:
  reno:
    flows[*].cc: reno
metrics: [delivered_pct]
"""


def test_generator_sweep_draws_per_seed(tmp_path: Path) -> None:
    path = tmp_path / "gen.yaml"
    path.write_text(GENERATED)
    out = tmp_path / "out"
    proc = _run("run", str(path), "--out", str(out), "--workers", "1")
    assert proc.returncode == 0, proc.stderr
    flows = pd.read_parquet(out / "flows.parquet")
    per_run = flows.groupby(["case", "seed"])["flow"].count()
    assert per_run.to_dict() == {
        ("generator.pairs=2", 7): 2,
        ("generator.pairs=2", 8): 2,
        ("generator.pairs=3", 7): 3,
        ("generator.pairs=3", 8): 3,
    }
    # each seed its own network: the two seeds' links differ
    ports = pd.read_parquet(out / "ports.parquet")
    two = ports[ports["case"] == "generator.pairs=2"]
    cols = ["node", "port", "tx_bytes"]
    seven = two[two["seed"] == 7][cols].values.tolist()
    assert seven and seven != two[two["seed"] == 8][cols].values.tolist()
    bad = path.read_text().replace("generator.pairs:", "generator.pears:")
    path.write_text(bad)
    proc = _run("run", str(path), "--out", str(tmp_path / "bad"))
    assert proc.returncode == 2
    assert "gen.yaml:6:20: error: sweep.generator.pears: unknown parameter" in proc.stderr
