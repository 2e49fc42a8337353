"""Does the simulator agree with Mininet? (docs/NET.md "Simulation", issue 16)

    python -m ratelab_net.agreement [--runs N] [--out DIR] [--report FILE]
                                    [--backend mininet|sim|both] [--resume | --summarize-only]
                                    [--set PATH=VALUE ...] [--case TOPOLOGY[:VARIANT] ...]

Runs every case (default: the dumbbell example's three variants and the
three-router example) N times in Mininet (`ratelab-net run`, each run holding
/tmp/ratelab-mininet.lock) and with N seeds in the simulator (`--backend sim
--seed 0..N-1`), each in a process of its own, into
DIR/<backend>/<topology>/run<k>/[<variant>/]. Then it reads both backends'
files the same way and writes the comparison table (markdown, to FILE and
stdout): per case the Mininet mean, the simulated mean and their ratio for

- each flow's goodput (target: within 10 %),
- the mean bottleneck queue (within 20 %): the router port with the longest
  mean queue over both backends' runs, its `last_q` gauge (the queue an
  arriving packet saw) averaged over the samples of `<router>.csv` in the
  traffic's `duration` (the simulator's drain second left out),
- the drops at that port (the same order: within a factor of 3; a count
  under 10 on both sides passes),
- each ping flow's mean RTT (no target; shown for the bufferbloat).

`--resume` runs only what is missing, `--summarize-only` runs nothing.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ratelab_ctl.configfile import ConfigError
from ratelab_model.counters import DROP_CAUSES

from ratelab_net.results import flow_result
from ratelab_net.sim_scenario import kernel_knobs
from ratelab_net.topology import Topology, load_variants

PROG = "python -m ratelab_net.agreement"
ROOT = Path(__file__).resolve().parents[2]
DEFAULT_CASES = (
    "sim/examples/dumbbell.yaml:small-fifo",
    "sim/examples/dumbbell.yaml:large-fifo",
    "sim/examples/dumbbell.yaml:large-red",
    "sim/examples/three_routers.yaml",
)
BACKENDS = ("mininet", "sim")
MININET_LOCK = Path("/tmp/ratelab-mininet.lock")  # the shared machine's rule for netns runs
GOODPUT_TOLERANCE = 0.10
QUEUE_TOLERANCE = 0.20
DROPS_FACTOR = 3.0
FEW_DROPS = 10  # below this on both sides the drop counts are noise, not an order


class AgreementError(Exception):
    """A run that failed or left unreadable results; one line."""


@dataclass(frozen=True)
class Case:
    topology: str  # path as given
    variant: str | None

    @property
    def label(self) -> str:
        stem = Path(self.topology).stem
        return f"{stem} {self.variant}" if self.variant else stem

    def run_dir(self, out: Path, backend: str, k: int) -> Path:
        base = out / backend / Path(self.topology).stem / f"run{k}"
        return base / self.variant if self.variant else base


@dataclass
class Measured:
    """One run's quantities."""

    goodput_bps: dict[str, float]  # per non-ping flow
    ping_ms: dict[str, float]  # per ping flow: mean RTT
    queue: dict[str, float]  # per router port "r1.2": mean last_q in the traffic's time
    drops: dict[str, int]  # per router port: drops by the router program
    # rbcc senders in Mininet: seconds their schedule lost to waking up late
    pacing_lost_s: dict[str, float] = field(default_factory=dict)


def parse_case(text: str) -> Case:
    path, _, variant = text.partition(":")
    return Case(path, variant or None)


def load_case(case: Case, sets: Sequence[str]) -> Topology:
    [(_, topo)] = load_variants(case.topology, list(sets), case.variant)
    return topo


def _ratelab_net() -> str:
    return str(Path(sys.executable).with_name("ratelab-net"))


def run_one(
    case: Case, backend: str, k: int, out: Path, sets: Sequence[str], lock: bool = True
) -> None:
    """One run of one case, its output kept in run.log beside its results; a
    Mininet run holds MININET_LOCK unless `lock` is false (a caller that holds
    it already, as `flock` around a test does, would wait on itself). The run
    takes it under flock(1) itself, so that it keeps it as long as its network
    is up even if this process is killed."""
    base = case.run_dir(out, backend, k)
    top = base.parent if case.variant else base
    cmd = [_ratelab_net(), "run", case.topology, "--out", str(top), "--no-plots"]
    if case.variant:
        cmd += ["--variant", case.variant]
    for s in sets:
        cmd += ["--set", s]
    if backend == "sim":
        cmd += ["--backend", "sim", "--seed", str(k - 1)]
    if backend == "mininet":
        # the load average as the run starts (after waiting for the lock)
        load = 'cat /proc/loadavg > "$0" && exec "$@"'
        cmd = ["sh", "-c", load, str(base / "load.txt"), *cmd]
        if lock:
            cmd = ["flock", str(MININET_LOCK), *cmd]
    base.mkdir(parents=True, exist_ok=True)
    with (base / "run.log").open("w") as log:
        code = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT).returncode
    if code != 0:
        tail = (base / "run.log").read_text().strip().splitlines()[-1:] or ["no output"]
        raise AgreementError(f"{base}: ratelab-net exited {code}: {tail[0]}")


def _router_rows(path: Path) -> list[dict[str, str]]:
    try:
        with path.open() as f:
            return list(csv.DictReader(f))
    except OSError as e:
        raise AgreementError(f"{path}: cannot read the router's samples: {e}") from None


def _sim_drops(run: Path) -> dict[str, int]:
    drops: dict[str, int] = {}
    for row in _router_rows(run / "drops.csv"):
        if row["cause"] in DROP_CAUSES:
            key = f"{row['node']}.{row['port']}"
            drops[key] = drops.get(key, 0) + int(row["packets"])
    return drops


def _sender(run: Path, flow: str) -> dict[str, object]:
    try:
        flows = json.loads((run / f"{flow}.json").read_text()).get("flows") or [{}]
    except (OSError, ValueError, AttributeError):
        return {}
    return flows[0] if isinstance(flows[0], dict) else {}


def measure(topo: Topology, run: Path) -> Measured:
    """A run's quantities from its files, read the same way for both backends
    (the simulator's drops from its drops.csv: its `<router>.csv` holds the
    queue gauges only; Mininet's from the last row of its `<router>.csv`)."""
    simulated = (run / "results.json").exists()
    m = Measured({}, {}, {}, {})
    for flow in topo.flows:
        r = flow_result(flow, run)
        if flow.transport == "ping":
            if not r.rtt_ms:
                raise AgreementError(f"{run}: {flow.name}: no ping replies")
            m.ping_ms[flow.name] = sum(v for _, v in r.rtt_ms) / len(r.rtt_ms)
        elif r.goodput_bps is None:
            raise AgreementError(f"{run}: {flow.name}: no goodput ({r.note or 'no results'})")
        else:
            m.goodput_bps[flow.name] = r.goodput_bps
        if flow.transport == "rbcc" and not simulated:
            lost = _sender(run, flow.name).get("pacing_lost_s")
            if isinstance(lost, int | float):
                m.pacing_lost_s[flow.name] = float(lost)
    for router in topo.routers:
        rows = _router_rows(run / f"{router}.csv")
        by_port: dict[str, list[int]] = {}
        try:
            for row in rows:
                key = f"{router}.{row['port']}"
                if float(row["elapsed_s"]) <= topo.duration_s:
                    by_port.setdefault(key, []).append(int(row["last_q"]))
                if not simulated:  # cumulative counters: the last row is the run's
                    m.drops[key] = sum(int(row[f"drop_{c}"]) for c in DROP_CAUSES)
        except (KeyError, ValueError) as e:
            raise AgreementError(f"{run / router}.csv: unexpected samples: {e}") from None
        m.queue.update({k: sum(q) / len(q) for k, q in by_port.items() if q})
    if simulated:
        m.drops = _sim_drops(run)
    return m


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def _spread(values: Sequence[float], fmt: str) -> str:
    if len(values) == 1:
        return fmt.format(values[0])
    return f"{fmt.format(_mean(values))} ({fmt.format(min(values))}-{fmt.format(max(values))})"


def within(sim: float, mininet: float, tolerance: float) -> bool:
    if mininet == 0:
        return sim == 0
    return abs(sim / mininet - 1) <= tolerance


def same_order(sim: float, mininet: float) -> bool:
    """Within DROPS_FACTOR of each other; both under FEW_DROPS passes."""
    low, high = sorted((sim, mininet))
    if high < FEW_DROPS:
        return True
    return low > 0 and high / low <= DROPS_FACTOR


def bottleneck(runs: Sequence[Measured]) -> str:
    """The port with the longest mean queue over all runs of both backends."""
    ports = {p for m in runs for p in m.queue}
    return max(sorted(ports), key=lambda p: sum(m.queue.get(p, 0.0) for m in runs))


def _ratio(sim: float, mininet: float) -> str:
    return f"{sim / mininet:.2f}" if mininet else "-"


def table_rows(case: Case, mininet: list[Measured], sim: list[Measured]) -> list[str]:
    """The case's rows: quantity | Mininet | sim | ratio | target | verdict."""
    rows = []

    def row(quantity: str, a: list[float], b: list[float], fmt: str, target: str, ok: str) -> None:
        rows.append(
            f"| {case.label} | {quantity} | {_spread(a, fmt)} | {_spread(b, fmt)} | "
            f"{_ratio(_mean(b), _mean(a))} | {target} | {ok} |"
        )

    def verdict(passed: bool) -> str:
        return "pass" if passed else "**fail**"

    for name in mininet[0].goodput_bps:
        a = [m.goodput_bps[name] / 1e6 for m in mininet]
        b = [m.goodput_bps[name] / 1e6 for m in sim]
        ok = within(_mean(b), _mean(a), GOODPUT_TOLERANCE)
        row(f"{name} goodput Mbit/s", a, b, "{:.2f}", "±10 %", verdict(ok))
    port = bottleneck(mininet + sim)
    a = [m.queue.get(port, 0.0) for m in mininet]
    b = [m.queue.get(port, 0.0) for m in sim]
    ok = within(_mean(b), _mean(a), QUEUE_TOLERANCE)
    row(f"{port} mean queue, packets", a, b, "{:.1f}", "±20 %", verdict(ok))
    da = [float(m.drops.get(port, 0)) for m in mininet]
    db = [float(m.drops.get(port, 0)) for m in sim]
    row(f"{port} drops", da, db, "{:.0f}", "x3", verdict(same_order(_mean(db), _mean(da))))
    for name in mininet[0].ping_ms:
        a = [m.ping_ms[name] for m in mininet]
        b = [m.ping_ms[name] for m in sim]
        row(f"{name} RTT mean, ms", a, b, "{:.1f}", "-", "-")
    return rows


def _loads(out: Path, case: Case, runs: int) -> str:
    loads = []
    for k in range(1, runs + 1):
        try:
            loads.append((case.run_dir(out, "mininet", k) / "load.txt").read_text().split()[0])
        except (OSError, IndexError):
            loads.append("?")
    return ", ".join(loads)


def report(cases: Sequence[Case], sets: Sequence[str], out: Path, runs: int) -> str:
    """The comparison table of every case, from the runs' files."""
    lines = [
        f"# Simulator vs Mininet: {runs} Mininet run(s) and {runs} seed(s) per case",
        "",
        f"Written by `{PROG}` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
        + (f" with {' '.join('--set ' + s for s in sets)}" if sets else "")
        + ". Mean (range) over the runs; ratio = simulated mean / Mininet mean. "
        "Queue: the bottleneck port's `last_q` averaged over the traffic's duration; "
        f"drops: the same order means within a factor of {DROPS_FACTOR:g} "
        f"(both under {FEW_DROPS} pass).",
        "",
        "| case | quantity | Mininet | simulated | ratio | target | verdict |",
        "|---|---|---:|---:|---:|---|---|",
    ]
    notes = []
    for case in cases:
        topo = load_case(case, sets)
        measured = {
            b: [measure(topo, case.run_dir(out, b, k)) for k in range(1, runs + 1)]
            for b in BACKENDS
        }
        lines += table_rows(case, measured["mininet"], measured["sim"])
        notes.append(
            f"- {case.label}: load average before each Mininet run {_loads(out, case, runs)}"
        )
        for name in measured["mininet"][0].pacing_lost_s:
            lost = _mean([m.pacing_lost_s.get(name, 0.0) for m in measured["mininet"]])
            notes.append(
                f"- {case.label}: Mininet's {name} sender fell behind its pacing by "
                f"{lost:.2f} s per run (mean `pacing_lost_s`: woken late under load, it "
                "restarted its schedule rather than burst)"
            )
        kernel = [
            f for f in topo.flows if f.transport == "tcp" and (not f.tcp or f.tcp.stack == "kernel")
        ]
        for f in kernel:
            knobs = ", ".join(f"{k} {v}" for k, v in kernel_knobs(f.cc or "").items())
            notes.append(
                f"- {case.label}: kernel flow {f.name} simulated on ratelab's {f.cc} with {knobs}"
            )
    return "\n".join([*lines, "", *notes]) + "\n"


def _missing(case: Case, backend: str, k: int, out: Path, sets: Sequence[str]) -> bool:
    try:
        measure(load_case(case, sets), case.run_dir(out, backend, k))
    except AgreementError:
        return True
    return False


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    p.add_argument("--runs", type=int, default=3, help="Mininet runs and seeds per case (3)")
    p.add_argument("--out", default=str(ROOT / "build" / "agreement"), help="runs' folder")
    p.add_argument(
        "--report",
        default=str(ROOT / "bench" / "results" / "sim_agreement.md"),
        help="where the table goes (bench/results/sim_agreement.md)",
    )
    p.add_argument("--backend", choices=(*BACKENDS, "both"), default="both", help="what to run")
    p.add_argument("--set", action="append", default=[], metavar="PATH=VALUE")
    p.add_argument("--case", action="append", metavar="TOPOLOGY[:VARIANT]")
    again = p.add_mutually_exclusive_group()
    again.add_argument("--resume", action="store_true", help="run only the missing runs")
    again.add_argument("--summarize-only", action="store_true", help="run nothing")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.runs < 1:
        print(f"{PROG}: error: --runs: expected at least 1, got {args.runs}", file=sys.stderr)
        return 2
    cases = [parse_case(c) for c in args.case or DEFAULT_CASES]
    out = Path(args.out).resolve()
    backends = BACKENDS if args.backend == "both" else (args.backend,)
    try:
        for case in cases:
            load_case(case, args.set)  # bad input: before anything runs
        if "mininet" in backends and not args.summarize_only and os.geteuid() != 0:
            raise AgreementError("the Mininet runs need root")
        if not args.summarize_only:
            for k in range(1, args.runs + 1):
                for case in cases:
                    for b in backends:
                        if args.resume and not _missing(case, b, k, out, args.set):
                            continue
                        print(f"{PROG}: {case.label}: {b} run {k}", file=sys.stderr, flush=True)
                        run_one(case, b, k, out, args.set)
        text = report(cases, args.set, out, args.runs)
    except ConfigError as e:
        print(e, file=sys.stderr)
        return 2
    except AgreementError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 1
    dest = Path(args.report)
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(text)
    print(text, end="")
    print(f"{PROG}: table written to {dest}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
