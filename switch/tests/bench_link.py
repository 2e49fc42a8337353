"""Link emulation through the daemon: configured vs measured one-way delay and rate.

The daemon (basic.json, one route) between two veth pairs, as in bench_daemon.py;
for each (rate, delay) point, port 2 gets the rate and the link delay at run time
through the ratelab.SwitchTarget service, then:
- one-way delay: single small frames on the idle link, sent on one host side and
  timed to their arrival on the other (Python, CLOCK_MONOTONIC), against the
  configured delay + the frame's transmission time at the rate;
- rate: ratelab-pktgen offers ~1.3x the rate for a few seconds and counts what
  arrives (first to last frame) on the other side.

    python switch/tests/bench_link.py --pktgen target/release/ratelab-pktgen --out r.json
"""

from __future__ import annotations

import argparse
import json
import os
import select
import signal
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent
sys.path[:0] = [str(HERE.parent), str(HERE)]

import grpc  # noqa: E402
from bench_daemon import DST, PAIRS, _start_daemon, veth_pairs  # noqa: E402
from switch_basic_program import ipv4_packet  # noqa: E402

# (rate bit/s, delay µs, frame bytes for the rate run)
POINTS = [
    (32_000, 100_000, 200),
    (2_000_000, 70_000, 1000),
    (50_000_000, 15_000, 1500),
    (10_000_000, 100, 1500),
    (10_000_000, 1_000_000, 1500),
]
PROBES = 7


def _target(port: int, method: str, body: dict[str, object]) -> None:
    with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
        ch.unary_unary(f"/ratelab.SwitchTarget/{method}")(
            json.dumps({"device_id": 1, **body}).encode()
        )


def _raw(iface: str) -> socket.socket:
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
    s.bind((iface, 0))
    return s


def _probe(tx: socket.socket, rx: socket.socket, marker: bytes) -> float:
    frame = ipv4_packet(bytes(int(b) for b in DST.split(".")), payload=marker)
    start = time.monotonic()
    tx.send(frame)
    deadline = start + 10
    while time.monotonic() < deadline:
        ready, _, _ = select.select([rx], [], [], deadline - time.monotonic())
        if ready and marker in rx.recv(65535):
            return time.monotonic() - start
    raise RuntimeError(f"probe {marker!r} lost")


def _rate_run(pktgen: str, rate: int, size: int, delay_us: int) -> dict[str, object]:
    pps = max(1, round(1.3 * rate / (size * 8)))
    count = max(40, pps * 3)
    receiver = subprocess.Popen(
        [pktgen, "recv", PAIRS[1][1], "120", str(1.0 + delay_us / 1e6)],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    time.sleep(0.3)
    subprocess.run(
        [pktgen, "send", PAIRS[0][1], DST, str(size), str(count), str(pps)],
        check=True, capture_output=True, text=True, start_new_session=True,
    )  # fmt: skip
    got = json.loads(receiver.communicate(timeout=150)[0])
    measured = float(got["pps"]) * size * 8
    return {
        "frame_bytes": size,
        "offered_bps": pps * size * 8,
        "received_packets": got["received"],
        "measured_bps": round(measured),
        "measured_over_configured": round(measured / rate, 4),
    }


def run(pktgen: str) -> dict[str, object]:
    with veth_pairs():
        proc, port = _start_daemon()
        tx, rx = _raw(PAIRS[0][1]), _raw(PAIRS[1][1])
        points = []
        try:
            for rate, delay_us, size in POINTS:
                _target(port, "SetQueueRate", {"port": 2, "rate": f"{rate}bit"})
                _target(port, "SetLinkDelay", {"port": 2, "delay": delay_us})
                probe_len = len(ipv4_packet(b"\0\0\0\0", payload=b"ratelab-probe-00"))
                tx_us = -(-probe_len * 8 * 1_000_000 // rate)
                one_way = [_probe(tx, rx, b"ratelab-probe-%02d" % i) for i in range(PROBES)]
                expected_ms = (delay_us + tx_us) / 1000
                median_ms = statistics.median(one_way) * 1000
                points.append(
                    {
                        "rate_bps": rate,
                        "link_delay_ms": delay_us / 1000,
                        "probe_bytes": probe_len,
                        "expected_one_way_ms": expected_ms,
                        "measured_one_way_ms_min": round(min(one_way) * 1000, 3),
                        "measured_one_way_ms_median": round(median_ms, 3),
                        "excess_ms_median": round(median_ms - expected_ms, 3),
                        **_rate_run(pktgen, rate, size, delay_us),
                    }
                )
                print(json.dumps(points[-1]), flush=True)
            return {"machine_cpus": os.cpu_count(), "program": "basic.json", "points": points}
        finally:
            tx.close()
            rx.close()
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=10)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pktgen", required=True, help="the ratelab-pktgen binary")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    if os.geteuid() != 0:
        result: dict[str, object] = {"skipped": "needs root to create veth pairs"}
    else:
        result = run(args.pktgen)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
