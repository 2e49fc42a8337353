"""Shared fixtures: each test program is compiled once per session, in-process."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# The helpers under support/ are imported by the test modules as `support.*`.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from support.builder import Builder


@pytest.fixture(scope="session")
def build(tmp_path_factory: pytest.TempPathFactory) -> Builder:
    return Builder(tmp_path_factory.mktemp("compiled"))
