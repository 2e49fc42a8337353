"""benchmarks/answer_time.py's counting (no capture, no root): which ACK
starts a wait, what ends it, and the frame parsing it rests on."""

from __future__ import annotations

import importlib.util
import socket
import struct
import sys
from pathlib import Path
from types import ModuleType

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "answer_time.py"
FLOW = "10.0.1.2:40000"
SINK = "10.0.2.1:5001"
ACK, PSH_ACK, FIN_ACK = 0x10, 0x18, 0x11


def load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("answer_time", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["answer_time"] = module
    spec.loader.exec_module(module)
    return module


def frame(src: str, dst: str, flags: int, payload: int, ihl: int = 5) -> bytes:
    (sa, sp), (da, dp) = (x.split(":") for x in (src, dst))
    tcp = struct.pack("!HHIIBBHHH", int(sp), int(dp), 1, 2, 8 << 4, flags, 1000, 0, 0)
    tcp += bytes(12) + bytes(payload)  # options (timestamps' length), data
    options = bytes(4 * (ihl - 5))
    total = 4 * ihl + len(tcp)
    ip = struct.pack("!BBHHHBBH", 0x40 | ihl, 0, total, 0, 0, 64, 6, 0)
    ip += socket.inet_aton(sa) + socket.inet_aton(da) + options
    return bytes(12) + b"\x08\x00" + ip + tcp + bytes(6)  # Ethernet padding after


def test_frames_are_parsed_behind_ip_options_and_padding() -> None:
    at = load()
    assert at.tcp_fields(frame(FLOW, SINK, PSH_ACK, 1448)) == (FLOW, SINK, PSH_ACK, 1448)
    assert at.tcp_fields(frame(SINK, FLOW, ACK, 0, ihl=6)) == (SINK, FLOW, ACK, 0)
    udp = bytearray(frame(FLOW, SINK, ACK, 0))
    udp[14 + 9] = 17
    assert at.tcp_fields(bytes(udp)) is None
    assert at.tcp_fields(frame(FLOW, SINK, ACK, 0)[:30]) is None


def test_an_ack_is_answered_by_the_flows_next_data_segment() -> None:
    at = load()
    flows: dict[str, object] = {}
    seen = [
        (1_000, False, (SINK, FLOW, ACK, 0)),  # an ACK arrives
        (1_500, True, ("10.0.1.1:5000", SINK, PSH_ACK, 1448)),  # another flow's segment
        (1_900, True, (FLOW, SINK, ACK, 0)),  # the flow's pure ACK: no answer
        (2_000, True, (FLOW, SINK, PSH_ACK, 1448)),  # the answer: 1000 ns
        (2_100, True, (FLOW, SINK, PSH_ACK, 1448)),  # a second segment: no ACK waits
        (5_000, False, (SINK, FLOW, ACK, 0)),
        (5_400, False, (SINK, FLOW, ACK, 0)),  # a later ACK replaces the first
        (5_450, False, (SINK, FLOW, FIN_ACK, 0)),  # a FIN does not
        (5_600, True, (FLOW, SINK, PSH_ACK, 100)),  # 200 ns after the last ACK
        (6_000, False, (SINK, FLOW, ACK, 10)),  # data from the sink is no ACK to count
        (6_500, True, (FLOW, SINK, PSH_ACK, 100)),
    ]
    for t, outgoing, fields in seen:
        at.record(flows, t, outgoing, fields)
    assert set(flows) == {FLOW}
    assert flows[FLOW].answers_ns == [1_000, 200]  # type: ignore[attr-defined]


def test_percentiles_are_of_the_sorted_values() -> None:
    at = load()
    values = list(range(1, 101))
    assert (at.percentile(values, 0.5), at.percentile(values, 0.9)) == (51, 91)
    assert at.percentile(values, 0.99) == 100 and at.percentile([7], 0.99) == 7
