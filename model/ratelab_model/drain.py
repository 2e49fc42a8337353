"""The egress queue's drain schedule: when each admitted packet starts transmission.

The lead's queue model (docs/ROUTER_MODEL.md "Queue model"): a packet admitted
at t starts transmission at t_deq = max(t, next_free), and the port is busy
for ceil(bytes * 8 * 1e6 / rate_bps) us after that. `q` seen by an arrival at
t counts admitted packets with t_deq > t (the one on the wire is not counted),
which is exactly what a P4 register incremented at admission and decremented
in egress (egress runs at dequeue) holds.
"""

from __future__ import annotations

from collections import deque


def service_time_us(size_bytes: int, rate_bps: int) -> int:
    """Transmission time in whole microseconds, rounded up; 0 on an unlimited port."""
    if rate_bps == 0:
        return 0
    return -(-size_bytes * 8 * 1_000_000 // rate_bps)


class DrainQueue:
    def __init__(self, rate_bps: int) -> None:
        self.rate_bps = rate_bps
        self.next_free_us = 0
        # Time the last packet left the queue empty (RED's idle start).
        self.idle_since_us = 0
        self._pending: deque[int] = deque()  # t_deq of admitted packets still queued

    def length_at(self, now_us: int) -> int:
        """Advance to `now_us` (dequeuing what has started transmission) and return q."""
        while self._pending and self._pending[0] <= now_us:
            t_deq = self._pending.popleft()
            if not self._pending:
                self.idle_since_us = t_deq
        return len(self._pending)

    def admit(self, now_us: int, size_bytes: int) -> int:
        """Queue a packet that arrives at `now_us`; return its dequeue time."""
        t_deq = max(now_us, self.next_free_us)
        self.next_free_us = t_deq + service_time_us(size_bytes, self.rate_bps)
        if t_deq > now_us:
            self._pending.append(t_deq)
        else:
            # Dequeued on arrival: it leaves the queue empty at once.
            self.idle_since_us = t_deq
        return t_deq
