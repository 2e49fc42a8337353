"""What the tests of router.p4 on ratelab's engine share: the program as
ratelab-p4c compiles it, and a controller's table entries written into an
engine as P4Runtime would write them."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def compile_router(out: Path) -> bytes:
    """router.p4 compiled into `out` (with its P4Info): router.json's bytes."""
    p4c = shutil.which("ratelab-p4c") or str(Path(sys.executable).parent / "ratelab-p4c")
    cmd = [p4c, "--target", "bmv2", "--arch", "v1model", "-o", str(out)]
    cmd += [str(ROOT / "p4src" / "router.p4"), "--p4runtime-files", str(out / "r.p4info.txtpb")]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return (out / "router.json").read_bytes()


def _key(value: int | tuple[int, int]) -> tuple[str, int, int]:
    if isinstance(value, tuple):
        return ("lpm", value[0], value[1])
    return ("exact", value, 0)


def install_entries(engine: Any, entries: Iterable[Any]) -> None:
    """Each entry added to its table, or set as its default action (no key)."""
    for entry in entries:
        if entry.key:
            engine.table_add(
                entry.table, [_key(k) for k in entry.key], entry.action, list(entry.params), 0
            )
        else:
            engine.table_set_default(entry.table, entry.action, list(entry.params))
