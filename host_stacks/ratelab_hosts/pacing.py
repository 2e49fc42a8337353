"""Pacing without a window: packets leave ``size / rate`` apart (RBCC.md "Hosts").

The schedule is kept exact in integer microseconds: after an anchor (a
departure time), a packet with B bytes sent before it leaves at
``anchor + ceil(B * 10^6 / rate)``, so intervals average exactly size / rate
and each is within 1 us of it. A rate change re-anchors at the last
departure, so the gap after that packet is already at the new rate.
"""

from __future__ import annotations

US_PER_S = 1_000_000


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


class Pacer:
    def __init__(self, rate: int, max_lateness_us: int = 1_000) -> None:
        if rate < 1:
            raise ValueError("pacing rate must be >= 1 B/s")
        self.rate = rate
        self.max_lateness_us = max_lateness_us
        self._anchor_us: int | None = None  # None: the next packet may go at once
        self._bytes = 0  # bytes sent since the anchor
        self._last_us = 0
        self._last_size = 0
        self.restarts = 0  # times the caller fell behind and the schedule restarted
        self.lost_us = 0  # schedule time given up by those restarts

    def next_at(self) -> int | None:
        """Earliest departure of the next packet; None = any time (nothing sent yet)."""
        if self._anchor_us is None:
            return None
        return self._anchor_us + ceil_div(self._bytes * US_PER_S, self.rate)

    def ready(self, now_us: int) -> bool:
        due = self.next_at()
        return due is None or now_us >= due

    def on_send(self, now_us: int, size: int) -> None:
        """Record a departure at `now_us`. A caller later than the schedule by more
        than one packet interval (and max_lateness_us) restarts the schedule at
        now instead of bursting to catch up."""
        due = self.next_at()
        if due is None or now_us - due > max(
            self.max_lateness_us, ceil_div(size * US_PER_S, self.rate)
        ):
            if due is not None:
                self.restarts += 1
                self.lost_us += now_us - due
            self._anchor_us, self._bytes = now_us, 0
        self._bytes += size
        self._last_us, self._last_size = now_us, size

    def set_rate(self, rate: int) -> None:
        rate = max(1, rate)
        if rate == self.rate:
            return
        self.rate = rate
        if self._anchor_us is not None:
            self._anchor_us, self._bytes = self._last_us, self._last_size
