"""RBCC.md Amendment 1 on the live `make run` path: a lone RBCC flow whose
desired rate is below the bottleneck's capacity holds that rate. Before the
amendment it counted as limited at its own rate, was stamped capacity minus
itself (187,500 B/s) and oscillated against its desired 1,000,000 B/s.

Runs router_run for 10 s of traffic with one sender and no UDP (about 20 s in
all); needs root, as CI runs."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from ratelab_model.packet import RATE_UNLIMITED
from ratelab_sim.router_run import main

DESIRED_BPS = 8_000_000  # 1,000,000 B/s, below port 3's 1,187,500 B/s
DESIRED = DESIRED_BPS // 8
DURATION_S = 10.0

# The example's router with one sender: port 3 (10 Mbit/s, utilisation 0.95)
# is the bottleneck and the receiver's port.
LONE_SENDER = """\
router_id: 10.0.0.1
device_id: 0
address: 127.0.0.1:9559
rbcc: {min_rate: 1500, idle_timeout: 1s, abt_slots: 1024}
ports:
  1: {mac: "02:00:00:00:00:01", rate: 1gbit, queue_limit: 64, aqm: fifo}
  3:
    mac: "02:00:00:00:00:03"
    rate: 10mbit
    delay: 20ms
    queue_limit: 2xBDP
    utilisation: 0.95
    aqm: {preset: redok-hspa, seed: 7}
next_hops:
  sender1:  {port: 1, mac: "02:00:00:00:01:01"}
  receiver: {port: 3, mac: "02:00:00:00:01:03"}
routes:
  10.0.1.0/24: sender1
  10.0.3.0/24: receiver
"""


def test_bad_rbcc_rate_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--rbcc-rate", "fast"]) == 2
    err = capsys.readouterr().err.strip()
    assert "fast" in err and len(err.splitlines()) == 1 and "Traceback" not in err
    assert main(["--rbcc-rate", "0"]) == 2
    assert "--rbcc-rate must be above 0" in capsys.readouterr().err


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (network namespaces)")
def test_lone_flow_below_capacity_keeps_its_rate_live(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    ours: Callable[[], set[str]],
) -> None:
    config = tmp_path / "lone.yaml"
    config.write_text(LONE_SENDER)
    out_dir = tmp_path / "run"
    args = ["--config", str(config), "--duration", f"{DURATION_S:g}", "--udp-rate", "0"]
    code = main([*args, "--rbcc-rate", f"{DESIRED_BPS}bit", "--out", str(out_dir)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert not ours()

    (flow,) = json.loads((out_dir / "rbcc_send_sender1.json").read_text())["flows"]
    assert flow["desired_rate"] == DESIRED and flow["state"] == "closed", flow
    assert flow["send_span_s"] >= DURATION_S - 0.5, flow
    # Every change of (rate, return_rate, return_bottle_node) the sender saw:
    # once the first ACK is in, one echoed rate for the rest of the run, its
    # own desired rate, lowered by no router.
    echoed = [s for s in flow["rates"] if s["return_rate"] != RATE_UNLIMITED]
    assert echoed, flow["rates"]
    assert {(s["return_rate"], s["return_bottle_node"], s["rate"]) for s in echoed} == {
        (DESIRED, 0, DESIRED)
    }, flow["rates"]
    assert echoed[0]["t_s"] < 1.0, flow["rates"]  # held from the start, not settled late
    assert f"echoed rate {DESIRED} B/s for " in out

    # The ABT at the bottleneck: the flow's entry is written when it arrives
    # and then only hit (an oscillating flow is a cache miss on every change).
    rows = (out_dir / "series.csv").read_text().splitlines()
    header = rows[0].split(",")
    samples = [dict(zip(header, r.split(","), strict=True)) for r in rows[1:]]
    port3 = [s for s in samples if s["port"] == "3"]
    final = {k: int(float(v)) for k, v in port3[-1].items() if k != "time"}
    assert final["rbcc_packets"] > 1000, final
    assert final["abt_updates"] <= 2, final
