"""Two network namespaces joined by a veth pair, for end-to-end tests and
benchmarks of the host stacks (no switch in between). Names carry a prefix
and the pid so parallel runs do not collide (interface names stay within 15
characters); everything is removed on exit, also after a failure, and the
processes started through ``spawn`` are ended."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

HOST_STACKS = Path(__file__).resolve().parents[1]  # on PYTHONPATH of spawned commands
ADDR_A = "10.201.0.1"
ADDR_B = "10.201.0.2"


def can_make_namespaces() -> str | None:
    """None if this machine can run the tests, else why not."""
    if os.geteuid() != 0:
        return "needs root (network namespaces)"
    if shutil.which("ip") is None:
        return "needs iproute2's ip"
    return None


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


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


@contextmanager
def veth_pair(prefix: str = "rlh") -> Iterator[VethPair]:
    """Namespaces PREFIX<pid>a and PREFIX<pid>b, each holding the veth end of
    the same name, addressed ADDR_A and ADDR_B (/24)."""
    tag = f"{prefix}{os.getpid()}"
    if len(tag) + 1 > 15:
        raise ValueError(f"prefix {prefix!r} makes interface names longer than 15 characters")
    pair = VethPair(f"{tag}a", f"{tag}b")
    created: list[str] = []
    try:
        for ns in (pair.ns_a, pair.ns_b):
            _ip("netns", "add", ns)
            created.append(ns)
            _ip("-n", ns, "link", "set", "lo", "up")
        _ip("-n", pair.ns_a, "link", "add", f"{tag}a", "type", "veth", "peer", "name", f"{tag}b")
        _ip("-n", pair.ns_a, "link", "set", f"{tag}b", "netns", pair.ns_b)
        for ns, dev, addr in ((pair.ns_a, f"{tag}a", ADDR_A), (pair.ns_b, f"{tag}b", ADDR_B)):
            _ip("-n", ns, "addr", "add", f"{addr}/24", "dev", dev)
            _ip("-n", ns, "link", "set", dev, "up")
        yield pair
    finally:
        for proc in pair.procs:
            if proc.poll() is None:
                proc.kill()
            proc.communicate()
        for ns in created:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
