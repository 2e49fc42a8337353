"""Benchmark (not a test): packets/s forwarded end to end by the ratelab-switch daemon
between two veth pairs. A sender (ratelab-pktgen, a separate process using sendmmsg)
offers IPv4/UDP frames on one pair's host side; a receiver (another ratelab-pktgen)
counts them on the other's with a socket filter and the socket's statistics, reading
none (a veth delivers to the receiver inside the switch's send call, so a copy per
frame there would be charged to the switch); the daemon runs `basic.json` with one
route between them.
Needs root and the ratelab_engine extension. Writes one JSON object to --out.

The daemon, sender and receiver each start a session of their own: with the kernel's
autogroup scheduling (Debian's default) a session shares the CPUs equally with the
others, whatever their nice values, so three processes in one session would split
one share between them on a machine shared with other work.

    python switch/tests/bench_daemon.py --pktgen target/release/ratelab-pktgen --out r.json
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).parent
sys.path[:0] = [str(HERE.parent), str(HERE)]

import grpc  # noqa: E402
from finsy.proto.p4.v1.p4runtime_pb2_grpc import P4RuntimeStub  # noqa: E402
from ratelab_sim import VethPair, sweep, unique_prefix  # noqa: E402
from switch_basic_program import BASIC_JSON, commit_routed  # noqa: E402
from switch_client import StreamClient  # noqa: E402

# (switch side, host side); rl<pid>..., unique to this process (ratelab_sim's names).
_TAG = unique_prefix()
PAIRS = [(f"{_TAG}s1", f"{_TAG}h1"), (f"{_TAG}s2", f"{_TAG}h2")]
DST = "10.0.2.9"


@contextlib.contextmanager
def veth_pairs() -> Iterator[None]:
    """PAIRS as veth pairs (up, IPv6 and offloads off), removed on exit; leftovers
    of earlier runs that died are swept first."""
    sweep()
    with contextlib.ExitStack() as stack:
        for a, b in PAIRS:
            stack.enter_context(VethPair(a, b))
        yield


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _start_daemon() -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "ratelab_switch.daemon", str(BASIC_JSON),
         "-i", f"1@{PAIRS[0][0]}", "-i", f"2@{PAIRS[1][0]}", "--queue-depth", "2=4096",
         "--grpc-server-addr", "127.0.0.1:0", "--device-id", "1"],
        stdout=subprocess.PIPE, text=True, start_new_session=True,
        env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)),
    )  # fmt: skip
    assert proc.stdout is not None
    port = int(proc.stdout.readline().strip().rsplit(":", 1)[1])
    with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
        stub = P4RuntimeStub(ch)
        ctl = StreamClient(stub)
        ctl.arbitrate(1)
        ctl.get()
        commit_routed(stub)
        ctl.close()
    return proc, port


def _one_run(pktgen: str, pid: int, size: int, count: int, pps: int) -> dict[str, object]:
    receiver = subprocess.Popen(
        [pktgen, "recv", PAIRS[1][1], "120", "1.0"],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    time.sleep(0.3)  # the receiver's socket is bound
    cpu_before = _cpu_seconds(pid)
    sent = json.loads(
        subprocess.run(
            [pktgen, "send", PAIRS[0][1], DST, str(size), str(count), str(pps)],
            check=True, capture_output=True, text=True, start_new_session=True,
        ).stdout
    )  # fmt: skip
    got = json.loads(receiver.communicate(timeout=150)[0])
    cpu = _cpu_seconds(pid) - cpu_before
    forwarded = int(got["received"])
    return {
        "frame_bytes": size,
        "offered_packets": sent["sent"],
        "offered_pps": sent["pps"],
        "forwarded_packets": forwarded,
        # Over the time the forwarded frames took to arrive (first to last).
        "forwarded_pps": got["pps"],
        "loss_fraction": round(1 - forwarded / max(int(sent["sent"]), 1), 4),
        "daemon_cpu_us_per_forwarded_packet": round(1e6 * cpu / max(forwarded, 1), 3),
    }


def run(pktgen: str, count: int, rates: list[int], sizes: list[int]) -> dict[str, object]:
    with veth_pairs():
        proc, _ = _start_daemon()
        try:
            runs = [
                _one_run(pktgen, proc.pid, size, count, rate) | {"requested_pps": rate or "max"}
                for size in sizes
                for rate in rates
            ]
            return {
                "machine_cpus": os.cpu_count(),
                "program": "basic.json",
                "receiver": "socket filter + PACKET_STATISTICS (frames counted, not read)",
                "runs": runs,
            }
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=10)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pktgen", required=True, help="the ratelab-pktgen binary")
    ap.add_argument("--packets", type=int, default=1_000_000, help="offered per run")
    ap.add_argument(
        "--rates", default="300000,0", help="offered packets/s per run, 0 = as fast as possible"
    )
    ap.add_argument("--sizes", default="64,1500", help="frame sizes in bytes")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    if os.geteuid() != 0:
        # Recorded rather than failed: `make bench` may run unprivileged.
        result: dict[str, object] = {"skipped": "needs root to create veth pairs"}
    else:
        rates = [int(r) for r in args.rates.split(",")]
        sizes = [int(s) for s in args.sizes.split(",")]
        result = run(args.pktgen, args.packets, rates, sizes)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
