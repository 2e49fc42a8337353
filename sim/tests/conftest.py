"""Shared helpers of the sim tests."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable

import pytest


def _ours() -> set[str]:
    """Namespaces and links named after this test process (rl<pid>...)."""
    prefix = f"rl{os.getpid()}"
    names = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    return {w for w in re.split(r"[\s:@]+", names + links) if w.startswith(prefix)}


@pytest.fixture
def ours() -> Callable[[], set[str]]:
    """What this test process's runs left in the kernel: empty after a clean run."""
    return _ours


def _router_leftovers(routers: tuple[str, ...]) -> list[str]:
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    procs = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    ifaces = tuple(f"{r}-eth" for r in routers)
    left = [w for w in links.split() if w.startswith(ifaces)]
    # the routers' switch processes, attached to their interfaces
    left += [p for p in procs.splitlines() if any(f"@{i}" in p for i in ifaces)]
    return left


@pytest.fixture
def r1_r2_leftovers() -> Callable[[], list[str]]:
    """Interfaces and switch processes of routers r1 and r2 (the Mininet
    tests' topologies) still present: empty after a clean run."""
    return lambda: _router_leftovers(("r1", "r2"))
