"""The packet loop with a scripted engine: batching, CPU port, digests, timer wake-ups."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

from ratelab_switch.packet_loop import Frame, PacketLoop, now_us

CPU = 64


class ScriptedEngine:
    """TEST DOUBLE: echoes each packet to port+1 (or to CPU from port 9) and can hold
    one frame back until a given time, like a rate-limited queue."""

    def __init__(self) -> None:
        self.batches: list[list[tuple[int, bytes]]] = []
        self.held: tuple[int, Frame] | None = None  # (due µs, frame)
        self.digests: list[tuple[str, Sequence[int]]] = []

    def process(self, packets: list[tuple[int, bytes]], now: int) -> list[Frame]:
        if packets:
            self.batches.append(list(packets))
        out: list[Frame] = []
        for port, data in packets:
            if data == b"hold":
                self.held = (now + 50_000, (2, data, now + 50_000))
            elif data == b"learn":
                self.digests.append(("learn_t", [port, 7]))
            else:
                out.append((CPU if port == 9 else port + 1, data, now))
        if self.held is not None and self.held[0] <= now:
            out.append(self.held[1])
            self.held = None
        return out

    def next_event_time(self) -> int | None:
        return self.held[0] if self.held is not None else None

    def take_digests(self) -> Sequence[tuple[str, Sequence[int]]]:
        got, self.digests = self.digests, []
        return got


class Sink:
    def __init__(self) -> None:
        self.packet_ins: list[bytes] = []
        self.digests: list[tuple[str, tuple[int, ...]]] = []
        self.event = threading.Event()

    def deliver_packet_in(self, data: bytes) -> None:
        self.packet_ins.append(data)
        self.event.set()

    def deliver_digest(self, name: str, values: tuple[int, ...]) -> None:
        self.digests.append((name, values))
        self.event.set()


def _wait(predicate: object, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.002)


def test_cpu_port_frames_and_digests_reach_the_sink() -> None:
    engine, sink = ScriptedEngine(), Sink()
    loop = PacketLoop(lambda: engine, {}, sink, CPU)
    loop.start()
    try:
        loop.inject(9, b"to-cpu")
        loop.inject(3, b"learn")
        _wait(lambda: sink.packet_ins and sink.digests)
        assert sink.packet_ins == [b"to-cpu"]
        assert sink.digests == [("learn_t", (3, 7))]
        loop.inject(1, b"nowhere")  # port 2 has no interface: counted, dropped
        _wait(lambda: loop.unknown_port_drops == 1)
    finally:
        loop.stop()


def test_the_loop_wakes_for_the_traffic_managers_next_departure() -> None:
    engine, sink = ScriptedEngine(), Sink()
    loop = PacketLoop(lambda: engine, {}, sink, CPU)
    loop.start()
    try:
        start = now_us()
        loop.inject(1, b"hold")
        _wait(lambda: engine.batches)
        # Nothing else arrives: only the engine's next_event_time can wake the loop.
        _wait(lambda: engine.held is None, timeout=2.0)
        assert now_us() - start >= 50_000
    finally:
        loop.stop()


def test_without_a_program_frames_are_dropped() -> None:
    sink = Sink()
    loop = PacketLoop(lambda: None, {}, sink, CPU)
    loop.start()
    try:
        loop.inject(9, b"x")
        time.sleep(0.05)
        assert sink.packet_ins == []
    finally:
        loop.stop()


def test_a_failing_engine_reports_fatal() -> None:
    class Broken(ScriptedEngine):
        def process(self, packets: list[tuple[int, bytes]], now: int) -> list[Frame]:
            raise RuntimeError("boom")

    fatal: list[str] = []
    done = threading.Event()

    def on_fatal(message: str) -> None:
        fatal.append(message)
        done.set()

    loop = PacketLoop(lambda: Broken(), {}, Sink(), CPU, on_fatal)
    loop.start()
    try:
        loop.inject(1, b"x")
        assert done.wait(5)
        assert "boom" in fatal[0]
    finally:
        loop.stop()
