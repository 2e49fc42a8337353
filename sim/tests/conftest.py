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
