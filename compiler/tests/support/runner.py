"""Run ratelab-p4c in-process (or as the installed command) and load what it writes."""

from __future__ import annotations

import contextlib
import inspect
import io
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from finsy.proto.p4.config.v1 import p4info_pb2
from google.protobuf import json_format, text_format

TESTS_DIR = Path(__file__).resolve().parent.parent
PROGRAMS_DIR = TESTS_DIR / "programs"
ERRORS_DIR = TESTS_DIR / "errors"
COMMAND = Path(sys.executable).parent / "ratelab-p4c"

P4INFO_SUFFIXES = ("p4info.txtpb", "p4info.json", "p4info.bin")


@dataclass
class CompileResult:
    """What one compiler run produced."""

    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    outdir: Path
    name: str

    @property
    def json_path(self) -> Path:
        return self.outdir / f"{self.name}.json"

    def p4info_path(self, suffix: str = "p4info.txtpb") -> Path:
        return self.outdir / f"{self.name}.{suffix}"

    def describe(self) -> str:
        """A summary for assertion messages."""
        return f"argv={self.argv}\nrc={self.returncode}\nstderr:\n{self.stderr}"


def run_compiler(argv: list[str]) -> tuple[int, str, str]:
    """Call ratelab_p4c.cli.main in this process; returns (exit code, stdout, stderr)."""
    from ratelab_p4c import cli  # imported late: a missing cli fails tests, not collection

    out, err = io.StringIO(), io.StringIO()
    takes_argv = bool(inspect.signature(cli.main).parameters)
    saved_argv = sys.argv
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            if takes_argv:
                code = cli.main(argv)
            else:
                sys.argv = ["ratelab-p4c", *argv]
                code = cli.main()
        except SystemExit as exc:
            code = exc.code
        finally:
            sys.argv = saved_argv
    if code is None:
        rc = 0
    elif isinstance(code, int):
        rc = code
    else:  # SystemExit("message") prints the message and exits with 1
        err.write(f"{code}\n")
        rc = 1
    return rc, out.getvalue(), err.getvalue()


def run_command(argv: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run the installed ratelab-p4c command."""
    return subprocess.run(
        [str(COMMAND), *argv], capture_output=True, text=True, timeout=60, cwd=cwd
    )


def standard_argv(src: Path, outdir: Path, name: str, extra: tuple[str, ...] = ()) -> list[str]:
    """p4c's command line for BMv2/v1model with all three P4Info formats."""
    p4rt = ",".join(str(outdir / f"{name}.{suffix}") for suffix in P4INFO_SUFFIXES)
    return [
        "--target",
        "bmv2",
        "--arch",
        "v1model",
        "--std",
        "p4-16",
        "-o",
        str(outdir),
        "--p4runtime-files",
        p4rt,
        *extra,
        str(src),
    ]


def compile_file(src: Path, outdir: Path, extra: tuple[str, ...] = ()) -> CompileResult:
    outdir.mkdir(parents=True, exist_ok=True)
    name = src.stem
    argv = standard_argv(src, outdir, name, extra)
    rc, out, err = run_compiler(argv)
    return CompileResult(argv, rc, out, err, outdir, name)


def load_json(path: Path) -> dict[str, Any]:
    with path.open() as f:
        data: dict[str, Any] = json.load(f)
    return data


def load_p4info(path: Path) -> p4info_pb2.P4Info:
    """Decode a P4Info file; the format follows the file name's suffix."""
    info = p4info_pb2.P4Info()
    if path.suffix == ".bin":
        info.ParseFromString(path.read_bytes())
    elif path.suffix == ".json":
        json_format.Parse(path.read_text(), info)
    else:
        text_format.Parse(path.read_text(), info)
    return info
