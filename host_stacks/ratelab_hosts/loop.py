"""A small event loop for driving sans-IO state machines over real sockets: it
sleeps until the earliest ``poll_at()`` or until a socket is readable, whichever
comes first, and stops on a deadline, when the machine is done, or on SIGINT /
SIGTERM (which then end the run cleanly, results written).

``select()`` is used on purpose: its timeout has microsecond resolution, where
epoll and poll round up to milliseconds (bad for pacing).
"""

from __future__ import annotations

import selectors
import signal
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from types import FrameType

US_PER_S = 1_000_000


def now_us() -> int:
    """The loop's clock: CLOCK_MONOTONIC, shared by all network namespaces of a
    machine, so a UDP sink can compute one-way delays from a source's stamps."""
    return time.monotonic_ns() // 1000


class StopSignal:
    """SIGINT / SIGTERM set a flag and wake the loop (a self-pipe)."""

    def __init__(self) -> None:
        self.stopped = False
        self.reader, self._writer = socket.socketpair()
        self.reader.setblocking(False)
        self._writer.setblocking(False)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.stopped = True
        with suppress(OSError):
            self._writer.send(b"\0")

    def drain(self) -> None:
        try:
            while self.reader.recv(64):
                pass
        except OSError:
            pass

    def close(self) -> None:
        self.reader.close()
        self._writer.close()


@contextmanager
def stop_on_signals() -> Iterator[StopSignal]:
    stop = StopSignal()
    previous = {sig: signal.signal(sig, stop._handle) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield stop
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        stop.close()


def run_loop(
    sockets: list[socket.socket],
    *,
    poll_at: Callable[[], int | None],
    on_timer: Callable[[int], None],
    on_readable: Callable[[socket.socket], None],
    done: Callable[[], bool],
    stop: StopSignal,
    deadline_us: int | None = None,
) -> None:
    """Run until done(), the deadline, or a stop signal. on_timer(now) is called
    whenever poll_at() is due; on_readable(sock) when a socket has data (it
    should read until the socket would block)."""
    with selectors.SelectSelector() as selector:
        for sock in sockets:
            selector.register(sock, selectors.EVENT_READ)
        selector.register(stop.reader, selectors.EVENT_READ)
        while not done() and not stop.stopped:
            now = now_us()
            if deadline_us is not None and now >= deadline_us:
                return
            wake = poll_at()
            if wake is not None and wake <= now:
                on_timer(now)
                continue
            if deadline_us is not None:
                wake = deadline_us if wake is None else min(wake, deadline_us)
            timeout = None if wake is None else (wake - now) / US_PER_S
            for key, _mask in selector.select(timeout):
                if key.fileobj is stop.reader:
                    stop.drain()
                else:
                    on_readable(key.fileobj)  # type: ignore[arg-type]
