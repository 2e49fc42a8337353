"""hdl/ command line: lint (Verilator -Wall, Verilog 2001), synth (yosys), bench (throughput).

python hdl/scripts/hdl_tool.py lint
python hdl/scripts/hdl_tool.py synth [--top MODULE] [--generic]
python hdl/scripts/hdl_tool.py bench --out FILE
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

HDL_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HDL_DIR / "tb"))

from hdlsim import RTL_DIR, setup_verilator_env  # noqa: E402

# Modules synthesised by `synth`, with the parameters they are synthesised with.
# The first one is the whole core once it exists; the others are checked too.
SYNTH_TOPS: list[tuple[str, dict[str, int]]] = [
    ("router_core", {}),
]
# The quick check `make test` runs (seconds, not minutes): elaborate the whole
# core, turn processes into logic, flatten, and assert yosys' `check` finds no
# problem (multiple drivers, combinational loops, undriven signals) and no
# latch was inferred. `make synth` runs the full technology mapping.


def rtl_files() -> list[Path]:
    return sorted(RTL_DIR.glob("*.v"))


def module_names() -> list[str]:
    names = []
    for f in rtl_files():
        m = re.search(r"^\s*module\s+(\w+)", f.read_text(), re.MULTILINE)
        if m is None:
            raise SystemExit(f"{f}: no module")
        if m.group(1) != f.stem:
            raise SystemExit(f"{f}: module {m.group(1)} must be in {m.group(1)}.v")
        names.append(m.group(1))
    return names


# hdl/rtl is plain Verilog 2001 (IEEE 1364-2001): lint parses every file at that
# level, so a Verilog 2005 / SystemVerilog construct ($clog2, $error, logic, ...)
# is an error here, not only in a stricter tool downstream.
LINT_LANGUAGE = "1364-2001"


def lint() -> int:
    env = setup_verilator_env(dict(os.environ))
    files = [str(f) for f in rtl_files()]
    failed = 0
    for name in module_names():
        cmd = [
            "verilator",
            "--lint-only",
            "-Wall",
            "--default-language",
            LINT_LANGUAGE,
            "--top-module",
            name,
            *files,
        ]
        r = subprocess.run(cmd, env=env, capture_output=True, text=True)
        status = "ok" if r.returncode == 0 and not r.stderr.strip() else "FAIL"
        print(f"lint {name}: {status}")
        if status != "ok":
            failed += 1
            sys.stdout.write(r.stdout + r.stderr)
    return 1 if failed else 0


def yosys_script(top: str, params: dict[str, int], generic: bool, check: bool = False) -> str:
    files = " ".join(str(f) for f in rtl_files())
    chparam = " ".join(f"-set {k} {v}" for k, v in params.items())
    lines = [f"read_verilog -defer {files}"]
    if chparam:
        lines.append(f"chparam {chparam} {top}")
    lines += [
        f"hierarchy -check -top {top}",
        "proc",
        # no latches anywhere: a latch here is a bug in a combinational block
        "select -assert-none t:$dlatch t:$adlatch t:$dlatchsr",
    ]
    if check:
        lines += ["flatten", "opt_clean", "check -assert", "stat"]
    elif generic:
        lines += [f"synth -flatten -top {top}", "select -assert-none t:$_DLATCH*", "stat"]
    else:
        lines += [
            f"synth_xilinx -flatten -top {top} -family xc7",
            "select -assert-none t:LD*",
            "stat",
        ]
    return "\n".join(lines) + "\n"


RESOURCE_CELLS = ("LUT", "FD", "RAMB", "DSP48", "SRL", "CARRY4", "MUXF7", "MUXF8", "RAM")


def summarise(stat: str) -> dict[str, int]:
    """Sum the cell counts of the last `stat` report into LUT/FF/BRAM/DSP figures."""
    tail = stat[stat.rfind("Printing statistics.") :]
    counts: dict[str, int] = {}
    for m in re.finditer(r"^\s+(\S+)\s+(\d+)\s*$", tail, re.MULTILINE):
        counts[m.group(1)] = counts.get(m.group(1), 0) + int(m.group(2))
    out = {"LUT": 0, "FF": 0, "BRAM36": 0.0, "DSP": 0, "LUTRAM": 0}
    for cell, n in counts.items():
        if cell.startswith("LUT"):
            out["LUT"] += n
        elif cell.startswith("FD"):
            out["FF"] += n
        elif cell.startswith("RAMB36"):
            out["BRAM36"] += n
        elif cell.startswith("RAMB18"):
            out["BRAM36"] += n / 2
        elif cell.startswith("DSP48"):
            out["DSP"] += n
        elif cell.startswith("RAM") and "M" in cell[3:]:
            out["LUTRAM"] += n
    return out


def synth(top: str | None, generic: bool, check: bool = False) -> int:
    if shutil.which("yosys") is None:
        raise SystemExit("yosys not found (apt-get install yosys)")
    tops = [t for t in SYNTH_TOPS if top is None or t[0] == top]
    if not tops:
        tops = [(top, {})] if top else []
    out_dir = HDL_DIR / "synth" / "build"
    out_dir.mkdir(parents=True, exist_ok=True)
    rc = 0
    for name, params in tops:
        tag = f"{name}{'-check' if check else ''}"
        script = out_dir / f"{tag}.ys"
        script.write_text(yosys_script(name, params, generic, check))
        log = out_dir / f"{tag}.log"
        r = subprocess.run(
            ["yosys", "-q", "-l", str(log), "-s", str(script)], capture_output=True, text=True
        )
        text = log.read_text() if log.exists() else ""
        warnings = sum(1 for line in text.splitlines() if line.startswith("Warning:"))
        if r.returncode != 0:
            print(f"synth {name}: FAIL (see {log})")
            print(
                "\n".join(line for line in text.splitlines() if "ERROR" in line or "Assert" in line)
            )
            rc = 1
            continue
        pstr = ",".join(f"{k}={v}" for k, v in params.items()) or "defaults"
        if check or generic:
            what = "elaborated, checked" if check else "generic gates"
            print(
                f"synth {name} ({pstr}): ok ({what}), no latches, "
                f"{warnings} yosys warnings (log: {log})"
            )
            continue
        res = summarise(text)
        print(
            f"synth {name} ({pstr}): LUT {res['LUT']}  FF {res['FF']}  "
            f"BRAM36 {res['BRAM36']:g}  DSP {res['DSP']}  LUTRAM {res['LUTRAM']}  "
            f"(xc7, flattened, no latches; {warnings} yosys warnings, log: {log})"
        )
    return rc


def bench(out: Path) -> int:
    """Throughput and latency of router_core at DATA_WIDTH 64, 128 and 256 (cocotb
    bench_core through pytest), written to ``out`` as JSON and printed."""
    repo = HDL_DIR.parent
    rows_file = out.with_suffix(".jsonl").resolve()
    rows_file.unlink(missing_ok=True)
    env = {**os.environ, "HDL_BENCH_OUT": str(rows_file)}
    test = "hdl/tb/router_core/test_router_core.py::test_router_core_throughput"
    # --sweep: the 128 and 256 widths are sweep parameter sets (hdl/tb/conftest.py)
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "--sweep", test], env=env, cwd=repo)
    if r.returncode != 0 or not rows_file.exists():
        print("bench: the throughput test failed")
        return 1
    rows = [json.loads(line) for line in rows_file.read_text().splitlines() if line]
    rows_file.unlink()
    out.write_text(
        json.dumps(
            {
                "what": "router_core, 4 ports, back-to-back 60-byte frames on all ports "
                "(each ingress to its own egress), Verilator simulation; line rates "
                "assume a 250 MHz clock",
                "results": rows,
            },
            indent=1,
        )
        + "\n"
    )
    print(
        f"{'width':>5} {'traffic':>7} {'cyc/pkt':>8} {'latency':>8} {'Gbit/s/port (84B wire)':>23}"
    )
    for row in rows:
        print(
            f"{row['data_width']:>5} {row['traffic']:>7} {row['cycles_per_packet_out']:>8.2f} "
            f"{row['latency_first_in_to_first_out_cycles']:>8} "
            f"{row['gbit_per_s_per_port_at_250MHz_wire_84B']:>23.2f}"
        )
    print(f"written to {out}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("lint")
    sp = sub.add_parser("synth")
    sp.add_argument("--top")
    sp.add_argument("--generic", action="store_true", help="generic gates instead of xc7")
    sp.add_argument(
        "--check", action="store_true", help="quick check: elaborate, no latches, `check`"
    )
    bp = sub.add_parser("bench")
    bp.add_argument("--out", required=True)
    args = ap.parse_args()
    if args.cmd == "lint":
        return lint()
    if args.cmd == "synth":
        return synth(args.top, args.generic, args.check)
    return bench(Path(args.out))


if __name__ == "__main__":
    sys.exit(main())
