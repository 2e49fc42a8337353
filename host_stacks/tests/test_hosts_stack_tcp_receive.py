"""stack_tcp_driver._Flow.receive: each frame read is handed to the
connection at its own time and answered (poll_packet until empty, frames
sent) before the next frame is read, as a kernel answers ACK by ACK. With one
time for a batch, later ACKs would be dated early and their segments sent in
one burst after the batch. Fakes for the connection and the link; no root."""

from __future__ import annotations

from typing import Any

import pytest
from ratelab_hosts import stack_tcp_driver
from ratelab_hosts.loop import StopSignal
from ratelab_hosts.tcp_traffic import TcpSendConfig


class FakeLink:
    def __init__(self, frames: list[bytes], log: list[tuple[str, object]]) -> None:
        self.frames = frames
        self.log = log
        self.local_drops = 0

    def receive(self) -> bytes | None:
        if not self.frames:
            return None
        frame = self.frames.pop(0)
        self.log.append(("read", frame))
        return frame

    def send(self, frame: bytes) -> None:
        self.log.append(("send", frame))


class FakeConn:
    """Answers each ACK frame b"ackN" with one segment b"segN"."""

    recv_ready = 0

    def __init__(self, log: list[tuple[str, object]]) -> None:
        self.log = log
        self.due: list[bytes] = []

    def handle_packet(self, now: int, frame: bytes) -> bool:
        self.log.append(("handle", (now, frame)))
        self.due.append(frame.replace(b"ack", b"seg"))
        return True

    def poll_packet(self, now: int) -> bytes | None:
        return self.due.pop(0) if self.due else None


def test_each_frame_is_handled_at_its_own_time_and_answered_before_the_next(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = iter(range(1000, 2000, 10))
    monkeypatch.setattr(stack_tcp_driver, "_ns", lambda: next(clock))
    log: list[tuple[str, object]] = []
    link: Any = FakeLink([b"ack1", b"ack2", b"ack3"], log)
    conn: Any = FakeConn(log)
    stop = StopSignal()
    try:
        flow = stack_tcp_driver._Flow(conn, link, TcpSendConfig(cc="reno"), stop)
        flow.receive()
    finally:
        stop.close()
    assert [(kind, x if kind != "handle" else x[1]) for kind, x in log] == [  # type: ignore[index]
        ("read", b"ack1"),
        ("handle", b"ack1"),
        ("send", b"seg1"),
        ("read", b"ack2"),
        ("handle", b"ack2"),
        ("send", b"seg2"),
        ("read", b"ack3"),
        ("handle", b"ack3"),
        ("send", b"seg3"),
    ]
    times = [x[0] for kind, x in log if kind == "handle"]  # type: ignore[index]
    assert len(set(times)) == 3 and times == sorted(times)
