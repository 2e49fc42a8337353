"""The data-plane thread: ports in, engine, ports (or controller) out.

One thread waits on the port sockets, a wake-up pipe (packets injected from the
controller, stop requests) and the traffic manager's next departure time. Each
wake-up feeds the engine one batch of frames stamped with the wall clock in
microseconds and sends what comes out: to a port's interface, or to the
controller when it leaves on the CPU port. The engine keeps no clock of its own.
"""

from __future__ import annotations

import collections
import logging
import os
import selectors
import threading
import time
from collections.abc import Callable, Sequence
from typing import Protocol

from .ports import Port

log = logging.getLogger("ratelab_switch")

Frame = tuple[int, bytes, int]  # (port, bytes, departure time in µs)


class PacketEngine(Protocol):
    """What the loop needs from an engine (ratelab_engine.Switch has it)."""

    def process(self, packets: list[tuple[int, bytes]], now_us: int) -> list[Frame]: ...

    def next_event_time(self) -> int | None: ...

    def take_digests(self) -> Sequence[tuple[str, Sequence[int]]]: ...


class ControllerSink(Protocol):
    """Where controller-bound traffic goes (a P4Runtime Device)."""

    def deliver_packet_in(self, data: bytes) -> None: ...

    def deliver_digest(self, name: str, values: tuple[int, ...]) -> None: ...


def now_us() -> int:
    return time.monotonic_ns() // 1000


class PacketLoop:
    def __init__(
        self,
        engine: Callable[[], PacketEngine | None],
        ports: dict[int, Port],
        sink: ControllerSink,
        cpu_port: int | None,
        on_fatal: Callable[[str], None] | None = None,
    ) -> None:
        # `engine()` is asked on every turn: the program may be loaded or replaced later.
        self._engine = engine
        self._ports = ports
        self._sink = sink
        self._cpu_port = cpu_port
        self._on_fatal = on_fatal
        self._injected: collections.deque[tuple[int, bytes]] = collections.deque()
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self.unknown_port_drops = 0

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="dataplane", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        os.write(self._wake_w, b"\0")
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        os.close(self._wake_r)
        os.close(self._wake_w)

    def inject(self, port: int, data: bytes) -> None:
        """Have `data` arrive on `port` on the loop's next turn (thread-safe)."""
        self._injected.append((port, data))
        os.write(self._wake_w, b"\0")

    def _run(self) -> None:
        sel = selectors.DefaultSelector()
        sel.register(self._wake_r, selectors.EVENT_READ)
        for p in self._ports.values():
            sel.register(p, selectors.EVENT_READ, p)
        try:
            while not self._stopping.is_set():
                self._turn(sel)
        except Exception as e:
            log.exception("packet loop failed")
            if self._on_fatal is not None:
                self._on_fatal(f"packet loop failed: {e}")
        finally:
            sel.close()

    def _turn(self, sel: selectors.BaseSelector) -> None:
        engine = self._engine()
        due = engine.next_event_time() if engine is not None else None
        timeout = None if due is None else max(0.0, (due - now_us()) / 1e6)
        events = sel.select(timeout)
        now = now_us()
        batch: list[tuple[int, bytes]] = []
        for key, _ in events:
            if key.data is None:
                _drain(self._wake_r)
                continue
            port: Port = key.data
            try:
                batch.extend((port.number, f) for f in port.receive(now))
            except OSError as e:
                # The interface went away or down: stop reading it, keep the others.
                log.warning("port %d (%s): %s; no longer read", port.number, port.iface, e)
                sel.unregister(port)
        while self._injected:
            batch.append(self._injected.popleft())
        engine = self._engine()
        if engine is None:
            return  # no program yet: frames are dropped, as on a switch without one
        self._dispatch(engine.process(batch, now))
        for name, values in engine.take_digests():
            self._sink.deliver_digest(name, tuple(values))

    def _dispatch(self, frames: list[Frame]) -> None:
        for port_no, data, time_us in frames:
            port = self._ports.get(port_no)
            if port is not None:
                port.send(data, time_us)
            elif port_no == self._cpu_port:
                self._sink.deliver_packet_in(data)
            else:
                self.unknown_port_drops += 1


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 4096):
            pass
    except BlockingIOError:
        pass
