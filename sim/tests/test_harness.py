"""The network harness cleans up after itself: namespaces, veth pairs and switch
processes are gone after the block, also when it raised or got SIGTERM. Needs
root (as CI runs)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from ratelab_sim import (
    HarnessError,
    Netns,
    SwitchError,
    SwitchProcess,
    VethPair,
    sweep,
    terminate_as_exception,
)
from ratelab_sim.netns import link_exists, netns_exists, unique_prefix
from ratelab_sim.signals import Terminated
from ratelab_sim.switch import port_open, resolve_target


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def _ethtool_features(iface: str, netns: str) -> dict[str, str]:
    out = subprocess.run(
        ["ip", "netns", "exec", netns, "ethtool", "-k", iface],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    features = {}
    for line in out.splitlines()[1:]:
        name, _, state = line.strip().partition(":")
        features[name] = state.strip().split(" ")[0]
    return features


def test_names_are_unique_and_short() -> None:
    names = {unique_prefix() for _ in range(800)}
    assert len(names) == 800
    for n in names:
        assert n.startswith(f"rl{os.getpid()}") and len(n) + 3 <= 15
        assert n[len(f"rl{os.getpid()}") :].isalpha()  # sweep reads the pid back


def test_netns_and_veth_created_then_removed() -> None:
    with Netns() as ns:
        assert netns_exists(ns.name)
        a, b = f"{ns.name}a", f"{ns.name}b"
        with VethPair(a, b, ns.name, ns.name):
            assert link_exists(a, ns.name) and link_exists(b, ns.name)
            features = _ethtool_features(a, ns.name)
            for f in (
                "tcp-segmentation-offload",
                "generic-segmentation-offload",
                "generic-receive-offload",
                "tx-checksumming",
                "rx-checksumming",
                "rx-vlan-offload",
            ):
                assert features[f] == "off", f
            ipv6 = ns.run(["cat", f"/proc/sys/net/ipv6/conf/{a}/disable_ipv6"]).stdout.strip()
            assert ipv6 == "1"
            up = ns.run(["ip", "-o", "link", "show", a]).stdout
            assert "UP" in up
        assert not link_exists(a, ns.name)
        assert not link_exists(b, ns.name)
    assert not netns_exists(ns.name)


def test_hosts_in_two_namespaces_reach_each_other() -> None:
    with Netns() as h1, Netns() as h2:
        a, b = f"{h1.name}e", f"{h2.name}e"
        with VethPair(a, b, h1.name, h2.name):
            h1.set_mac(a, "02:00:00:00:aa:01")
            h1.add_address(a, "10.77.0.1/24")
            h2.add_address(b, "10.77.0.2/24")
            h2.add_route("10.78.0.0/16", b, via="10.77.0.1")
            mac_a = h1.run(["cat", f"/sys/class/net/{a}/address"]).stdout.strip()
            assert mac_a == "02:00:00:00:aa:01"
            h2.add_neighbor("10.77.0.1", mac_a, b)
            neigh = h2.run(["ip", "neigh", "show", "10.77.0.1"]).stdout
            assert "PERMANENT" in neigh and mac_a in neigh
            ping = h2.run(["ping", "-c", "1", "-W", "2", "10.77.0.1"], check=False)
            assert ping.returncode == 0, ping.stdout + ping.stderr
            assert "10.78.0.0/16 via 10.77.0.1" in h2.run(["ip", "route"]).stdout


def test_root_namespace_veth_removed() -> None:
    name = unique_prefix()
    with VethPair(f"{name}a", f"{name}b"):
        assert link_exists(f"{name}a") and link_exists(f"{name}b")
    assert not link_exists(f"{name}a") and not link_exists(f"{name}b")


def test_cleanup_after_an_exception() -> None:
    name = unique_prefix()
    with (
        pytest.raises(RuntimeError, match="boom"),
        Netns(name) as ns,
        VethPair(f"{name}a", f"{name}b", ns.name, None),
    ):
        assert link_exists(f"{name}b")
        raise RuntimeError("boom")
    assert not netns_exists(name)
    assert not link_exists(f"{name}b")


def test_veth_half_built_is_removed() -> None:
    name = unique_prefix()
    with pytest.raises(HarnessError), VethPair(f"{name}a", f"{name}b", "rl-no-such-ns", None):
        pass
    assert not link_exists(f"{name}a") and not link_exists(f"{name}b")


def test_bad_names_refused() -> None:
    with pytest.raises(HarnessError):
        VethPair("x" * 16, "y")
    with pytest.raises(HarnessError):
        Netns("bad name")


def test_netns_kills_processes_left_inside() -> None:
    with Netns() as ns:
        proc = subprocess.Popen(ns.exec_args(["sleep", "60"]))
        deadline = time.monotonic() + 5
        while proc.pid not in ns.pids():  # `ip netns exec` has joined and exec'd
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.01)
    assert proc.wait(timeout=5) == -signal.SIGKILL


def test_sigterm_unwinds_and_cleans_up() -> None:
    name = unique_prefix()
    with pytest.raises(Terminated), terminate_as_exception(), Netns(name):
        assert netns_exists(name)
        os.kill(os.getpid(), signal.SIGTERM)
    assert not netns_exists(name)
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL or callable(
        signal.getsignal(signal.SIGTERM)
    )


def test_sweep_removes_only_dead_runs_leftovers() -> None:
    dead = _dead_pid()
    stale_ns, stale_link = f"rl{dead}z", f"rl{dead}q"
    live_ns = f"rl{os.getpid()}live"
    subprocess.run(["ip", "netns", "add", stale_ns], check=True)
    subprocess.run(
        ["ip", "link", "add", stale_link, "type", "veth", "peer", "name", f"rl{dead}r"],
        check=True,
    )
    try:
        with Netns(live_ns):
            removed = sweep()
            assert f"netns {stale_ns}" in removed
            assert not netns_exists(stale_ns)
            assert not link_exists(stale_link) and not link_exists(f"rl{dead}r")
            assert netns_exists(live_ns)  # this process is alive: left alone
    finally:
        subprocess.run(["ip", "netns", "delete", stale_ns], capture_output=True)
        subprocess.run(["ip", "link", "del", stale_link], capture_output=True)


def test_switch_process_starts_and_stops(tmp_path: Path) -> None:
    log = tmp_path / "switch.log"
    with Netns() as ns:
        a, b = f"{ns.name}a", f"{ns.name}b"
        with (
            VethPair(a, b, ns.name, ns.name),
            SwitchProcess(None, {1: a}, log, target="ratelab", netns=ns.name) as sw,
        ):
            assert sw.alive()
            assert port_open("127.0.0.1", sw.grpc_port or 0, ns.name)
            proc = sw.proc
            assert proc is not None
        assert proc.poll() is not None  # stopped
        assert not sw.alive()
        assert not port_open("127.0.0.1", sw.grpc_port or 0, ns.name)
    assert "--grpc-server-addr" in log.read_text()


def test_switch_startup_failure_is_reported(tmp_path: Path) -> None:
    bad = tmp_path / "broken.json"
    bad.write_text("{not json")
    with Netns() as ns:
        sw = SwitchProcess(bad, {}, tmp_path / "log", target="ratelab", netns=ns.name)
        with pytest.raises(SwitchError, match="during startup"):
            sw.start()
        assert not sw.alive()
        assert ns.pids() == []


def test_bmv2_target_without_bmv2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("RATELAB_TARGET", "bmv2")
    assert resolve_target() == "bmv2"
    sw = SwitchProcess(tmp_path / "x.json", {}, tmp_path / "log")
    with pytest.raises(SwitchError, match="simple_switch_grpc is not on PATH"):
        sw.start()


def test_unknown_target() -> None:
    with pytest.raises(SwitchError, match="unknown target"):
        resolve_target("tofino")


def test_interrupted_runner_leaves_nothing(tmp_path: Path) -> None:
    """A child process that builds a namespace and gets SIGTERM removes it."""
    script = tmp_path / "child.py"
    script.write_text(
        "import sys, time\n"
        "from ratelab_sim import Netns, terminate_as_exception\n"
        "with terminate_as_exception(), Netns() as ns:\n"
        "    print(ns.name, flush=True)\n"
        "    time.sleep(60)\n"
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(Path(__file__).resolve().parents[1]), env.get("PYTHONPATH", "")]
    )
    proc = subprocess.Popen(
        [sys.executable, str(script)], stdout=subprocess.PIPE, text=True, env=env
    )
    assert proc.stdout is not None
    name = proc.stdout.readline().strip()
    assert netns_exists(name)
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=10)
    assert not netns_exists(name)
