"""Shared by the controller's tests (a uniquely named module: several test
folders of this project have a conftest.py, so tests do not import from it)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from ratelab_p4info import Schema

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "control_plane" / "examples" / "router.yaml"


@dataclass(frozen=True)
class Compiled:
    json: Path
    p4info: Path
    schema: Schema


def compile_router(out: Path, extra: list[str]) -> subprocess.CompletedProcess[str]:
    p4c = shutil.which("ratelab-p4c") or str(Path(sys.executable).parent / "ratelab-p4c")
    cmd = [
        p4c,
        "--target",
        "bmv2",
        "--arch",
        "v1model",
        *extra,
        "-o",
        str(out),
        str(ROOT / "p4src" / "router.p4"),
        "--p4runtime-files",
        str(out / "router.p4info.txtpb"),
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)
