"""ratelab-stack TCP flows in Mininet through ratelab-switch: a ratelab Vegas flow
and a ratelab Reno flow, each alone on a 10 Mbit/s, 20 ms dumbbell with a
50-packet FIFO queue. Both complete without a reset and fill the bottleneck;
Vegas leaves slow start without a loss and keeps the queue at a few packets
where Reno fills it. Needs root and Debian's Mininet, as CI has."""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from ratelab_net.cli import main

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (Mininet)")

BOTTLENECK_BPS = 10e6
TOPOLOGY = """\
duration: 10s
poll_interval: 0.1s
routers:
  r1: {router_id: 10.0.0.1}
hosts: [a, b]
links:
  - {ends: [a, r1], rate: 100mbit, delay: 1ms}
  - ends: [r1, b]
    rate: 10mbit
    delay: 20ms
    queue_limit: 50
    reverse: {rate: 100mbit}
flows:
  - {name: flow, from: a, to: b, transport: tcp, stack: ratelab, cc: vegas, start: 0.5s, stop: 9.5s}
variants:
  vegas: {}
  reno:
    flows[0].cc: reno
"""
# The bottleneck's queue (r1's port 2, toward b) once Vegas has settled: it leaves
# slow start without a loss and holds its window from about 1.5 s on (docs/NET.md,
# "ratelab stacks in Mininet").
SETTLED_S = (3.0, 9.5)


def _settled_queue(router_csv: Path) -> tuple[float, int]:
    """Mean and max of the port's last_q samples within SETTLED_S (seconds from the
    start of the traffic)."""
    with router_csv.open() as f:
        rows = [r for r in csv.DictReader(f) if r["port"] == "2"]
    q = [int(r["last_q"]) for r in rows if SETTLED_S[0] <= float(r["elapsed_s"]) <= SETTLED_S[1]]
    assert len(q) > 20, rows[-1:]
    return sum(q) / len(q), max(q)


def _json(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def test_vegas_keeps_the_queue_short_where_reno_fills_it(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    r1_r2_leftovers: Callable[[], list[str]],
) -> None:
    path = tmp_path / "stacks.yaml"
    path.write_text(TOPOLOGY)
    out = tmp_path / "out"
    code = main(["run", str(path), "--out", str(out), "--no-plots"])
    text = capsys.readouterr().out
    assert code == 0, text
    assert not r1_r2_leftovers()
    queues = {}
    for variant in ("vegas", "reno"):
        sender = _json(out / variant / "flow.json")["flows"][0]
        summary = {k: v for k, v in sender.items() if k != "samples"}
        assert sender["stack"] == "ratelab" and sender["state"] == "closed", summary
        assert not sender.get("error"), summary
        # no RST either way: the receiver's kernel never reset the ratelab connection
        assert (sender["resets_received"], sender["resets_sent"]) == (0, 0), summary
        # the receiver's kernel saw the stream end with a FIN, never a reset
        sink = _json(out / variant / "flow.sink.json")["flows"]
        assert [c["end"] for c in sink] == ["fin"], sink
        assert sender["goodput_bps"] > 0.8 * BOTTLENECK_BPS, (variant, sender["goodput_bps"])
        queues[variant] = _settled_queue(out / variant / "r1.csv")
    # Vegas leaves slow start before the queue overflows (measured: no
    # retransmission in 15 of 15 runs; Reno 83 to 101). A Vegas whose round trips
    # never end (ISN >= 2^31 before the stack's fix) grows until the queue
    # overflows and stays there: this and the queue check below catch it. (Its
    # window may hold still once settled: 41-42 segments in one run.)
    vegas = _json(out / "vegas" / "flow.json")["flows"][0]
    reno = _json(out / "reno" / "flow.json")["flows"][0]
    retx = (vegas["retransmissions"], reno["retransmissions"])
    assert retx[0] <= 5 and retx[1] > 30, retx
    # measured in 15 runs (docs/NET.md): Vegas mean 3.1-5.6 packets, Reno mean
    # 26-32 of 50
    assert queues["vegas"][0] < 8 and queues["reno"][0] > 3 * queues["vegas"][0], queues
