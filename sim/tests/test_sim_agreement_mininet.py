"""The simulator agrees with Mininet (issue 16, docs/NET.md "Simulation"): the
dumbbell example's small FIFO, shortened to 8 s, once in Mininet (kernel
Cubic) and once simulated. Goodput within 10 %, the issue's target; the mean
bottleneck queue within 30 %, looser than the issue's 20 % because 8 s of
one real-time run leave it noisy (over the full 20 s, three runs each, the
table in docs/NET.md). Needs root and Debian's Mininet, as CI has; by hand,
under `flock /tmp/ratelab-mininet.lock` on a shared machine (the test does
not take the lock itself)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from ratelab_net.agreement import Case, measure, run_one, within
from ratelab_net.topology import load_variants
from ratelab_sim.build import ROOT

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (Mininet)")

SHORT = ["duration=8s", "flows[0].stop=7s", "flows[1].stop=8s"]


def test_dumbbell_goodput_and_queue_agree(
    tmp_path: Path, r1_r2_leftovers: Callable[[], list[str]]
) -> None:
    case = Case(str(ROOT / "sim" / "examples" / "dumbbell.yaml"), "small-fifo")
    [(_, topo)] = load_variants(case.topology, SHORT, case.variant)
    runs = {}
    for backend in ("mininet", "sim"):
        run_one(case, backend, 1, tmp_path, SHORT, lock=False)
        runs[backend] = measure(topo, case.run_dir(tmp_path, backend, 1))
    assert not r1_r2_leftovers()
    mininet, sim = runs["mininet"], runs["sim"]
    report = f"Mininet {mininet}, simulated {sim}"
    assert mininet.goodput_bps["bulk"] > 8e6, report  # the 10 Mbit/s link is filled
    assert within(sim.goodput_bps["bulk"], mininet.goodput_bps["bulk"], 0.10), report
    assert mininet.queue["r1.2"] > 3, report  # a standing queue to compare
    assert within(sim.queue["r1.2"], mininet.queue["r1.2"], 0.30), report
