"""Turn SIGTERM and SIGHUP into an exception, so that `finally` blocks and context
managers clean up exactly as they do for Ctrl-C (KeyboardInterrupt)."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


class Terminated(BaseException):
    """The process got SIGTERM or SIGHUP (a BaseException, like KeyboardInterrupt)."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"terminated by {signal.Signals(signum).name}")
        self.signum = signum


@contextmanager
def terminate_as_exception() -> Iterator[None]:
    """Inside the block, SIGTERM/SIGHUP raise `Terminated` in the main thread."""

    def handler(signum: int, _frame: FrameType | None) -> None:
        raise Terminated(signum)

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
