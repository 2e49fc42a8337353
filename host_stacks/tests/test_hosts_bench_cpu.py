"""host_stacks/benchmarks/host_stacks_cpu.py (make bench-host-stacks): reading the
benchmark binaries' output, the table and its ratios, and one-line errors. No timing."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "host_stacks_cpu.py"


def load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("host_stacks_cpu", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["host_stacks_cpu"] = module
    spec.loader.exec_module(module)
    return module


def fake(tmp_path: Path, body: str) -> str:
    """An executable that runs `body` (sh) and records its arguments."""
    path = tmp_path / "bench"
    path.write_text(f'#!/bin/sh\necho "$@" > {tmp_path}/args\n{body}\n')
    path.chmod(0o755)
    return str(path)


def test_tcp_rows_read_the_stack_benchmark(tmp_path: Path) -> None:
    cpu = load()
    binary = fake(
        tmp_path,
        "printf 'case\\tsender_ns\\tboth_ns\\tpackets\\n"
        "newreno, delayed ACKs\\t150.5\\t280.0\\t1000\\n"
        "newreno through the testbed simulator\\t-\\t540.0\\t500\\n'",
    )
    rows = cpu.tcp_rows(binary, 1000, 2)
    assert rows == [
        ("newreno, delayed ACKs", 150.5, 280.0),
        ("newreno through the testbed simulator", None, 540.0),
    ]
    assert (tmp_path / "args").read_text().split() == ["1000", "2"]


def test_rbcc_native_reads_the_rust_benchmark(tmp_path: Path) -> None:
    cpu = load()
    binary = fake(tmp_path, "echo 'rust (crate ...): 113 ns CPU per data packet (2 packets)'")
    assert cpu.rbcc_native(binary, 2, 5) == 113.0


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("echo 'what'", "unexpected output header"),
        ("printf 'case\\tsender_ns\\tboth_ns\\tpackets\\nx\\t1\\n'", "unexpected output line"),
        ("echo oops >&2; echo 'last words' >&2; exit 3", "failed (status 3): last words"),
    ],
)
def test_bad_benchmark_output_is_one_line(tmp_path: Path, body: str, message: str) -> None:
    cpu = load()
    with pytest.raises(SystemExit, match=re.escape(message)) as exc:
        cpu.tcp_rows(fake(tmp_path, body), 10, 1)
    assert "\n" not in str(exc.value.code)


def test_a_missing_binary_says_so(tmp_path: Path) -> None:
    cpu = load()
    with pytest.raises(SystemExit, match="not found"):
        cpu.rbcc_native(str(tmp_path / "absent"), 10, 1)


def test_table_gives_ratios_against_the_python_host_and_the_verdict() -> None:
    cpu = load()
    tcp = [("cubic", 200.0, 400.0), ("sim", None, 800.0)]
    lines = cpu.table(tcp, [("RBCC host, Python", 20_000.0)], 20_000.0)
    assert "| TCP cubic | sender: send + ACK processing | 200 | 100x |" in lines
    assert "| TCP cubic | sender + receiver | 400 | 50x |" in lines
    assert "| TCP sim | sender + receiver | 800 | 25x |" in lines
    assert "| RBCC host, Python | sender + receiver + ACK | 20,000 | 1x |" in lines
    assert lines[-1].endswith("target under 1,000 ns on one core: met")
    slow = cpu.table([("vegas", 1500.0, 2000.0)], [], 20_000.0)
    assert slow[-1].endswith(": NOT met") and "1,500 ns" in slow[-1]
