"""A tiny deterministic network for driving the sans-IO host stacks in tests:
two endpoints, a link each way (propagation delay, optional serialization at
a bit rate, optional drops by packet index, optional in-path transform such
as a "router" that lowers the RBCC rate field), and an event heap.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Protocol

from ratelab_hosts.pacing import ceil_div
from ratelab_hosts.wire import IPV4_HEADER_LEN, RbccPacket
from ratelab_model.packet import RbccHeader


class Endpoint(Protocol):
    def poll_at(self) -> int | None: ...
    def on_timer(self, now_us: int) -> list[bytes]: ...
    def on_datagram(self, now_us: int, data: bytes) -> list[bytes]: ...


@dataclass
class Link:
    delay_us: int = 10_000
    rate_bps: int = 0  # 0: no serialization delay
    drop: Callable[[int, bytes], bool] = lambda index, data: False
    transform: Callable[[int, bytes], bytes] | None = None  # (now_us, data) -> data
    sent: list[tuple[int, bytes]] = field(default_factory=list)  # (time, datagram) entering
    dropped: list[tuple[int, bytes]] = field(default_factory=list)
    _free_us: int = 0

    def transmit(self, now_us: int, data: bytes) -> tuple[int, bytes] | None:
        """(arrival time at the far end, datagram as it arrives), or None if dropped."""
        index = len(self.sent)
        self.sent.append((now_us, data))
        if self.drop(index, data):
            self.dropped.append((now_us, data))
            return None
        if self.transform is not None:
            data = self.transform(now_us, data)
        start = max(now_us, self._free_us)
        if self.rate_bps:
            self._free_us = start + ceil_div(
                (len(data) + IPV4_HEADER_LEN) * 8_000_000, self.rate_bps
            )
            start = self._free_us
        return start + self.delay_us, data


def rate_cap(cap: int, router_id: int) -> Callable[[int, bytes], bytes]:
    """A stand-in router: lowers `rate` to `cap` (and names itself in
    bottle_node) on every RBCC packet whose rate is above it."""

    def transform(now_us: int, data: bytes) -> bytes:
        header = RbccHeader.decode(data)
        if cap < header.rate:
            header = replace(header, rate=cap, bottle_node=router_id)
        return header.encode() + data[len(header.encode()) :]

    return transform


def drop_pns(pns: set[int]) -> Callable[[int, bytes], bool]:
    """Drop the data transmissions with these transmission numbers."""

    def drop(index: int, data: bytes) -> bool:
        packet = RbccPacket.decode(data)
        return packet.rbcc.flags == 0 and packet.trump.pn in pns

    return drop


class SimNet:
    """Sender `a` and receiver `b` joined by `forward` (a -> b) and `reverse`."""

    def __init__(self, a: Endpoint, b: Endpoint, forward: Link, reverse: Link) -> None:
        self.a, self.b = a, b
        self.forward, self.reverse = forward, reverse
        self.now_us = 0
        self._events: list[tuple[int, int, int, bytes]] = []  # (time, order, to, data)
        self._order = 0
        self.delivered: list[tuple[int, int, bytes]] = []  # (time, to, data)

    def _send(self, frm: int, data_list: list[bytes]) -> None:
        link = self.forward if frm == 0 else self.reverse
        for data in data_list:
            result = link.transmit(self.now_us, data)
            if result is not None:
                heapq.heappush(self._events, (result[0], self._order, 1 - frm, result[1]))
                self._order += 1

    def run(self, until_us: int, max_steps: int = 1_000_000) -> None:
        endpoints = (self.a, self.b)
        for _ in range(max_steps):
            times = [(ep.poll_at(), i) for i, ep in enumerate(endpoints)]
            timer = min(((t, i) for t, i in times if t is not None), default=None)
            event_t = self._events[0][0] if self._events else None
            if timer is None and event_t is None:
                return
            if event_t is not None and (timer is None or event_t < timer[0]):
                if event_t > until_us:
                    return
                t, _order, to, data = heapq.heappop(self._events)
                self.now_us = max(self.now_us, t)
                self.delivered.append((self.now_us, to, data))
                self._send(to, endpoints[to].on_datagram(self.now_us, data))
            else:
                assert timer is not None
                if timer[0] > until_us:
                    return
                self.now_us = max(self.now_us, timer[0])
                self._send(timer[1], endpoints[timer[1]].on_timer(self.now_us))
        raise AssertionError("simulation did not settle (an endpoint polls without progress?)")
