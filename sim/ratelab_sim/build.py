"""Compiling the router program with a compiler that has p4c's command line."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ROUTER_P4 = ROOT / "p4src" / "router.p4"


class BuildError(Exception):
    """The program did not compile; str() holds the compiler's own messages."""


def default_p4c() -> str | None:
    """ratelab-p4c next to this Python (the venv's bin), else on PATH."""
    local = Path(sys.executable).parent / "ratelab-p4c"
    return str(local) if local.exists() else shutil.which("ratelab-p4c")


def compile_router(p4c: str, out_dir: Path, quiet: bool = False) -> tuple[Path, Path]:
    """router.p4 -> (out_dir/router.json, out_dir/router.p4info.txtpb)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    p4info = out_dir / "router.p4info.txtpb"
    cmd = [*shlex.split(p4c), "--target", "bmv2", "--arch", "v1model", "-o", str(out_dir)]
    cmd += [str(ROUTER_P4), "--p4runtime-files", str(p4info)]
    if not quiet:
        print(f"compiling: {shlex.join(cmd)}", flush=True)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True)
    except FileNotFoundError:
        raise BuildError(f"compiler not found: {cmd[0]}") from None
    if proc.returncode != 0:
        raise BuildError(f"compiling router.p4 failed:\n{proc.stdout}{proc.stderr}".rstrip())
    json_path = out_dir / "router.json"
    if not json_path.exists() or not p4info.exists():
        raise BuildError(f"the compiler did not write {json_path} and {p4info}")
    return json_path, p4info
