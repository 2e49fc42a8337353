"""Two network namespaces joined by a veth pair, for end-to-end tests and
benchmarks of the host stacks (no switch in between), built on the project's
network harness (`ratelab_sim.Netns`, `ratelab_sim.VethPair`): names rl<pid>...,
IPv6 and offloads off, everything removed on exit, also after a failure. The
processes started through ``spawn`` are ended on exit."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import ratelab_sim

HOST_STACKS = Path(__file__).resolve().parents[1]  # on PYTHONPATH of spawned commands
ADDR_A = "10.201.0.1"
ADDR_B = "10.201.0.2"


def can_make_namespaces() -> str | None:
    """None if this machine can run the tests, else why not."""
    if os.geteuid() != 0:
        return "needs root (network namespaces)"
    if shutil.which("ip") is None:
        return "needs iproute2's ip"
    if shutil.which("ethtool") is None:
        return "needs ethtool (veth offloads off)"
    return None


@dataclass
class VethPair:
    ns_a: str
    ns_b: str
    procs: list[subprocess.Popen[str]] = field(default_factory=list)

    def spawn(self, ns: str, *args: str) -> subprocess.Popen[str]:
        """`python -m ratelab_hosts ARGS` inside namespace `ns`."""
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(HOST_STACKS), env.get("PYTHONPATH", "")) if p
        )
        proc = subprocess.Popen(
            ["ip", "netns", "exec", ns, sys.executable, "-m", "ratelab_hosts", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.procs.append(proc)
        return proc

    def _end_processes(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
            proc.communicate()


@contextmanager
def veth_pair() -> Iterator[VethPair]:
    """Namespaces <tag>a and <tag>b (tag = `ratelab_sim.unique_prefix()`), each
    holding the veth end of the same name, addressed ADDR_A and ADDR_B (/24)."""
    tag = ratelab_sim.unique_prefix()
    with ExitStack() as stack:
        ns_a = stack.enter_context(ratelab_sim.Netns(f"{tag}a"))
        ns_b = stack.enter_context(ratelab_sim.Netns(f"{tag}b"))
        link = stack.enter_context(ratelab_sim.VethPair(f"{tag}a", f"{tag}b", ns_a.name, ns_b.name))
        for ns, iface, addr in ((ns_a, link.a, ADDR_A), (ns_b, link.b, ADDR_B)):
            ns.add_address(iface, f"{addr}/24")
        pair = VethPair(ns_a.name, ns_b.name)
        stack.callback(pair._end_processes)  # before the namespaces go
        yield pair
