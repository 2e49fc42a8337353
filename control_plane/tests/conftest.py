"""Fixtures: router.p4 compiled once per session, the example config, the
P4Runtime test double."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from ctl_support import EXAMPLE, Compiled, compile_router
from p4rt_double import FakeP4Runtime, FakeServer
from ratelab_p4info import Schema


@pytest.fixture(scope="session")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Compiled:
    """router.p4 built by ratelab-p4c; a failed build fails every test that needs it."""
    out = tmp_path_factory.mktemp("build")
    result = compile_router(out, [])
    if result.returncode != 0:
        pytest.fail(f"ratelab-p4c cannot compile router.p4:\n{result.stderr}")
    p4info = out / "router.p4info.txtpb"
    return Compiled(out / "router.json", p4info, Schema.load(p4info))


@pytest.fixture
def fake_switch() -> Iterator[FakeServer]:
    with FakeServer(FakeP4Runtime()) as server:
        yield server


@pytest.fixture
def example_path() -> Path:
    return EXAMPLE
