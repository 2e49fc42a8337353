"""Running an experiment: one Dask task per run (one topology + seed; the
runs are planned in planning.py), each run's result written to
OUT/runs/<run-id>.json as it finishes (atomically), so an interrupted sweep
resumes where it stopped; then the tables and the report. With `backend:
mininet` the runs are `ratelab-net run`s in Mininet, one after the other in
this process (mininet.py), with the same files."""

from __future__ import annotations

import json
import logging
import math
import os
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import yaml
from ratelab_ctl import units
from ratelab_ctl.configfile import ConfigError

from ratelab_exp.generators import RunInput
from ratelab_exp.metrics import METRICS, SEGMENT, RunData, flow_means, queue_means
from ratelab_exp.planning import Task, plan, precheck, read_base, run_input
from ratelab_exp.spec import FLOW_SERIES, load_experiment

# the planning part's public names, as they were here before planning.py
__all__ = ["Task", "UsageError", "execute", "plan", "precheck", "read_base", "run_experiment"]
__all__ += ["run_input"]

DEFAULT_OUT = Path("build/exp")
MININET_SLACK_S = 120.0  # a Mininet run's limit: this plus twice its duration
RUN_TOPOLOGY = "topology.yaml"  # the name a run's topology is read under


class UsageError(Exception):
    """The command cannot run the experiment as asked (not root for Mininet,
    Dask options for Mininet); one line, nothing written."""


@dataclass
class Collected:
    """A run's tables, from either backend, and what its metrics and series need."""

    flows: pd.DataFrame
    ports: pd.DataFrame
    drops: pd.DataFrame
    counters: pd.DataFrame
    pings: pd.DataFrame
    queue_means: pd.Series
    flow_means: pd.DataFrame
    samples: list[dict[str, Any]]  # the series' flow columns over time
    queues: list[dict[str, Any]]  # router ports that queued, over time (series: queue)
    notes: dict[str, str]  # metric -> why it is n/a on this backend


def _samples(raw: list[dict[str, Any]], columns: list[str]) -> list[dict[str, Any]]:
    """The flow samples' `columns` (srtt_ms from srtt_ns; throughput_mbps: the
    bytes acknowledged since the flow's previous sample over the interval,
    absent at its first; app_rate_mbps: the same of the bytes its application
    wrote), one row per sample."""
    rows = []
    last: dict[str, tuple[int, int]] = {}  # flow -> (time_ns, delivered)
    last_written: dict[str, tuple[int, int]] = {}  # flow -> (time_ns, written)
    for s in raw:
        row: dict[str, Any] = {"time_s": s["time_ns"] / 1e9, "flow": s["flow"]}
        for c in columns:
            if c == "srtt_ms":
                row[c] = None if s["srtt_ns"] is None else s["srtt_ns"] / 1e6
            elif c == "throughput_mbps":
                before = last.get(s["flow"])
                row[c] = None
                if before is not None and s.get("delivered") is not None:
                    row[c] = (s["delivered"] - before[1]) * 8e3 / (s["time_ns"] - before[0])
            elif c == "app_rate_mbps":
                before = last_written.get(s["flow"])
                row[c] = None
                if before is not None and s.get("written") is not None:
                    row[c] = (s["written"] - before[1]) * 8e3 / (s["time_ns"] - before[0])
            else:
                row[c] = s.get(c)  # absent from an older binary's samples
        if s.get("delivered") is not None:
            last[s["flow"]] = (s["time_ns"], s["delivered"])
        if s.get("written") is not None:
            last_written[s["flow"]] = (s["time_ns"], s["written"])
        rows.append(row)
    return rows


def _queue_series(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """time_s, router, port, queue_packets of the router ports that ever queued."""
    queued = {(r["router"], r["port"]) for r in rows if r["queue_packets"] > 0}
    return [
        {k: r[k] for k in ("time_s", "router", "port", "queue_packets")}
        for r in rows
        if (r["router"], r["port"]) in queued
    ]


def _simulate(inp: RunInput, seed: int, series: list[str]) -> Collected:
    """The run in ratelab's simulator, with the generator's transfers: its
    tables (without the time series), each router port's mean queue, each
    TCP sender's mean cwnd and sRTT, and the series the file keeps."""
    from ratelab_net import netsim_batch
    from ratelab_net.routers import plan_routers
    from ratelab_net.sim_api import results_frames, router_program
    from ratelab_net.sim_scenario import build_scenario
    from ratelab_net.topology import parse_topology

    # read from text, as the file it would be (no variants: run_input took them)
    topo = parse_topology(yaml.safe_dump(inp.topology, sort_keys=False), RUN_TOPOLOGY)
    scenario = build_scenario(topo, plan_routers(topo), seed)
    for flow in scenario["flows"]:
        packets = inp.transfers.get(flow["name"])
        if packets is None:
            continue
        if "tcp" in flow:
            flow["tcp"]["app"] = {"kind": "transfer", "bytes": packets * SEGMENT}
        elif "rbcc" in flow:
            flow["rbcc"]["segments"] = packets
    # one simulator process per worker, router.p4 compiled once (netsim_batch)
    raw = netsim_batch.run(topo, scenario, router_program())
    traffic_ns = round(topo.duration_s * 1e9)
    means = queue_means(raw["queue_samples"]), flow_means(raw["flow_samples"], traffic_ns)
    columns = [c for c in series if c in FLOW_SERIES]
    samples = _samples(raw["flow_samples"], columns) if columns else []
    queues = []
    if "queue" in series:
        queues = _queue_series([{**q, "time_s": q["time_ns"] / 1e9} for q in raw["queue_samples"]])
    raw["queue_samples"], raw["flow_samples"], raw["files"] = [], [], {}
    res = results_frames(raw)
    return Collected(
        res.flows, res.ports, res.drops, res.counters, res.pings, *means, samples, queues, {}
    )


def _mininet(inp: RunInput, task: Task, folder: Path) -> Collected:
    """The run as `ratelab-net run` in Mininet (mininet.py); its files stay in
    `folder`. A generator's fixed-size transfers are not given to Mininet."""
    from ratelab_exp import mininet

    topo, out = mininet.run(inp.topology, folder, MININET_SLACK_S + 2 * _duration_s(inp))
    got = mininet.tables(topo, out)
    traffic_ns = round(topo.duration_s * 1e9)
    raw_samples = [
        {
            "time_ns": round(s["time_s"] * 1e9),
            "flow": s["flow"],
            "cwnd": s["cwnd"],
            "srtt_ns": None if s["srtt_ms"] is None else s["srtt_ms"] * 1e6,
        }
        for s in got.samples
        if s["cwnd"] is not None
    ]
    columns = [c for c in task.series if c in FLOW_SERIES]
    samples = [{k: s.get(k) for k in ("time_s", "flow", *columns)} for s in got.samples]
    notes = dict(mininet.UNAVAILABLE)
    if any(f.transport == "tcp" and (f.tcp is None or f.tcp.stack == "kernel") for f in topo.flows):
        notes["tcp_rtos"] = mininet.KERNEL_RTOS
    flows = pd.DataFrame(got.flows)
    for col in ("tcp_rtos", "udp_sent", "udp_lost", "tcp_retransmissions"):
        if col not in flows:
            flows[col] = None
    return Collected(
        flows,
        pd.DataFrame(
            got.ports, columns=["node", "port", "rx_packets", "rx_bytes", "tx_packets", "tx_bytes"]
        ),
        pd.DataFrame(got.drops, columns=["node", "port", "cause", "packets"]),
        pd.DataFrame(got.counters, columns=["router", "port", "counter", "packets"]),
        pd.DataFrame(got.pings, columns=["flow", "seq", "sent_s", "rtt_ms"]),
        queue_means(got.queues),
        flow_means(raw_samples, traffic_ns),
        samples if columns else [],
        _queue_series(got.queues) if "queue" in task.series else [],
        {m: why for m, why in notes.items() if m in task.metrics},
    )


def _duration_s(inp: RunInput) -> float:
    return units.parse_delay_us(str(inp.topology.get("duration", "10s"))) / 1e6


def _downloads(topology: dict[str, Any], flows: pd.DataFrame) -> list[dict[str, Any]]:
    """Each fixed-size TCP transfer (a flow with `bytes`): its start and its
    completion time (None: not finished)."""
    done = dict(zip(flows["flow"], flows.get("completion_s", [None] * len(flows)), strict=True))
    rows = []
    for f in topology.get("flows", []):
        if f.get("transport") != "tcp" or f.get("bytes") is None:
            continue
        start = units.parse_delay_us(str(f.get("start", "0s"))) / 1e6
        value = done.get(f["name"])
        rows.append(
            {
                "flow": f["name"],
                "kind": "downloads",
                "start_s": start,
                "completion_s": None if value is None or pd.isna(value) else float(value),
            }
        )
    return rows


def _records(df: Any) -> list[dict[str, Any]]:
    return json.loads(df.to_json(orient="records"))


def execute(task: Task, net_dir: str | None = None) -> dict[str, Any]:
    """Runs one task (on a Dask worker, or here for Mininet: its files under
    net_dir/<run-id>); never raises: a failure is a record."""
    start = time.monotonic()
    record: dict[str, Any] = {"task": asdict(task)}
    try:
        inp = run_input(task)
        if task.backend == "mininet":
            assert net_dir is not None
            got = _mininet(inp, task, Path(net_dir) / task.run_id)
        else:
            got = _simulate(inp, task.seed, task.series)
        data = RunData(
            got.flows,
            got.ports,
            got.queue_means,
            got.flow_means,
            got.drops,
            got.counters,
            inp.topology,
            inp.transfers,
            got.pings,
        )
        metrics = {}
        for name in task.metrics:
            value = None if name in got.notes else METRICS[name].compute(data)
            metrics[name] = None if value is None or math.isnan(value) else value
        record.update(
            status="ok",
            metrics=metrics,
            flows=_records(got.flows),
            ports=_records(got.ports),
            samples=got.samples,
        )
        if "ping_rtt_ms" in task.series:
            record["pings"] = _records(got.pings)
        if "download_s" in task.series:
            record["downloads"] = _downloads(inp.topology, got.flows)
        if got.queues:
            record["queues"] = got.queues
        if got.notes:
            record["notes"] = got.notes
    except Exception as e:  # a failed run is recorded, the sweep goes on
        message = str(e).splitlines()[0] if str(e) else type(e).__name__
        if isinstance(e, ConfigError):  # not the run's temporary topology file's place
            message = f"{e.path}: {e.message}" if e.path else e.message
        record.update(status="failed", error=f"{type(e).__name__}: {message}")
        record["traceback"] = traceback.format_exc()
    record["wall_s"] = round(time.monotonic() - start, 3)
    return record


def write_atomically(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.fchmod(fd, 0o644)  # as an ordinary file (mkstemp makes it private)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


class Progress:
    """One line: done / total, failures, time left (at most one a second)."""

    def __init__(self, name: str, total: int, done: int, out: Callable[[str], None]) -> None:
        self.name, self.total, self.done, self.failed = name, total, done, 0
        self.start = time.monotonic()
        self.new = 0
        self.out = out
        self.last = 0.0

    def tick(self, failed: bool, force: bool = False) -> None:
        self.done += 1
        self.new += 1
        self.failed += failed
        now = time.monotonic()
        if not force and now - self.last < 1.0 and self.done < self.total:
            return
        self.last = now
        rate = self.new / max(now - self.start, 1e-9)
        left = (self.total - self.done) / rate if rate else 0.0
        self.out(
            f"{self.name}: {self.done}/{self.total} runs, {self.failed} failed, {left:.0f} s left"
        )


def _client(scheduler: str | None, workers: int | None) -> Any:
    from distributed import Client, LocalCluster

    if scheduler is not None:
        return Client(scheduler, timeout="10s")
    n = workers or os.cpu_count() or 1
    # silence_logs: a worker's heartbeat racing the cluster's shutdown logs a
    # traceback; a run's own failure is recorded with the run, not logged.
    # The worker processes start with SIGINT ignored: a terminal's Ctrl-C
    # reaches the whole process group, and only this process should act on
    # it (closing the cluster), not every worker with a traceback.
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        cluster = LocalCluster(
            n_workers=n,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=logging.CRITICAL,
        )
    finally:
        signal.signal(signal.SIGINT, previous)
    return Client(cluster)


def run_experiment(
    path: str | Path,
    *,
    quick: bool = False,
    scheduler: str | None = None,
    workers: int | None = None,
    out: str | Path | None = None,
    retry_failed: bool = False,
    log: Callable[[str], None] | None = None,
    backend: str | None = None,
    max_runs: int | None = None,
) -> Path:
    """Runs what is missing of an experiment, then writes its tables and report
    under OUT (default build/exp/<name>[-mininet][-quick]); returns OUT.
    `backend` replaces the file's; `max_runs` runs at most that many of the
    missing runs this time (a later call goes on). Bad files raise ConfigError, a Mininet
    sweep without root or with Dask options UsageError, before anything runs."""
    from ratelab_exp.report import write_report

    say = log or (lambda line: print(line, file=sys.stderr, flush=True))
    exp = load_experiment(path, quick, backend)
    if exp.backend == "mininet":
        if scheduler is not None or workers is not None:
            raise UsageError(
                "--scheduler and --workers are for the sim backend: Mininet runs are "
                "run one at a time on this machine"
            )
        if os.geteuid() != 0:
            raise UsageError("backend mininet needs root (each run is a ratelab-net run)")
    suffix = ("-mininet" if exp.backend == "mininet" else "") + ("-quick" if quick else "")
    folder = Path(out) if out else DEFAULT_OUT / (exp.name + suffix)
    tasks = plan(exp)
    precheck(exp, tasks)  # nothing is written before the file is found good
    runs_dir = folder / "runs"
    runs_dir.mkdir(parents=True, exist_ok=True)
    meta = {"path": str(Path(path).resolve()), "quick": quick, "backend": exp.backend}
    write_atomically(folder / "experiment.json", json.dumps(meta) + "\n")
    todo = []
    for t in tasks:
        done = runs_dir / f"{t.run_id}.json"
        if done.exists() and (not retry_failed or json.loads(done.read_text())["status"] == "ok"):
            continue
        todo.append(t)
    say(f"{exp.name}: {len(tasks)} runs, {len(tasks) - len(todo)} already done")
    missing = len(todo)
    if max_runs is not None and len(todo) > max_runs:
        say(f"{exp.name}: running {max_runs} of the {len(todo)} missing (--max-runs)")
        todo = todo[:max_runs]
    done = len(tasks) - missing
    if todo and exp.backend == "mininet":
        _run_in_turn(exp.name, todo, len(tasks), done, runs_dir, folder / "net", say)
    elif todo:
        _run_tasks(exp.name, todo, len(tasks), done, scheduler, workers, runs_dir, say)
    write_report(exp, tasks, folder)
    return folder


def _finished(
    name: str, task: Task, record: dict[str, Any], runs_dir: Path, say: Callable[[str], None]
) -> bool:
    """Writes the run's record; says so if it failed; returns whether it failed."""
    write_atomically(runs_dir / f"{task.run_id}.json", json.dumps(record) + "\n")
    failed = record["status"] != "ok"
    if failed:
        say(
            f"{name}: run {task.run_id} failed (case {task.case}, transport "
            f"{task.transport}, seed {task.seed}): {record['error']}"
        )
    return failed


def _run_in_turn(
    name: str,
    todo: list[Task],
    total: int,
    done: int,
    runs_dir: Path,
    net_dir: Path,
    say: Callable[[str], None],
) -> None:
    """Mininet runs, one after the other in this process (never two networks
    at once); each run's ratelab-net folder is kept under net_dir/<run-id>.
    SIGTERM and SIGHUP end it as Ctrl-C does (the running network taken down)."""
    from ratelab_sim.signals import terminate_as_exception

    progress = Progress(name, total, done, say)
    with terminate_as_exception():
        for task in todo:
            say(f"{name}: Mininet run {task.run_id} (case {task.case}, {task.transport})")
            record = execute(task, str(net_dir))
            progress.tick(_finished(name, task, record, runs_dir, say), force=True)


def _run_tasks(
    name: str,
    todo: list[Task],
    total: int,
    done: int,
    scheduler: str | None,
    workers: int | None,
    runs_dir: Path,
    say: Callable[[str], None],
) -> None:
    from distributed import as_completed

    progress = Progress(name, total, done, say)
    client = _client(scheduler, workers)
    try:
        futures = {
            client.submit(execute, t, key=f"ratelab-exp-{t.run_id}", pure=False): t for t in todo
        }
        for future in as_completed(futures):
            task = futures[future]
            try:
                record = future.result()
            except Exception as e:  # the worker itself died
                record = {"task": asdict(task), "status": "failed", "error": f"worker: {e}"}
            progress.tick(_finished(name, task, record, runs_dir, say))
    finally:
        cluster = getattr(client, "cluster", None)
        client.close()
        if cluster is not None:
            cluster.close()
