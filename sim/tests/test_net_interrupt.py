"""ratelab-net interrupted: Ctrl-C (SIGINT) or SIGTERM in the middle of the traffic
takes the whole network down (no interface, namespace or router process left)
and exits with 130 and one line. Needs root and Debian's Mininet, as CI has."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (Mininet)")

TOPOLOGY = """\
duration: 30s
routers:
  x1: {}
hosts: [ha, hb]
links:
  - {ends: [ha, x1], rate: 10mbit, delay: 5ms}
  - {ends: [x1, hb], rate: 10mbit}
flows:
  - {name: bulk, from: ha, to: hb, transport: tcp, cc: cubic}
  - {name: ping, from: hb, to: ha, transport: ping, interval: 0.2s}
"""


def _leftovers() -> list[str]:
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    procs = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    left = [w for w in links.split() if w.startswith(("x1-eth", "ha-eth", "hb-eth"))]
    left += [p for p in procs.splitlines() if "@x1-eth" in p or "tcp-sink --listen 10.0.2" in p]
    return left


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["sigint", "sigterm"])
def test_interrupted_run_takes_everything_down(tmp_path: Path, signum: int) -> None:
    path = tmp_path / "long.yaml"
    path.write_text(TOPOLOGY)
    cmd = [sys.executable, "-m", "ratelab_net.cli", "run", str(path), "--out", str(tmp_path)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    deadline = time.monotonic() + 60
    for line in proc.stdout:  # wait until the traffic runs
        if "started bulk" in line or time.monotonic() > deadline:
            break
    time.sleep(1.0)
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "the network was taken down" in lines[0], err
    assert not _leftovers()
