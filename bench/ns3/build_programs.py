"""Builds a comparison's two programs for the tests, as `make` and `cargo` would
(incrementally): the ns-3 program through its make rule, the ratelab one with cargo."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def build(make_target: Path, cargo_package: str, cargo_binary: str) -> None:
    # a make that runs the tests must not hand its jobserver to the inner make
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    subprocess.run(
        ["make", "-s", "--no-print-directory", str(make_target.relative_to(ROOT))],
        cwd=ROOT,
        env=env,
        check=True,
    )
    subprocess.run(
        ["cargo", "build", "--quiet", "-p", cargo_package, "--bin", cargo_binary],
        cwd=ROOT,
        check=True,
    )
