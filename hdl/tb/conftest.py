"""pytest setup for the cocotb testbenches: makes hdlsim importable, points at Verilator.

Parameter sweeps: each testbench runs at one parameter set by default (`make test`);
the other sets are marked ``sweep`` (``pytest.param(..., marks=pytest.mark.sweep)``)
and run only with ``--sweep`` (`make test-all`). Without it they are deselected, not
skipped, and the summary line counts them as deselected.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hdlsim import setup_verilator_env

setup_verilator_env()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--sweep",
        action="store_true",
        help="also run the parameter sets marked 'sweep' (make test-all)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "sweep: a testbench's non-default parameter set; runs only with --sweep"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--sweep"):
        return
    sweeps = [item for item in items if item.get_closest_marker("sweep") is not None]
    if sweeps:
        config.hook.pytest_deselected(items=sweeps)
        items[:] = [item for item in items if item.get_closest_marker("sweep") is None]
