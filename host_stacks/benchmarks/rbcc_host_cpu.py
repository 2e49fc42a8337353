"""CPU per data packet of the rate-based host (RbccSender + RbccReceiver), in memory.

One sender and one receiver joined by a lossless, zero-delay path, driven
as fast as they go: every datagram the sender emits goes straight to the
receiver and every ACK straight back, with the clock advanced to each
pacing slot. Measures process CPU time per data packet (the sender's work,
the receiver's ACK, the sender's ACK processing and the application taking
the delivered data), best of a few repetitions (the others lost time to
other processes on the machine).

    rbcc_host_cpu.py                     ratelab_hosts as installed (the Rust binding)
    rbcc_host_cpu.py --legacy COMMIT     the Python state machines of that commit
                                         (extracted with `git show`; they were removed
                                         when the Rust port replaced them)
    rbcc_host_cpu.py --all --native BIN  both, plus the Rust crate alone (BIN:
                                         target/release/rbcc-host-bench), with ratios

With --out, writes the result lines to that file.
"""

from __future__ import annotations

import argparse
import importlib
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

FLOW = 7
RATE = 125_000_000  # 1 Gbit/s of 1000-byte packets: one every 8 us
# The last commit with the Python RbccSender / RbccReceiver / Pacer.
LEGACY_COMMIT = "fdacee97b58f9b22bec2fab0b7012316ef18768b"
LEGACY_FILES = ("pacing.py", "wire.py", "rbcc_sender.py", "rbcc_receiver.py")
REPO = Path(__file__).resolve().parents[2]


def one_run(sender_mod: ModuleType, receiver_mod: ModuleType, packets: int) -> float:
    """CPU seconds for one connection of `packets` data packets."""
    config = sender_mod.SenderConfig(
        desired_rate=RATE, initial_rate=RATE, size=1000, segments=packets, flow_id=FLOW
    )
    sender: Any = sender_mod.RbccSender(config, 0)
    receiver: Any = receiver_mod.RbccReceiver(FLOW)
    start = time.process_time()
    while (now := sender.poll_at()) is not None:
        for datagram in sender.on_timer(now):
            for ack in receiver.on_datagram(now, datagram):
                sender.on_datagram(now, ack)
            receiver.take_delivered()
    elapsed = time.process_time() - start
    sent, received = sender.summary(), receiver.summary()
    if sent["state"] != "closed" or received["packets_received"] != packets:
        raise SystemExit(f"benchmark run did not complete: {sent}")
    return elapsed


def legacy_modules(commit: str, into: Path) -> tuple[ModuleType, ModuleType]:
    """The Python sender and receiver of `commit`, as package `rbcc_legacy`."""
    package = into / "rbcc_legacy"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for name in LEGACY_FILES:
        try:
            source = subprocess.run(
                ["git", "-C", str(REPO), "show", f"{commit}:host_stacks/ratelab_hosts/{name}"],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
        except (OSError, subprocess.CalledProcessError) as exc:
            # git's own first line says why (not a repository, unknown commit in a shallow clone).
            why = (getattr(exc, "stderr", None) or str(exc)).strip().splitlines()[0]
            raise SystemExit(
                f"cannot read host_stacks/ratelab_hosts/{name} of commit {commit} with git in"
                f" {REPO} (the legacy Python stack needs a git clone holding that commit): {why}"
            ) from None
        (package / name).write_text(source.replace("ratelab_hosts.", "rbcc_legacy."))
    sys.path.insert(0, str(into))
    return (
        importlib.import_module("rbcc_legacy.rbcc_sender"),
        importlib.import_module("rbcc_legacy.rbcc_receiver"),
    )


def measure(label: str, sender_mod: ModuleType, receiver_mod: ModuleType, args: Any) -> float:
    best = min(one_run(sender_mod, receiver_mod, args.packets) for _ in range(args.repeat))
    ns = best * 1e9 / args.packets
    print(
        f"{label}: {ns:,.0f} ns CPU per data packet ({args.packets} packets, best of"
        f" {args.repeat}; {platform.python_implementation()} {platform.python_version()})",
        flush=True,
    )
    return ns


def native(binary: str, packets: int) -> float:
    out = subprocess.run(
        [binary, str(packets), "5"], check=True, capture_output=True, text=True
    ).stdout.strip()
    print(out, flush=True)
    found = re.search(r"([\d.]+) ns CPU per data packet", out)
    if found is None:
        raise SystemExit(f"unexpected output of {binary}: {out!r}")
    return float(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--packets", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--legacy", metavar="COMMIT", help="measure that commit's Python stack")
    parser.add_argument("--all", action="store_true", help="the binding, the legacy Python stack")
    parser.add_argument("--native", metavar="BIN", help="with --all: the Rust-only benchmark")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if args.packets < 1 or args.repeat < 1:
        parser.error("--packets and --repeat must be >= 1")

    lines: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        if args.all:
            from ratelab_hosts import rbcc_receiver, rbcc_sender

            binding = measure(
                f"rust via Python binding ({rbcc_sender.RbccSender.__module__})",
                rbcc_sender,
                rbcc_receiver,
                args,
            )
            legacy = measure(
                f"python state machines (commit {LEGACY_COMMIT[:10]})",
                *legacy_modules(LEGACY_COMMIT, Path(tmp)),
                args,
            )
            lines.append(f"rust via Python binding: {binding:,.0f} ns CPU per data packet")
            lines.append(f"python (replaced):       {legacy:,.0f} ns CPU per data packet")
            lines.append(f"ratio python / binding:  {legacy / binding:.1f}x")
            if args.native:
                rust = native(args.native, 20 * args.packets)
                lines.append(f"rust crate alone:        {rust:,.0f} ns CPU per data packet")
                lines.append(f"ratio python / rust:     {legacy / rust:.0f}x")
        elif args.legacy:
            ns = measure(f"python {args.legacy}", *legacy_modules(args.legacy, Path(tmp)), args)
            lines.append(f"python {args.legacy}: {ns:,.0f} ns CPU per data packet")
        else:
            from ratelab_hosts import rbcc_receiver, rbcc_sender

            ns = measure(rbcc_sender.RbccSender.__module__, rbcc_sender, rbcc_receiver, args)
            lines.append(f"{rbcc_sender.RbccSender.__module__}: {ns:,.0f} ns CPU per data packet")
    header = (
        "# CPU per data packet of the rate-based host (sender + receiver + ACK, in memory,"
        f" 1000-byte packets; host_stacks/benchmarks/rbcc_host_cpu.py), {platform.machine()},"
        f" {time.strftime('%Y-%m-%d')}"
    )
    print("\n".join(lines))
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text("\n".join([header, *lines]) + "\n")


if __name__ == "__main__":
    main()
