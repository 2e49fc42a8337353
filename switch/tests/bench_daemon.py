"""Benchmark (not a test): packets forwarded by the ratelab-switch daemon between two
veth pairs, and the daemon's CPU time per forwarded packet. Needs root and the
ratelab_engine extension. Writes one JSON object to --out.

    python switch/tests/bench_daemon.py --packets 60000 --rate 20000 --out result.json
"""

from __future__ import annotations

import argparse
import json
import os
import select
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent
sys.path[:0] = [str(HERE.parent), str(HERE)]

import grpc  # noqa: E402
from finsy.proto.p4.v1 import p4runtime_pb2 as p4r  # noqa: E402
from finsy.proto.p4.v1.p4runtime_pb2_grpc import P4RuntimeStub  # noqa: E402
from ratelab_switch.arbitration import to_uint128  # noqa: E402
from switch_basic_program import BASIC_JSON, basic_p4info, ipv4_packet, route  # noqa: E402
from switch_client import INSERT, StreamClient, write  # noqa: E402

PAIRS = [("rsbench1", "rsbench1p"), ("rsbench2", "rsbench2p")]


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True)


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run(packets: int, rate: float) -> dict[str, float]:
    for a, b in PAIRS:
        subprocess.run(["ip", "link", "del", a], capture_output=True)
        _ip("link", "add", a, "type", "veth", "peer", "name", b)
        for name in (a, b):
            Path(f"/proc/sys/net/ipv6/conf/{name}/disable_ipv6").write_text("1")
            _ip("link", "set", name, "up")
    proc = subprocess.Popen(
        [sys.executable, "-m", "ratelab_switch.daemon", str(BASIC_JSON),
         "-i", f"1@{PAIRS[0][0]}", "-i", f"2@{PAIRS[1][0]}", "--queue-depth", "2=4096",
         "--grpc-server-addr", "127.0.0.1:0", "--device-id", "1"],
        stdout=subprocess.PIPE, text=True,
        env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)),
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline().strip().rsplit(":", 1)[1])
        with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
            stub = P4RuntimeStub(ch)
            ctl = StreamClient(stub)
            ctl.arbitrate(1)
            ctl.get()
            req = p4r.SetForwardingPipelineConfigRequest(
                device_id=1,
                election_id=to_uint128(1),
                action=p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT,
            )
            req.config.p4info.CopyFrom(basic_p4info())
            req.config.p4_device_config = BASIC_JSON.read_bytes()
            stub.SetForwardingPipelineConfig(req)
            write(stub, (INSERT, route(b"\x0a\x00\x02\x00", 24, 2)), election_id=1)
            ctl.close()
        tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
        tx.bind((PAIRS[0][1], 0))
        rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
        rx.bind((PAIRS[1][1], 0))
        rx.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 24)
        frame = ipv4_packet(bytes([10, 0, 2, 9]), payload=b"x" * 50)  # 84-byte frames
        cpu_before = _cpu_seconds(proc.pid)
        start = time.perf_counter()
        received = 0
        for i in range(packets):
            tx.send(frame)
            deadline = start + (i + 1) / rate
            while True:  # drain what arrived while pacing the sender
                left = deadline - time.perf_counter()
                ready, _, _ = select.select([rx], [], [], max(0.0, left))
                if not ready:
                    break
                rx.recv(2048)
                received += 1
        sent_s = time.perf_counter() - start
        while select.select([rx], [], [], 0.5)[0]:
            rx.recv(2048)
            received += 1
        cpu = _cpu_seconds(proc.pid) - cpu_before
        tx.close()
        rx.close()
        return {
            "packets_offered": packets,
            "offered_pps": round(packets / sent_s),
            "packets_forwarded": received,
            "delivered_fraction": round(received / packets, 4),
            "daemon_cpu_us_per_packet": round(1e6 * cpu / max(received, 1), 2),
        }
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)
        for a, _ in PAIRS:
            subprocess.run(["ip", "link", "del", a], capture_output=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--packets", type=int, default=60000)
    ap.add_argument("--rate", type=float, default=20000.0, help="offered packets/s")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    if os.geteuid() != 0:
        # Recorded rather than failed: `make bench` may run unprivileged.
        result: dict[str, object] = {"skipped": "needs root to create veth pairs"}
    else:
        result = dict(run(args.packets, args.rate))
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
