"""ratelab-net end to end: a short two-router topology in Mininet with TCP, UDP,
RBCC and ping through ratelab-switch routers. The routers' counters must account
for every packet the hosts sent (received + counted drops), and nothing may be
left behind. Needs root and Debian's Mininet, as CI has."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from ratelab_net.cli import main

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (Mininet)")

TOPOLOGY = """\
duration: 4s
poll_interval: 0.2s
routers:
  r1: {router_id: 10.0.0.1}
  r2: {router_id: 10.0.0.2}
hosts: [a, b, c]
links:
  - {ends: [a, r1], rate: 100mbit, delay: 1ms}
  - {ends: [c, r1], rate: 100mbit}
  - ends: [r1, r2]
    rate: 5mbit
    delay: 10ms
    queue_limit: 30
    aqm: red-hspa
    reverse: {rate: 50mbit}
  - {ends: [r2, b], rate: 100mbit, delay: 2ms}
flows:
  - {name: bulk, from: a, to: b, transport: tcp, cc: reno, start: 0.5s, stop: 3.5s}
  - {name: cbr, from: c, to: b, transport: udp, rate: 1mbit, start: 0.5s, stop: 3s}
  - {name: rate, from: c, to: b, transport: rbcc, rate: 2mbit, start: 0.5s, stop: 3s}
  - {name: ping, from: b, to: a, transport: ping, interval: 0.2s, start: 0s, stop: 4s}
"""


def test_run_conserves_packets_and_leaves_nothing(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    r1_r2_leftovers: Callable[[], list[str]],
) -> None:
    path = tmp_path / "line.yaml"
    path.write_text(TOPOLOGY)
    out = tmp_path / "out"
    assert not r1_r2_leftovers(), "a previous run left something behind"
    code = main(["run", str(path), "--out", str(out)])
    text = capsys.readouterr().out
    assert code == 0, text
    assert not r1_r2_leftovers()
    assert ": conserved" in text, text
    assert "switches lost" in text  # ratelab-switch reports its own losses
    lines = {line.split()[0]: line for line in text.splitlines() if line.strip()}
    # every flow ran and measured something
    assert "Mbit/s" in lines["bulk"] and "tcp reno" in lines["bulk"]
    assert "/20 received" in lines["ping"] or "/19 received" in lines["ping"]
    assert "received" in lines["cbr"] and "received" in lines["rate"]
    # the 5 Mbit/s link r1 -> r2 carried the traffic toward b
    assert int(lines["r1.3"].split()[2]) > 500
    for name in ("r1.csv", "r2.csv", "bulk.json", "plots.png"):
        assert (out / name).stat().st_size > 0
    # ping's RTT includes the emulated delays: 2 x (1 + 10 + 2) ms at least
    rtt = lines["ping"].split()[4]  # min/mean/max
    assert float(rtt.split("/")[0]) >= 26.0


def test_bad_topology_builds_nothing(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    r1_r2_leftovers: Callable[[], list[str]],
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(TOPOLOGY.replace("cc: reno", "cc: vegas2"))
    assert main(["run", str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "flows[0].cc: 'vegas2' is not available in this kernel (available: " in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not r1_r2_leftovers()
