"""Run a topology's variants several times and summarize them (docs/NET.md,
"ratelab stacks in Mininet"): the share two flows get of one bottleneck over a
minute is noisy, so a comparison needs repeats and the spread they show.

    python -m ratelab_net.repeat TOPOLOGY [--repeat N] [--variant V ...] [--out DIR]
                                 [--settle S] [--figures DIR] [--summarize-only | --resume]

Each run is `ratelab-net run TOPOLOGY --variant V --out DIR/runK` in a process
of its own (so DIR/runK/V holds its results); the machine's load average before
it is kept in DIR/runK/V/load.txt, since Mininet runs in real time. The summary
(printed, and written to DIR/summary.md) gives, per variant and flow, the mean
and range of the goodput over the runs; per variant with two TCP flows the
ratio of their goodputs (ratelab / kernel where the stacks differ, first /
second otherwise); and the bottleneck's queue (the router port with the
longest mean queue) from `--settle` seconds on. `--figures` draws each
variant's cwnd and queue over time in the first run (net-<topology>-<variant>.png)
and the bottleneck queue over time of every variant in one figure
(net-<topology>-queues.png). `--resume` runs only the runs whose results
are missing or incomplete (a flow without results) in DIR.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ratelab_ctl.configfile import ConfigError

from ratelab_net.topology import Flow, Topology, load_variants

PROG = "python -m ratelab_net.repeat"


class RepeatError(Exception):
    """Missing or unreadable results; one line."""


@dataclass
class FlowRun:
    """One TCP flow in one run."""

    goodput_bps: float
    retransmissions: int
    rtos: int | None  # ratelab stack only
    spurious_rtos: int | None
    resets_received: int | None
    cwnd: list[tuple[float, int]]  # (s from the traffic's start, segments)
    established_s: float | None = None  # CLOCK_MONOTONIC, the same on every host


@dataclass
class VariantRun:
    flows: dict[str, FlowRun]
    queue: list[tuple[float, int]]  # the bottleneck port's last_q: (elapsed s, packets)
    port: str  # which port that is, "r1.2"
    load: str  # load average before the run


@dataclass
class Variant:
    name: str
    topo: Topology
    runs: list[VariantRun] = field(default_factory=list)

    def tcp_flows(self) -> list[Flow]:
        return [f for f in self.topo.flows if f.transport == "tcp"]


def _stack(flow: Flow) -> str:
    return flow.tcp.stack if flow.tcp else "kernel"


def _json(path: Path) -> dict[str, object]:
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise RepeatError(f"{path}: cannot read the flow's results: {e}") from None
    flows = data.get("flows") if isinstance(data, dict) else None
    if not flows or not isinstance(flows[0], dict):
        raise RepeatError(f"{path}: no flow in the results")
    first: dict[str, object] = flows[0]
    return first


def _int(value: object) -> int | None:
    return value if isinstance(value, int) else None


def read_flow(flow: Flow, out: Path) -> FlowRun:
    f = _json(out / f"{flow.name}.json")
    goodput = f.get("goodput_bps")
    if not isinstance(goodput, int | float):
        raise RepeatError(
            f"{out / flow.name}.json: no goodput_bps (the flow failed: {f.get('error')})"
        )
    samples = f.get("samples")
    cwnd = [
        (s["t_s"] + flow.start_s, s["snd_cwnd"])
        for s in (samples if isinstance(samples, list) else [])
        if isinstance(s, dict) and s.get("snd_cwnd") is not None
    ]
    return FlowRun(
        float(goodput),
        _int(f.get("retransmissions")) or 0,
        _int(f.get("rtos")),
        _int(f.get("spurious_rtos")),
        _int(f.get("resets_received")),
        cwnd,
        established if isinstance(established := f.get("established_monotonic_s"), float) else None,
    )


def read_queue(router_csv: Path) -> tuple[str, list[tuple[float, int]]]:
    """The samples of the port with the longest mean queue in one router's CSV."""
    try:
        with router_csv.open() as f:
            rows = list(csv.DictReader(f))
        by_port: dict[str, list[tuple[float, int]]] = {}
        for row in rows:
            by_port.setdefault(row["port"], []).append(
                (float(row["elapsed_s"]), int(row["last_q"]))
            )
    except (OSError, KeyError, ValueError) as e:
        raise RepeatError(f"{router_csv}: cannot read the router's samples: {e}") from None
    if not by_port:
        raise RepeatError(f"{router_csv}: no samples")
    port = max(by_port, key=lambda p: sum(q for _, q in by_port[p]) / len(by_port[p]))
    return f"{router_csv.stem}.{port}", by_port[port]


def read_run(variant: Variant, out: Path) -> VariantRun:
    flows = {f.name: read_flow(f, out) for f in variant.tcp_flows()}
    port, queue = "-", []
    for router in variant.topo.routers:
        name, samples = read_queue(out / f"{router}.csv")
        if not queue or _mean([q for _, q in samples]) > _mean([q for _, q in queue]):
            port, queue = name, samples
    try:
        load = (out / "load.txt").read_text().strip()
    except OSError:
        load = "?"
    return VariantRun(flows, queue, port, load)


def _mean(values: list[float] | list[int]) -> float:
    return sum(values) / len(values) if values else 0.0


def _spread(values: list[float], fmt: str = "{:.2f}") -> str:
    """`mean (min-max)` of the runs' values."""
    if len(values) == 1:
        return fmt.format(values[0])
    low, high = fmt.format(min(values)), fmt.format(max(values))
    return f"{fmt.format(_mean(values))} ({low}-{high})"


def pair_ratio(variant: Variant, run: VariantRun) -> tuple[str, float, float | None] | None:
    """(label, ratio, gap) of a variant's two TCP flows: the ratio of their
    goodputs, ratelab / kernel where the stacks differ, the first / the second
    where they do not; and how much later (ms) the first of them connected."""
    flows = variant.tcp_flows()
    if len(flows) != 2:
        return None
    a, b = (run.flows[f.name] for f in flows)
    names = [f.name for f in flows]
    if _stack(flows[0]) != _stack(flows[1]) and _stack(flows[0]) == "kernel":
        a, b = b, a
        names.reverse()
    gap = None
    if a.established_s is not None and b.established_s is not None:
        gap = (a.established_s - b.established_s) * 1000
    return f"{names[0]}/{names[1]}", a.goodput_bps / b.goodput_bps, gap


def summarize(variants: list[Variant], settle_s: float) -> str:
    """The markdown tables of docs/NET.md: flows, pairs, queues."""
    lines = [
        "| variant | flow | stack cc | goodput Mbit/s mean (range) | retx mean | "
        "RTOs (spurious) | resets received |",
        "|---|---|---|---:|---:|---:|---:|",
    ]
    for v in variants:
        for f in v.tcp_flows():
            runs = [r.flows[f.name] for r in v.runs]
            rtos = [r.rtos for r in runs if r.rtos is not None]
            spurious = sum(r.spurious_rtos or 0 for r in runs)
            resets = [r.resets_received for r in runs if r.resets_received is not None]
            lines.append(
                f"| {v.name} | {f.name} | {_stack(f)} {f.cc} | "
                f"{_spread([r.goodput_bps / 1e6 for r in runs])} | "
                f"{_mean([r.retransmissions for r in runs]):.0f} | "
                f"{f'{sum(rtos)} ({spurious})' if rtos else '-'} | "
                f"{sum(resets) if resets else '-'} |"
            )
    pairs = [(v, [pair_ratio(v, r) for r in v.runs]) for v in variants]
    pairs = [(v, ratios) for v, ratios in pairs if ratios and ratios[0] is not None]
    if pairs:
        lines += [
            "",
            "| variant | ratio | mean (range) | runs | connected later by (ms) |",
            "|---|---|---:|---|---|",
        ]
        for v, ratios in pairs:
            values = [x[1] for x in ratios if x is not None]
            label = ratios[0][0] if ratios[0] else "-"
            each = ", ".join(f"{x:.2f}" for x in values)
            gaps = ", ".join("-" if x[2] is None else f"{x[2]:.0f}" for x in ratios if x)
            lines.append(f"| {v.name} | {label} | {_spread(values)} | {each} | {gaps} |")
    lines += [
        "",
        f"| variant | port | queue mean from {settle_s:g} s, mean (range) | max "
        "| load before each run |",
        "|---|---|---:|---:|---|",
    ]
    for v in variants:
        settled = [[q for t, q in r.queue if t >= settle_s] for r in v.runs]
        means = [_mean(q) for q in settled]
        peak = max((max(q) for q in settled if q), default=0)
        loads = "; ".join(r.load for r in v.runs)
        port = v.runs[0].port if v.runs else "-"
        lines.append(f"| {v.name} | {port} | {_spread(means, '{:.1f}')} | {peak} | {loads} |")
    return "\n".join(lines)


def plot_figures(variants: list[Variant], figures: Path, prefix: str) -> list[Path]:
    """Per variant with TCP flows, their cwnd (and the queue) over time in the
    first run; and every variant's bottleneck queue in one figure."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figures.mkdir(parents=True, exist_ok=True)
    written = []
    for v in variants:
        if not v.runs or not v.tcp_flows():
            continue
        run = v.runs[0]
        fig, (ax_c, ax_q) = plt.subplots(2, 1, figsize=(9, 5.5), sharex=True)
        for f in v.tcp_flows():
            cwnd = run.flows[f.name].cwnd
            label = f"{f.name} ({_stack(f)} {f.cc})"
            ax_c.plot([t for t, _ in cwnd], [c for _, c in cwnd], label=label, linewidth=1)
        ax_c.set_ylabel("cwnd (segments)")
        ax_q.plot([t for t, _ in run.queue], [q for _, q in run.queue], color="grey", linewidth=1)
        ax_q.set_ylabel(f"queue {run.port} (packets)")
        ax_q.set_xlabel("time (s)")
        ax_c.legend(loc="upper right", fontsize="small")
        for ax in (ax_c, ax_q):
            ax.grid(alpha=0.3)
        fig.suptitle(f"{prefix} {v.name}: cwnd and bottleneck queue (run 1 of {len(v.runs)})")
        fig.tight_layout()
        path = figures / f"{prefix}-{v.name}.png"
        fig.savefig(path, dpi=90)
        plt.close(fig)
        written.append(path)
    fig, ax = plt.subplots(figsize=(9, 3.5))
    for v in variants:
        if v.runs:
            q = v.runs[0].queue
            ax.plot([t for t, _ in q], [x for _, x in q], label=v.name, linewidth=1)
    ax.set_ylabel("bottleneck queue (packets)")
    ax.set_xlabel("time (s)")
    ax.legend(loc="upper right", fontsize="small")
    ax.grid(alpha=0.3)
    fig.suptitle(f"{prefix}: bottleneck queue over time (run 1 of each)")
    fig.tight_layout()
    path = figures / f"{prefix}-queues.png"
    fig.savefig(path, dpi=90)
    plt.close(fig)
    written.append(path)
    return written


def _run(topology: str, variant: str, out: Path, overrides: list[str]) -> None:
    dest = out / variant
    dest.mkdir(parents=True, exist_ok=True)
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    (dest / "load.txt").write_text(load + "\n")
    print(f"-- {out.name} {variant} (load {load})", flush=True)
    sets = [a for s in overrides for a in ("--set", s)]
    cmd = [sys.executable, "-m", "ratelab_net.cli", "run", topology, "--variant", variant]
    proc = subprocess.run([*cmd, "--out", str(out), "--no-plots", *sets], check=False)
    if proc.returncode != 0:
        raise RepeatError(f"run {out.name} of variant {variant} failed (status {proc.returncode})")


def _run_or_read(args: argparse.Namespace, v: Variant, out: Path) -> VariantRun:
    """One run's results: read back (--summarize-only, or --resume where they are
    complete), or run."""
    if args.summarize_only:
        return read_run(v, out / v.name)
    if args.resume:
        try:
            return read_run(v, out / v.name)
        except RepeatError:
            pass  # incomplete: run it again
    _run(args.topology, v.name, out, args.set)
    return read_run(v, out / v.name)


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    ap.add_argument("topology")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each variant (3)")
    ap.add_argument("--variant", action="append", help="this variant (repeatable; default all)")
    ap.add_argument("--out", default=None, help="results (build/net/<topology>-repeat)")
    ap.add_argument("--set", action="append", default=[], help="override, as for ratelab-net")
    ap.add_argument("--settle", type=float, default=10.0, help="queue from this second on (10)")
    ap.add_argument("--figures", type=Path, help="write the figures into this folder")
    ap.add_argument("--summarize-only", action="store_true", help="read earlier runs of --out")
    ap.add_argument("--resume", action="store_true", help="run only what --out lacks")
    return ap


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.repeat < 1:
            raise RepeatError(f"--repeat: expected 1 or more runs, got {args.repeat}")
        # only the variants asked for: --set may fit them and not the others
        chosen = [load_variants(args.topology, args.set, n)[0] for n in args.variant or []]
        variants = [Variant(n, t) for n, t in chosen or load_variants(args.topology, args.set)]
        if any(v.name is None for v in variants):
            raise RepeatError(f"{args.topology}: has no variants to repeat")
        stem = Path(args.topology).stem
        out = Path(args.out or Path("build") / "net" / f"{stem}-repeat")
        for k in range(1, args.repeat + 1):
            for v in variants:
                v.runs.append(_run_or_read(args, v, out / f"run{k}"))
        table = summarize(variants, args.settle)
        (out / "summary.md").write_text(table + "\n")
        print(table)
        if args.figures:
            for path in plot_figures(variants, args.figures, f"net-{stem}"):
                print(f"figure: {path}")
    except ConfigError as e:
        print(str(e), file=sys.stderr)
        return 2
    except RepeatError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
