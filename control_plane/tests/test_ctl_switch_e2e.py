"""End to end against the project's own switch daemon (`ratelab-switch`, switch/).

The daemon runs as a subprocess on a free port, twice: over the switch
helpers' in-memory engine double (switch/tests/switch_daemon_with_fake_engine.py:
the real daemon and P4Runtime server, which check every request against the
P4Info), and over the Rust engine when its Python extension (`ratelab_engine`)
is built.
"""

from __future__ import annotations

import importlib.util
import os
import selectors
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from ctl_support import ROOT, Compiled
from ratelab_ctl.configfile import load_config
from ratelab_ctl.connection import SwitchConnection
from ratelab_ctl.controller import Controller

SWITCH = ROOT / "switch"
FAKE_LAUNCHER = SWITCH / "tests" / "switch_daemon_with_fake_engine.py"


def _daemon_command(kind: str) -> list[str]:
    if kind == "rust-engine":
        if importlib.util.find_spec("ratelab_engine") is None:
            pytest.skip("the ratelab_engine extension is not built (make deps)")
        return [sys.executable, "-m", "ratelab_switch.daemon"]
    if not FAKE_LAUNCHER.exists():
        pytest.fail(f"{FAKE_LAUNCHER} is gone: the switch's engine double is needed")
    return [sys.executable, str(FAKE_LAUNCHER)]


@pytest.fixture(params=["engine-double", "rust-engine"])
def switch_addr(request: pytest.FixtureRequest, compiled: Compiled) -> Iterator[str]:
    if not (SWITCH / "ratelab_switch").is_dir():
        pytest.skip("switch/ratelab_switch is not in this tree")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(SWITCH), str(SWITCH / "tests"), env.get("PYTHONPATH", "")]
    )
    proc = subprocess.Popen(
        [*_daemon_command(request.param), "--no-p4", "--grpc-server-addr", "127.0.0.1:0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + 30
        lines: list[str] = []
        addr = None
        while addr is None and time.monotonic() < deadline:
            if not sel.select(timeout=deadline - time.monotonic()):
                break
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            if line.startswith("Server listening on "):
                addr = line.split()[-1]
        if addr is None:
            pytest.fail("ratelab-switch did not start:\n" + "".join(lines))
        yield addr
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_push_example_and_change_it_at_run_time(
    switch_addr: str, compiled: Compiled, example_path: Path
) -> None:
    cfg = load_config(example_path)
    with SwitchConnection(switch_addr, timeout=10).open() as conn:
        ctl = Controller(conn)
        ctl.push_pipeline(compiled.json, compiled.p4info)
        ctl.apply_config(cfg)
        # the switch reads back exactly what was installed, default entry included
        installed, changes = ctl.plan(cfg)
        assert changes == []
        assert any(e.table == "RouterIngress.router_config" for e in installed)
        # run-time changes: a preset, the utilisation target, a route
        new = load_config(
            example_path,
            ["ports.3.aqm.preset=redok-edge", "ports.1.utilisation=0.9", "routes.10.0.2.0/24=~"],
        )
        changes = ctl.reconcile(new)
        assert {c.kind for c in changes} == {"delete", "modify"}
        assert ctl.plan(new)[1] == []
        assert sorted(e.key for e in ctl.routes_installed()) == [
            ((0x0A000100, 24),),
            ((0x0A000300, 24),),
        ]
        snap = ctl.read_counters()
        assert list(snap.ports) == [1, 2, 3]
        assert snap.gauges  # the ratelab switch serves register reads
        assert all(v == 0 for pc in snap.ports.values() for v in pc.as_dict().values())
