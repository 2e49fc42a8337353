"""Running an experiment: one Dask task per run (one topology + seed), each
run's result written to OUT/runs/<run-id>.json as it finishes (atomically),
so an interrupted sweep resumes where it stopped; then the tables and the
report. With `backend: mininet` the runs are `ratelab-net run`s in Mininet,
one after the other in this process (mininet.py), with the same files."""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import logging
import math
import os
import re
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

from ratelab_exp import overrides
from ratelab_exp.generators import GENERATORS, RunInput
from ratelab_exp.metrics import METRICS, SEGMENT, RunData, flow_means, queue_means
from ratelab_exp.spec import FLOW_SERIES, Experiment, load_experiment

DEFAULT_OUT = Path("build/exp")
MININET_SLACK_S = 120.0  # a Mininet run's limit: this plus twice its duration
RUN_TOPOLOGY = "topology.yaml"  # the name a run's topology is read under


@dataclass
class Task:
    """One run, everything a worker needs (plain data: it travels by pickle)."""

    run_id: str
    case: str
    case_overrides: dict[str, Any]
    transport: str
    replication: int
    seed: int
    base: str | None
    generator: str | None
    generator_params: dict[str, Any]
    transport_overrides: dict[str, Any]
    metrics: list[str]
    series: list[str]  # sample columns kept per flow over time; queue; ping_rtt_ms
    backend: str = "sim"


class UsageError(Exception):
    """The command cannot run the experiment as asked (not root for Mininet,
    Dask options for Mininet); one line, nothing written."""


def _digest(task: Task) -> str:
    """What the run depends on: the file's settings for it, the base
    topology's text and the generator's code (an edited base or generator
    makes other runs, so a rerun must not reuse the old ones)."""
    fields: dict[str, Any] = asdict(task)
    if task.backend == "sim":
        del fields["backend"]
    if task.base is not None:
        fields["base_text"] = _text(task.base)
    if task.generator is not None:
        fields["generator_code"] = _generator_code(task.generator)
    return hashlib.sha256(json.dumps(fields, sort_keys=True, default=str).encode()).hexdigest()[:8]


@functools.cache
def _text(path: str) -> str:
    return Path(path).read_text()


@functools.cache
def _generator_code(name: str) -> str:
    """The source of the module that defines the generator (its helpers too)."""
    module = inspect.getmodule(GENERATORS[name].make)
    return inspect.getsource(module) if module is not None else ""


class _TopologyLoader(yaml.SafeLoader):
    """YAML 1.1 reads `on:` and `off:` (an on-off flow's keys) as booleans;
    the topology loader reads them as the names they are, so a base topology
    is read here with only true/false as booleans, as YAML 1.2 does."""


_TopologyLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_TopologyLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool",
    re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
    list("tTfF"),
)


def read_base(path: str | Path) -> dict[str, Any]:
    """A base topology file as a dict (on/off stay strings)."""
    return yaml.load(Path(path).read_text(), Loader=_TopologyLoader)  # a SafeLoader subclass


def plan(exp: Experiment) -> list[Task]:
    """Every run of the experiment: cases x replications x transports."""
    tasks = []
    for ci, case in enumerate(exp.cases):
        for rep in range(exp.replications):
            for tname, tover in exp.transports.items():
                seed = exp.seed + rep
                task = Task(
                    run_id="",
                    case=case.label,
                    case_overrides=case.overrides,
                    transport=tname,
                    replication=rep,
                    seed=seed,
                    base=str(exp.base) if exp.base else None,
                    generator=exp.generator,
                    generator_params=exp.generator_params,
                    transport_overrides=tover,
                    metrics=exp.metrics,
                    series=exp.series,
                    backend=exp.backend,
                )
                task.run_id = f"c{ci:03d}-{tname}-r{rep:04d}-{_digest(task)}"
                tasks.append(task)
    return tasks


def run_input(task: Task) -> RunInput:
    """The run's topology: generated or read, then the case's and the
    transport's overrides (a case's `generator.X` sets the generator's X)."""
    case = task.case_overrides
    gen_over = {
        k.removeprefix("generator."): v for k, v in case.items() if k.startswith("generator.")
    }
    topo_over = {k: v for k, v in case.items() if not k.startswith("generator.")}
    if task.generator is not None:
        params = {**task.generator_params, **gen_over}
        problem = GENERATORS[task.generator].check(params)
        if problem is not None:
            raise ValueError(f"generator.{problem[0]}: {problem[1]}")
        made = GENERATORS[task.generator].make(params, task.seed)
    else:
        assert task.base is not None
        made = RunInput(read_base(task.base))
        made.topology.pop("variants", None)
        made.topology.pop("backend", None)
    topology = overrides.apply(made.topology, {**topo_over, **task.transport_overrides})
    if task.base is not None:
        _anchor_traces(topology, Path(task.base).parent)
    return RunInput(topology, made.transfers)


def _anchor_traces(topology: dict[str, Any], folder: Path) -> None:
    """A link's `trace` is a file relative to the base topology: made absolute,
    as the run's topology is written to a temporary folder."""
    for link in topology.get("links") or []:
        if not isinstance(link, dict):
            continue
        for where in (link, link.get("forward"), link.get("reverse")):
            if isinstance(where, dict) and isinstance(where.get("trace"), str):
                where["trace"] = str(folder / where["trace"])


def precheck(exp: Experiment, tasks: list[Task]) -> None:
    """Every case and transport's topology (first replication) through the
    topology loader before anything runs: a bad override or an unknown
    transport is a ConfigError at the transport (or case) in the experiment
    file. What only the simulator refuses fails the run instead."""
    from ratelab_net.topology import load_variants

    from ratelab_exp.spec import field_error

    seen: set[tuple[str, str]] = set()
    for task in tasks:
        if (task.case, task.transport) in seen:
            continue
        seen.add((task.case, task.transport))
        try:
            inp = run_input(task)
            with tempfile.TemporaryDirectory(prefix="ratelab-exp-") as tmp:
                path = Path(tmp) / "topology.yaml"
                path.write_text(yaml.safe_dump(inp.topology, sort_keys=False))
                topo = load_variants(path, [], None)[0][1]
                if task.backend == "mininet":
                    from ratelab_net.network import mininet_trace_error

                    if (problem := mininet_trace_error(topo, "ratelab")) is not None:
                        raise problem
        except ConfigError as e:
            raise field_error(
                exp, task, f"{e.path}: {e.message}" if e.path else e.message
            ) from None
        except (overrides.OverrideError, ValueError, KeyError, TypeError) as e:
            raise field_error(exp, task, str(e)) from None


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
    # traceback; a run's own failure is recorded with the run, not logged
    cluster = LocalCluster(
        n_workers=n,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        silence_logs=logging.CRITICAL,
    )
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
