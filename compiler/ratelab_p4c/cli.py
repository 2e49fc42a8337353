"""`ratelab-p4c`: p4c's command line for the BMv2 simple_switch target (v1model).

    ratelab-p4c [--target bmv2] [--arch v1model] [-b bmv2] [-o DIR|FILE.json]
                [--p4runtime-files F[,F...]] [--p4runtime-file F --p4runtime-format FMT]
                [-I DIR]... [-D NAME[=VALUE]]... [--std p4-16] file.p4

Writes <out>/<program>.json (or the file given with `-o x.json`, as p4c-bm2-ss does) and
each P4Runtime file in the format its extension names (.txt/.txtpb text, .json JSON,
.bin binary).  Nothing is written unless the whole compilation succeeds.

Exit status: 0 success, 1 error in the program or the command line, 2 internal error.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

from . import __version__
from .errors import CompileError

_TARGETS = {"bmv2", "bmv2-ss", "bmv2-v1model"}
_STDS = {"p4-16", "p4_16", "p4-16-2", "p4"}


class UsageError(Exception):
    """A bad command line."""


@dataclass
class Options:
    source: str
    output: str | None = None
    # (path, explicit format or None to use the extension)
    p4runtime_files: list[tuple[str, str | None]] = field(default_factory=list)
    include_dirs: list[str] = field(default_factory=list)
    defines: dict[str, str] = field(default_factory=dict)
    verbose: bool = False


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


def _arg_parser() -> _Parser:
    p = _Parser(
        prog="ratelab-p4c",
        description="P4_16 compiler for the BMv2 simple_switch target (v1model), "
        "command-line compatible with p4c / p4c-bm2-ss.",
        add_help=False,
    )
    p.add_argument("source", nargs="?", help="the P4_16 program")
    p.add_argument("-h", "--help", action="store_true", help="show this help and exit")
    p.add_argument("--version", action="store_true", help="show the version and exit")
    p.add_argument("--target", default="bmv2", help="compiler target (only bmv2)")
    p.add_argument(
        "-b",
        "--backend",
        dest="backend",
        default=None,
        help="back end (only bmv2), as p4c's driver",
    )
    p.add_argument("--arch", default="v1model", help="architecture (only v1model)")
    p.add_argument("--std", "-x", dest="std", default="p4-16", help="language (only p4-16)")
    p.add_argument("--p4v", dest="p4v", default=None, help="language version (only 16)")
    p.add_argument(
        "-o",
        "--output",
        dest="output",
        default=None,
        help="output directory, or the JSON file name when it ends in .json",
    )
    p.add_argument(
        "--p4runtime-files",
        dest="p4rt_files",
        action="append",
        default=[],
        help="comma-separated P4Info files; format from the extension",
    )
    p.add_argument(
        "--p4runtime-file",
        dest="p4rt_file",
        action="append",
        default=[],
        help="P4Info file (older p4c option; see --p4runtime-format)",
    )
    p.add_argument(
        "--p4runtime-format",
        dest="p4rt_format",
        default=None,
        choices=["binary", "json", "text"],
        help="format for --p4runtime-file",
    )
    p.add_argument(
        "--p4info",
        dest="p4info",
        action="append",
        default=[],
        help="P4Info file in protobuf text format",
    )
    p.add_argument(
        "-I",
        dest="include",
        action="append",
        default=[],
        metavar="DIR",
        help="add an include directory",
    )
    p.add_argument(
        "-D",
        dest="define",
        action="append",
        default=[],
        metavar="NAME[=VALUE]",
        help="define a preprocessor macro",
    )
    p.add_argument("-v", "--verbose", action="store_true", help="print progress")
    p.add_argument("--Wdisable", nargs="?", const="", default=None, help=argparse.SUPPRESS)
    p.add_argument("--Wwarn", nargs="?", const="", default=None, help=argparse.SUPPRESS)
    return p


def parse_args(argv: list[str]) -> Options | None:
    """Options from the command line; None when --help / --version was handled."""
    p = _arg_parser()
    ns = p.parse_args(argv)
    if ns.help:
        sys.stdout.write(p.format_help())
        return None
    if ns.version:
        sys.stdout.write(f"ratelab-p4c {__version__} (p4c-bm2-ss compatible; BMv2 JSON 2.23)\n")
        return None
    for what, value in (("target", ns.target), ("back end", ns.backend)):
        if value is not None and value.lower() not in _TARGETS:
            raise UsageError(f"unsupported {what} `{value}`: this compiler targets bmv2 only")
    if ns.arch.lower() != "v1model":
        raise UsageError(f"unsupported architecture `{ns.arch}`: only v1model is supported")
    if ns.p4v is not None and ns.p4v not in ("16", "p4-16"):
        raise UsageError(f"unsupported language version `{ns.p4v}`: only 16 is supported")
    if ns.std.lower() not in _STDS:
        raise UsageError(f"unsupported language `{ns.std}`: only p4-16 is supported")
    if ns.source is None:
        raise UsageError("no input file (usage: ratelab-p4c [options] file.p4)")
    opts = Options(ns.source, ns.output, verbose=ns.verbose)
    from .p4info import format_for

    for item in ns.p4rt_files:
        for f in item.split(","):
            if not f:
                continue
            try:
                fmt = format_for(f, ns.p4rt_format)
            except CompileError as e:
                raise UsageError(e.message) from None
            opts.p4runtime_files.append((f, fmt))
    # The older option: the format comes from --p4runtime-format (text by default).
    opts.p4runtime_files.extend((f, ns.p4rt_format or "text") for f in ns.p4rt_file)
    opts.p4runtime_files.extend((f, "text") for f in ns.p4info)
    opts.include_dirs = list(ns.include)
    for d in ns.define:
        name, _, value = d.partition("=")
        if not name:
            raise UsageError(f"bad macro definition `-D{d}`")
        opts.defines[name] = value if "=" in d else "1"
    return opts


def _json_path(opts: Options) -> str:
    base = os.path.splitext(os.path.basename(opts.source))[0] + ".json"
    out = opts.output
    if out is None:
        return base
    if out.endswith(".json") and not os.path.isdir(out):
        return out
    return os.path.join(out, base)


@dataclass
class Compilation:
    """Everything one compilation produced: output files (path -> bytes), the back-end
    result, the P4Info message and the time spent (ms) in the front and back end."""

    outputs: dict[str, bytes]
    result: Any
    p4info: Any
    frontend_ms: float
    backend_ms: float


def compile_all(opts: Options) -> Compilation:
    """Compile and build every output in memory (nothing is written)."""
    from .backend import compile_program
    from .frontend import parse_and_check
    from .p4info import build_p4info, format_for, serialize

    if not os.path.isfile(opts.source):
        raise CompileError(f"{opts.source}: no such file")
    t0 = time.perf_counter()
    program = parse_and_check(opts.source, include_dirs=opts.include_dirs, defines=opts.defines)
    for w in getattr(program, "warnings", []):
        sys.stderr.write(w + "\n")
    t1 = time.perf_counter()
    result = compile_program(program, opts.source)
    outputs: dict[str, bytes] = {
        _json_path(opts): (json.dumps(result.json, indent=2) + "\n").encode()
    }
    info = build_p4info(result.cp)
    for path, fmt in opts.p4runtime_files:
        outputs[path] = serialize(info, fmt or format_for(path))
    t2 = time.perf_counter()
    if opts.verbose:
        sys.stderr.write(
            f"front end {1000 * (t1 - t0):.1f} ms, back end {1000 * (t2 - t1):.1f} ms\n"
        )
    return Compilation(outputs, result, info, 1000 * (t1 - t0), 1000 * (t2 - t1))


def build_outputs(opts: Options) -> dict[str, bytes]:
    """Compile and return every output file's path and content (nothing written)."""
    return compile_all(opts).outputs


def write_atomically(outputs: dict[str, bytes]) -> None:
    """Write every file via a temporary file + rename; on failure remove what was
    staged so no partial output is left behind."""
    staged: list[tuple[str, str]] = []
    try:
        for path, data in outputs.items():
            directory = os.path.dirname(path) or "."
            os.makedirs(directory, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".ratelab-p4c-", dir=directory)
            staged.append((tmp, path))
            os.fchmod(fd, 0o666 & ~_umask())
            with os.fdopen(fd, "wb") as f:
                f.write(data)
        for tmp, path in staged:
            os.replace(tmp, path)
        staged = []
    finally:
        for tmp, _ in staged:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def run(argv: list[str]) -> int:
    try:
        opts = parse_args(argv)
        if opts is None:
            return 0
        outputs = build_outputs(opts)
        write_atomically(outputs)
        return 0
    except UsageError as e:
        sys.stderr.write(f"ratelab-p4c: error: {e}\n")
        return 1
    except CompileError as e:
        sys.stderr.write(e.format() + "\n")
        return 1
    except OSError as e:
        sys.stderr.write(f"error: {e.filename or ''}: {e.strerror or e}\n")
        return 1
    except RecursionError:
        sys.stderr.write("internal compiler error: program nesting is too deep\n")
        return 2
    except Exception as e:
        notes = "; ".join(getattr(e, "__notes__", []))
        where = f" ({notes})" if notes else ""
        sys.stderr.write(f"internal compiler error: {type(e).__name__}: {e}{where}\n")
        return 2


def main() -> None:
    sys.exit(run(sys.argv[1:]))


if __name__ == "__main__":
    main()
