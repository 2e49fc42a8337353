"""ratelab-netsim's speed beside ns-3's, an E1-sized run, and memory over a long run.

    .venv/bin/python bench/ns3/bench_netsim.py --ns3 build/ns3/e3_dumbbell \\
        --netsim-dir target/release --router build/netsim/router.json --out bench/results/netsim.md

1. The E3 dumbbell (compare_e3.py's scenario, 15 s simulated) in both, each pinned to
   one core, alternately, --repeat times: packets delivered to hosts per wall-clock
   second of the run itself (ns-3's Simulator::Run, ratelab-netsim's Simulator::run;
   the fastest of the repeats), and the ratio (issue 16: at least 10).
2. An E1-sized scenario (e1_scenario.py, seed 1, 3,000 s simulated): the whole
   `ratelab-netsim` command's wall-clock time on one core, router program compiled
   (issue 16: under 1 s), and how it splits into building and running.
3. Memory: maximum resident size of the E3 run at 30 s and at 300 s simulated (1x and
   10x): without sampling; with E3's sampling (queues and senders every 10 ms) as the
   `ratelab-netsim` command runs it, the samples streamed to their files; and with the
   samples kept in memory (the library's `Simulator::run`, as ratelab-netsim-time runs it).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent / "sim" / "netsim" / "tools"))
sys.path.insert(0, str(HERE))

from compare_e3 import e3_scenario  # noqa: E402
from e1_scenario import e1_scenario  # noqa: E402


class BenchError(Exception):
    """A run failed: one line for the user."""


def timed(cmd: list[str]) -> tuple[str, float]:
    """stdout and wall-clock seconds of `cmd`, pinned to core 0."""
    start = time.perf_counter()
    done = subprocess.run(["taskset", "-c", "0", *cmd], capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise BenchError(f"{Path(cmd[0]).name} exited {done.returncode}: {last}")
    return done.stdout, wall


def run_rss(cmd: list[str]) -> tuple[str, int]:
    """stdout and maximum resident size (KiB) of `cmd`, from its own rusage."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stderr is not None
    out = proc.stdout.read()
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        last = (err.strip().splitlines() or ["(no message)"])[-1]
        raise BenchError(f"{Path(cmd[0]).name} exited {code}: {last}")
    return out, usage.ru_maxrss


def speed(ns3: str, netsim_time: str, router: str, work: Path, repeat: int) -> dict[str, Any]:
    scenario = work / "e3.json"
    scenario.write_text(json.dumps(e3_scenario(15.0, 42)) + "\n")
    ns3_rates, netsim_rates = [], []
    ns3_packets = netsim_packets = 0
    for _ in range(repeat):
        out = work / "ns3.json"
        timed([ns3, f"--out={out}", "--duration=15", "--seed=42"])
        data = json.loads(out.read_text())
        ns3_packets = data["delivered_packets"]
        ns3_rates.append(ns3_packets / data["wall_s"])
        text, _ = timed([netsim_time, str(scenario), router])
        data = json.loads(text)
        netsim_packets = data["delivered_packets"]
        netsim_rates.append(netsim_packets / data["run_s"])
    return {
        "ns3_packets": ns3_packets,
        "netsim_packets": netsim_packets,
        "ns3_rate": max(ns3_rates),
        "netsim_rate": max(netsim_rates),
        "ratio": max(netsim_rates) / max(ns3_rates),
    }


def e1(netsim: str, netsim_time: str, router: str, work: Path, repeat: int) -> dict[str, Any]:
    scenario = work / "e1.json"
    scenario.write_text(json.dumps(e1_scenario(1, 3000.0)) + "\n")
    walls = []
    for i in range(repeat):
        _, wall = timed([netsim, str(scenario), router, str(work / f"e1_out{i}")])
        walls.append(wall)
    text, _ = timed([netsim_time, str(scenario), router])
    return {"walls": walls} | json.loads(text)


MemoryRow = tuple[float, int, int, int, int]


def memory(netsim: str, netsim_time: str, router: str, work: Path) -> list[MemoryRow]:
    """Per duration: (simulated s, packets delivered, max RSS in KiB without sampling,
    with the samples streamed, with them kept)."""
    rows = []
    for seconds in (30.0, 300.0):
        sampled = work / f"e3_{seconds:g}.json"
        bare = work / f"e3_{seconds:g}_bare.json"
        data = e3_scenario(seconds, 42)
        sampled.write_text(json.dumps(data) + "\n")
        del data["sample"]
        bare.write_text(json.dumps(data) + "\n")
        _, rss_bare = run_rss([netsim_time, str(bare), router])
        out = work / f"e3_{seconds:g}_out"
        _, rss_streamed = run_rss([netsim, str(sampled), router, str(out)])
        packets = json.loads((out / "results.json").read_text())["delivered_packets"]
        _, rss_kept = run_rss([netsim_time, str(sampled), router])
        rows.append((seconds, packets, rss_bare, rss_streamed, rss_kept))
    return rows


def report(s: dict[str, Any], e: dict[str, Any], mem: list[MemoryRow]) -> str:
    verdict = "met" if s["ratio"] >= 10 else "NOT met"
    e1_verdict = "met" if max(e["walls"]) < 1 else "NOT met"
    lines = [
        "# ratelab-netsim speed (make bench-netsim)",
        "",
        "## E3 dumbbell, 15 s simulated, one core each",
        "",
        "| | packets delivered | delivered packets per wall-clock second |",
        "|---|---:|---:|",
        f"| ns-3 3.37 | {s['ns3_packets']} | {s['ns3_rate']:,.0f} |",
        f"| ratelab-netsim | {s['netsim_packets']} | {s['netsim_rate']:,.0f} |",
        "",
        f"ratio {s['ratio']:.2f}x (target at least 10x: {verdict})",
        "",
        "## E1-sized run (9 routers, 15 Reno transfers of 1,500 packets, 3,000 s simulated)",
        "",
        "whole `ratelab-netsim` command on one core: "
        + ", ".join(f"{w:.3f}" for w in e["walls"])
        + f" s (target under 1 s: {e1_verdict}); building (reading the scenario, loading "
        f"and compiling the router program once, configuring 9 routers) {e['build_s']:.3f} s, "
        f"running {e['run_s']:.3f} s; {e['delivered_packets']} packets delivered, "
        f"{e['events']} events",
        "",
        "## Memory (E3 dumbbell; max RSS in MB)",
        "",
        "Sampling: E3's, the queues and the senders every 10 ms. Streamed: the "
        "`ratelab-netsim` command (the samples written to their files as they are "
        "taken); kept: the library's `Simulator::run`, which returns them in memory.",
        "",
        "| simulated s | packets delivered | no sampling | sampling, streamed | sampling, kept |",
        "|---:|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {sec:g} | {pk} | {bare / 1024:.1f} | {streamed / 1024:.1f} | {kept / 1024:.1f} |"
        for sec, pk, bare, streamed, kept in mem
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ns3", required=True, help="build/ns3/e3_dumbbell")
    ap.add_argument("--netsim-dir", required=True, help="where ratelab-netsim(-time) are")
    ap.add_argument("--router", required=True, help="router.p4 compiled (router.json)")
    ap.add_argument("--out", required=True, help="the Markdown report to write")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    if args.repeat < 1:
        print(f"bench_netsim: --repeat: expected 1 or more, got {args.repeat}", file=sys.stderr)
        return 2
    netsim = str(Path(args.netsim_dir) / "ratelab-netsim")
    netsim_time = str(Path(args.netsim_dir) / "ratelab-netsim-time")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            s = speed(args.ns3, netsim_time, args.router, work, args.repeat)
            e = e1(netsim, netsim_time, args.router, work, args.repeat)
            mem = memory(netsim, netsim_time, args.router, work)
    except (BenchError, OSError, json.JSONDecodeError, KeyError) as err:
        print(f"bench_netsim: {err}", file=sys.stderr)
        return 1
    text = report(s, e, mem)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
