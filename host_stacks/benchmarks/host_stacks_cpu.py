"""CPU per data packet of the host stacks, in memory, in one run, with ratios
against the Python rate-based host they replace (`make bench-host-stacks`).

- TCP (crate ratelab-stack, `ratelab-stack-bench`): per congestion control,
  the sender's share (send + ACK processing, the issue's definition: the
  receiver's segments are recorded once and replayed to a lone sender) and
  both endpoints together.
- The rate-based host (sender + receiver + ACK): the Rust crate alone
  (`rbcc-host-bench`), through the Python binding, and the Python state
  machines it replaced (from git history, rbcc_host_cpu.py).

Every number is CPU time of the measuring thread or process, best of
--repeat runs. Writes a table to --out and prints it.

    host_stacks_cpu.py --stack-bench target/release/ratelab-stack-bench \\
        --rbcc-bench target/release/rbcc-host-bench --out bench/results/host_stacks_cpu.txt
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import rbcc_host_cpu  # beside this file (sys.path above)

TARGET_NS = 1_000  # the target: under 1 us per data packet on one core


def run(command: list[str]) -> str:
    try:
        done = subprocess.run(command, check=True, capture_output=True, text=True)
    except FileNotFoundError:
        raise SystemExit(f"{command[0]}: not found (build it first, see the make target)") from None
    except subprocess.CalledProcessError as exc:
        last = (exc.stderr or exc.stdout or "").strip().splitlines() or ["no output"]
        raise SystemExit(f"{command[0]} failed (status {exc.returncode}): {last[-1]}") from None
    return done.stdout


def tcp_rows(binary: str, packets: int, repeat: int) -> list[tuple[str, float | None, float]]:
    """(case, sender ns or None, both ns) per line of ratelab-stack-bench."""
    lines = run([binary, str(packets), str(repeat)]).strip().splitlines()
    if not lines or lines[0].split("\t") != ["case", "sender_ns", "both_ns", "packets"]:
        raise SystemExit(f"{binary}: unexpected output header {lines[:1]!r}")
    rows = []
    for line in lines[1:]:
        fields = line.split("\t")
        if len(fields) != 4:
            raise SystemExit(f"{binary}: unexpected output line {line!r}")
        case, sender, both, _ = fields
        rows.append((case, None if sender == "-" else float(sender), float(both)))
    return rows


def rbcc_native(binary: str, packets: int, repeat: int) -> float:
    out = run([binary, str(packets), str(repeat)])
    found = re.search(r"([\d.]+) ns CPU per data packet", out)
    if found is None:
        raise SystemExit(f"{binary}: unexpected output {out.strip()!r}")
    return float(found.group(1))


def table(
    tcp: list[tuple[str, float | None, float]],
    rbcc: list[tuple[str, float]],
    python_ns: float,
) -> list[str]:
    out = [
        "| stack | what one data packet costs | ns CPU | Python RBCC host / this |",
        "|---|---|---:|---:|",
    ]

    def row(stack: str, what: str, ns: float) -> None:
        out.append(f"| {stack} | {what} | {ns:,.0f} | {python_ns / ns:,.0f}x |")

    for case, sender, both in tcp:
        if sender is not None:
            row(f"TCP {case}", "sender: send + ACK processing", sender)
        row(f"TCP {case}", "sender + receiver", both)
    for stack, ns in rbcc:
        row(stack, "sender + receiver + ACK", ns)
    worst = max(s for _, s, _ in tcp if s is not None)
    verdict = "met" if worst < TARGET_NS else "NOT met"
    out.append("")
    out.append(
        f"TCP sender, worst case: {worst:,.0f} ns per data packet; target under"
        f" {TARGET_NS:,} ns on one core: {verdict}"
    )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--stack-bench", required=True, metavar="BIN", help="ratelab-stack-bench")
    parser.add_argument("--rbcc-bench", required=True, metavar="BIN", help="rbcc-host-bench")
    parser.add_argument("--tcp-packets", type=int, default=1_000_000)
    parser.add_argument("--rbcc-packets", type=int, default=2_000_000, help="Rust alone")
    parser.add_argument("--python-packets", type=int, default=100_000, help="binding, Python")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if min(args.tcp_packets, args.rbcc_packets, args.python_packets, args.repeat) < 1:
        parser.error("packet counts and --repeat must be >= 1")

    load = os.getloadavg()[0]
    tcp = tcp_rows(args.stack_bench, args.tcp_packets, args.repeat)
    rust = rbcc_native(args.rbcc_bench, args.rbcc_packets, args.repeat)
    from ratelab_hosts import rbcc_receiver, rbcc_sender

    py_args = argparse.Namespace(packets=args.python_packets, repeat=args.repeat)
    binding = rbcc_host_cpu.measure("rust via Python binding", rbcc_sender, rbcc_receiver, py_args)
    with tempfile.TemporaryDirectory() as tmp:
        legacy_mods = rbcc_host_cpu.legacy_modules(rbcc_host_cpu.LEGACY_COMMIT, Path(tmp))
        python_ns = rbcc_host_cpu.measure("python state machines", *legacy_mods, py_args)
    legacy = rbcc_host_cpu.LEGACY_COMMIT[:8]
    rbcc = [
        ("RBCC host, Rust crate alone", rust),
        ("RBCC host, Rust through the Python binding", binding),
        (f"RBCC host, Python state machines (replaced; commit {legacy})", python_ns),
    ]
    load_after = os.getloadavg()[0]
    header = [
        "# CPU per data packet of the host stacks in memory, one thread (make bench-host-stacks;"
        " host_stacks/benchmarks/host_stacks_cpu.py)",
        f"# {platform.machine()}, {os.cpu_count()} CPUs, {time.strftime('%Y-%m-%d %H:%M')},"
        f" load average {load:.1f} at the start and {load_after:.1f} at the end;"
        f" best of {args.repeat}; TCP: {args.tcp_packets} packets of 1448 bytes, 1 MB buffers;"
        f" RBCC: 1000-byte packets at 1 Gbit/s",
        "",
    ]
    lines = header + table(tcp, rbcc, python_ns)
    print("\n".join(lines))
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
