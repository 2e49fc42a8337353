"""How fast a host answers an ACK: from an ACK arriving to the flow's next
data segment leaving, per TCP flow, from kernel timestamps on the host's
interface (an ETH_P_ALL packet socket with SO_TIMESTAMPNS: an arriving
frame is stamped when the interface receives it, a leaving one when it is
handed to the interface), so the capturing process's own scheduling does not
enter. Run it in the sending host's network namespace during a run, e.g. for
a ratelab-net host (its processes' namespace):

    nsenter -t PID -n .venv/bin/python host_stacks/benchmarks/answer_time.py \\
        --iface sender-eth0 --seconds 20 --out answer.json

Counted: an ACK (no payload) to the flow followed by one of the flow's data
segments leaving before the next ACK to it arrives (the time from that last
ACK); an ACK followed by another ACK answered nothing and is not counted.
Prints per flow (the sender's address:port) the count, median, 90th and 99th
percentile in microseconds, and writes them as JSON with --out.
"""

from __future__ import annotations

import argparse
import json
import socket
import struct
import sys
import time
from dataclasses import dataclass, field

ETH_P_ALL = 0x0003
ETH_P_IP = 0x0800
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)
SOL_PACKET = 263
PACKET_STATISTICS = 6
PACKET_OUTGOING = 4
TCP = 6
ACK = 0x10
SYN_FIN_RST = 0x07


@dataclass
class FlowTimes:
    pending_ack_ns: int | None = None
    answers_ns: list[int] = field(default_factory=list)


def record(
    flows: dict[str, FlowTimes], t_ns: int, outgoing: bool, fields: tuple[str, str, int, int]
) -> None:
    """Count one TCP frame seen at t_ns: an arriving pure ACK (no SYN, FIN,
    RST, no payload) starts a wait for the flow it acknowledges, replacing an
    earlier one; the flow's next data segment leaving ends it."""
    src, dst, flags, payload = fields
    if outgoing:
        flow = flows.get(src)
        if flow is not None and payload > 0 and flow.pending_ack_ns is not None:
            flow.answers_ns.append(t_ns - flow.pending_ack_ns)
            flow.pending_ack_ns = None
    elif flags & ACK and not flags & SYN_FIN_RST and payload == 0:
        flows.setdefault(dst, FlowTimes()).pending_ack_ns = t_ns


def tcp_fields(frame: bytes) -> tuple[str, str, int, int] | None:
    """(src, dst, flags, payload length) of an IPv4 TCP frame, else None."""
    if len(frame) < 34 or int.from_bytes(frame[12:14], "big") != ETH_P_IP:
        return None
    ip = frame[14:]
    if ip[9] != TCP:
        return None
    ihl = (ip[0] & 0x0F) * 4
    total = int.from_bytes(ip[2:4], "big")
    tcp = ip[ihl:total]
    if len(tcp) < 20:
        return None
    sport, dport = struct.unpack("!HH", tcp[:4])
    offset = (tcp[12] >> 4) * 4
    src = f"{socket.inet_ntoa(ip[12:16])}:{sport}"
    dst = f"{socket.inet_ntoa(ip[16:20])}:{dport}"
    return src, dst, tcp[13], len(tcp) - offset


def percentile(sorted_values: list[int], q: float) -> int:
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def capture(iface: str, seconds: float) -> tuple[dict[str, FlowTimes], int]:
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    sock.setsockopt(socket.SOL_SOCKET, 33, 64 << 20)  # SO_RCVBUFFORCE
    sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    sock.bind((iface, ETH_P_ALL))
    sock.settimeout(0.1)
    flows: dict[str, FlowTimes] = {}
    end = time.monotonic() + seconds
    cmsg_space = socket.CMSG_SPACE(16)
    while time.monotonic() < end:
        try:
            frame, ancdata, _flags, addr = sock.recvmsg(256, cmsg_space)
        except TimeoutError:
            continue
        fields = tcp_fields(frame)
        stamp = [
            d for level, kind, d in ancdata if (level, kind) == (socket.SOL_SOCKET, SO_TIMESTAMPNS)
        ]
        if fields is None or not stamp:
            continue
        sec, nsec = struct.unpack("qq", stamp[0][:16])
        record(flows, sec * 1_000_000_000 + nsec, addr[2] == PACKET_OUTGOING, fields)
    dropped = struct.unpack("II", sock.getsockopt(SOL_PACKET, PACKET_STATISTICS, 8))[1]
    sock.close()
    return flows, dropped


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iface", required=True)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    try:
        flows, dropped = capture(args.iface, args.seconds)
    except OSError as exc:
        print(f"answer_time: capture on {args.iface}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    report: dict[str, object] = {"iface": args.iface, "capture_dropped": dropped, "flows": {}}
    for name, flow in sorted(flows.items()):
        times = sorted(flow.answers_ns)
        if not times:
            continue
        row = {
            "answers": len(times),
            "median_us": percentile(times, 0.5) / 1000,
            "p90_us": percentile(times, 0.9) / 1000,
            "p99_us": percentile(times, 0.99) / 1000,
        }
        report["flows"][name] = row  # type: ignore[index]
        print(
            f"{name:22} {row['answers']:7} answers  median {row['median_us']:8.1f} us"
            f"  p90 {row['p90_us']:8.1f} us  p99 {row['p99_us']:8.1f} us"
        )
    print(f"capture dropped {dropped} frames")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
