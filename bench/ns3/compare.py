"""ratelab-stack against ns-3's TCP models, one bulk flow on one dumbbell.

Runs bench/ns3/stack_dumbbell (ns-3) and ratelab-stack-dumbbell (the
crate's testbed) for each algorithm, checks their traces, and writes
OUT.md (a table: goodput, retransmissions, drops, RTOs, queue) and OUT.png
(cwnd over time, one panel per algorithm, both stacks in each).

    compare.py --ns3 build/ns3/stack_dumbbell \\
        --ratelab target/release/ratelab-stack-dumbbell --out bench/results/ns3_stacks
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

TRACE_COLUMNS = ("time_s", "cwnd_bytes", "ssthresh_bytes", "bytes_acked", "queue_packets")
SUMMARY_FIELDS = (
    "stack",
    "cc",
    "duration_s",
    "bytes_acked",
    "goodput_bps",
    "retransmissions",
    "rtos",
    "recoveries",
    "drops",
    "mean_queue_packets",
    "max_queue_packets",
)
SEGMENT = 1448
BOTTLENECK_BPS = 20e6
NS3_MODELS = {
    "reno": "TcpLinuxReno",
    "newreno": "TcpNewReno",
    "cubic": "TcpCubic",
    "vegas": "TcpVegas",
}


class CompareError(Exception):
    """A run failed or wrote something malformed; the message is one line."""


@dataclass(frozen=True)
class Variant:
    """One panel: an algorithm, with or without delayed ACKs."""

    cc: str
    ack_every_segment: bool = False

    @property
    def label(self) -> str:
        return f"{self.cc}, ACK every segment" if self.ack_every_segment else self.cc


VARIANTS = (
    Variant("reno"),
    Variant("newreno"),
    Variant("cubic"),
    Variant("vegas"),
    Variant("vegas", ack_every_segment=True),
)


@dataclass(frozen=True)
class Sample:
    time_s: float
    cwnd_bytes: int
    ssthresh_bytes: float  # math.inf before the first reduction
    bytes_acked: int
    queue_packets: int


@dataclass(frozen=True)
class Run:
    stack: str
    variant: Variant
    trace: list[Sample]
    summary: dict[str, float | str]


def _number(path: Path, line: int, column: str, text: str, allow_inf: bool = False) -> float:
    try:
        value = float(text)
    except ValueError:
        raise CompareError(f"{path}:{line}: {column}: expected a number, got {text!r}") from None
    if math.isnan(value) or value < 0 or (math.isinf(value) and not allow_inf):
        raise CompareError(f"{path}:{line}: {column}: expected a number >= 0, got {text!r}")
    return value


def _count(path: Path, line: int, column: str, text: str) -> int:
    value = _number(path, line, column, text)
    if value != int(value):
        raise CompareError(f"{path}:{line}: {column}: expected a whole number, got {text!r}")
    return int(value)


def read_trace(path: Path) -> list[Sample]:
    """The CSV trace both programs write, checked row by row."""
    with path.open(newline="") as f:
        rows = list(csv.reader(f))
    if not rows or tuple(rows[0]) != TRACE_COLUMNS:
        got = ",".join(rows[0]) if rows else "an empty file"
        raise CompareError(f"{path}:1: expected the header {','.join(TRACE_COLUMNS)}, got {got}")
    samples: list[Sample] = []
    for line, row in enumerate(rows[1:], start=2):
        if len(row) != len(TRACE_COLUMNS):
            raise CompareError(
                f"{path}:{line}: expected {len(TRACE_COLUMNS)} fields, got {len(row)}"
            )
        sample = Sample(
            time_s=_number(path, line, "time_s", row[0]),
            cwnd_bytes=_count(path, line, "cwnd_bytes", row[1]),
            ssthresh_bytes=_number(path, line, "ssthresh_bytes", row[2], allow_inf=True),
            bytes_acked=_count(path, line, "bytes_acked", row[3]),
            queue_packets=_count(path, line, "queue_packets", row[4]),
        )
        if samples and sample.time_s <= samples[-1].time_s:
            raise CompareError(f"{path}:{line}: time_s: not after the previous row's")
        if samples and sample.bytes_acked < samples[-1].bytes_acked:
            raise CompareError(f"{path}:{line}: bytes_acked: below the previous row's")
        samples.append(sample)
    if not samples:
        raise CompareError(f"{path}: no samples after the header")
    return samples


def read_summary(path: Path) -> dict[str, float | str]:
    """The JSON summary both programs write, with every field present."""
    try:
        summary = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise CompareError(f"{path}:{e.lineno}: not JSON: {e.msg}") from None
    if not isinstance(summary, dict):
        raise CompareError(f"{path}: expected a JSON object")
    for field in SUMMARY_FIELDS:
        value = summary.get(field)
        expected = str if field in ("stack", "cc") else (int, float)
        if not isinstance(value, expected) or isinstance(value, bool):
            raise CompareError(
                f"{path}: {field}: missing or not a {'string' if expected is str else 'number'}"
            )
    return summary


def run_stack(
    stack: str,
    binary: Path,
    variant: Variant,
    duration_s: float,
    iw: int,
    workdir: Path,
) -> Run:
    """Run one program for one variant; its trace and summary, checked."""
    stem = f"{stack}_{variant.cc}_{int(variant.ack_every_segment)}"
    trace, summary = workdir / f"{stem}.csv", workdir / f"{stem}.json"
    cmd = [
        str(binary),
        f"--cc={variant.cc}",
        f"--csv={trace}",
        f"--summary={summary}",
        f"--duration={duration_s:g}",
        f"--iw={iw}",
        f"--ack-every-segment={int(variant.ack_every_segment)}",
    ]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    except OSError as e:
        raise CompareError(f"{binary}: cannot run: {e.strerror}") from None
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        raise CompareError(
            f"{binary} --cc={variant.cc}: exit {done.returncode}: "
            f"{lines[0] if lines else 'no message'}"
        )
    return Run(stack, variant, read_trace(trace), read_summary(summary))


def markdown(runs: Sequence[Run], duration_s: float, iw: int) -> str:
    """The results table."""
    lines = [
        f"# ratelab-stack and ns-3 on one dumbbell ({duration_s:g} s simulated, IW{iw})",
        "",
        "One bulk flow: sender -100 Mbit/s, 1 ms- router -20 Mbit/s, 20 ms- receiver, "
        "drop-tail queue of 100 packets at the router, 1448-byte segments. "
        "Goodput: bytes acknowledged over the whole run. Queue: packets waiting at the "
        "bottleneck, sampled every 10 ms. Written by bench/ns3/compare.py.",
        "",
        "| algorithm | stack | goodput (Mbit/s) | retransmissions | drops | RTOs "
        "| recoveries | mean queue (packets) | max queue |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for run in runs:
        s = run.summary
        stack = f"ns-3 {NS3_MODELS[run.variant.cc]}" if run.stack == "ns-3" else "ratelab"
        lines.append(
            f"| {run.variant.label} | {stack} | {float(s['goodput_bps']) / 1e6:.2f} "
            f"| {int(s['retransmissions'])} | {int(s['drops'])} | {int(s['rtos'])} "
            f"| {int(s['recoveries'])} | {float(s['mean_queue_packets']):.1f} "
            f"| {int(s['max_queue_packets'])} |"
        )
    return "\n".join(lines) + "\n"


def plot(runs: Sequence[Run], path: Path) -> None:
    """cwnd (segments) over time: one panel per variant, both stacks in it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    variants = list(dict.fromkeys(run.variant for run in runs))
    cols = 2
    rows = math.ceil(len(variants) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(12, 3.2 * rows), sharex=True, squeeze=False)
    style = {"ratelab": ("tab:blue", "-"), "ns-3": ("tab:orange", "--")}
    for ax, variant in zip(axes.flat, variants, strict=False):
        for run in (r for r in runs if r.variant == variant):
            color, dash = style[run.stack]
            t = [s.time_s for s in run.trace]
            ax.plot(
                t,
                [s.cwnd_bytes / SEGMENT for s in run.trace],
                dash,
                color=color,
                lw=1,
                label=f"{run.stack} cwnd ({float(run.summary['goodput_bps']) / 1e6:.1f} Mbit/s)",
            )
            ax.plot(
                t,
                [s.queue_packets for s in run.trace],
                dash,
                color=color,
                lw=0.6,
                alpha=0.45,
                label=f"{run.stack} queue",
            )
        ax.set_title(variant.label)
        ax.set_ylabel("segments / packets")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="upper right")
    for ax in list(axes.flat)[len(variants) :]:
        ax.set_visible(False)
    for ax in axes[-1]:
        ax.set_xlabel("time (s)")
    fig.suptitle("cwnd and bottleneck queue: ratelab-stack (solid) and ns-3 3.37 (dashed)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def compare(
    ns3: Path, ratelab: Path, duration_s: float, iw: int, variants: Sequence[Variant] = VARIANTS
) -> list[Run]:
    """Every variant in both stacks, ns-3 then ratelab."""
    runs = []
    with tempfile.TemporaryDirectory(prefix="ns3-compare-") as tmp:
        for variant in variants:
            for stack, binary in (("ns-3", ns3), ("ratelab", ratelab)):
                runs.append(run_stack(stack, binary, variant, duration_s, iw, Path(tmp)))
    return runs


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ns3", type=Path, required=True, help="the stack_dumbbell program")
    parser.add_argument("--ratelab", type=Path, required=True, help="ratelab-stack-dumbbell")
    parser.add_argument("--out", type=Path, required=True, help="writes OUT.md and OUT.png")
    parser.add_argument("--duration", type=float, default=30.0, help="simulated seconds")
    parser.add_argument("--iw", type=int, default=10, help="initial window (segments)")
    args = parser.parse_args(argv)
    try:
        if not 0.1 <= args.duration <= 3600:
            raise CompareError(f"--duration: expected 0.1 to 3600 s, got {args.duration:g}")
        if not 1 <= args.iw <= 1000:
            raise CompareError(f"--iw: expected 1 to 1000 segments, got {args.iw}")
        runs = compare(args.ns3, args.ratelab, args.duration, args.iw)
        table = markdown(runs, args.duration, args.iw)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        md, png = args.out.with_suffix(".md"), args.out.with_suffix(".png")
        md.write_text(table + f"\n![cwnd traces]({png.name})\n")
        plot(runs, png)
    except CompareError as e:
        print(f"compare.py: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"compare.py: {e.filename}: {e.strerror}", file=sys.stderr)
        return 2
    print(table, end="")
    print(f"written: {md}, {png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
