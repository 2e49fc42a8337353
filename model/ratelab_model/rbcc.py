"""RBCC in the router: the Allocated Bandwidth Table, per-port aggregates, the
fair share, the cache check and the rate stamp (RBCC.md "Router state" and
"Per packet"). Widths: rates and capacity 32 bits, sum_limited 64 bits,
recip[k] 33 bits (recip[1] = 2^32), last_seen 48 bits.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, replace
from enum import Enum

from ratelab_model.counters import PortCounters
from ratelab_model.packet import FLAG_FIN, RbccHeader


def slot_index(src: int, dst: int, port: int, slots: int) -> int:
    """CRC-32 (IEEE 802.3, as v1model's crc32) of src, dst, port as 16 bits, low bits kept."""
    return zlib.crc32(struct.pack("!IIH", src, dst, port)) & (slots - 1)


def reciprocals(slots: int) -> tuple[int, ...]:
    """recip[k] = floor(2^32 / k) for 1 <= k <= slots; recip[0] is unused (0)."""
    return (0, *((1 << 32) // k for k in range(1, slots + 1)))


@dataclass
class PortAggregates:
    n: int = 0  # flows with a slot
    n_limited: int = 0  # of those, flows whose rate is set elsewhere
    sum_limited: int = 0  # sum of their recorded rates, B/s


def _water_fill(
    capacity: int, rest: int, sharers: int, n: int, recip: tuple[int, ...], min_rate: int
) -> int:
    """One water-filling step, floored, at least min_rate: the capacity left by
    the `rest` set elsewhere split among `sharers`, or, when that leaves
    nothing, the capacity split among all `n` flows."""
    if capacity > rest:
        share = ((capacity - rest) * recip[max(1, sharers)]) >> 32
    else:
        share = (capacity * recip[max(1, n)]) >> 32
    return max(share, min_rate)


def fair_share(agg: PortAggregates, capacity: int, recip: tuple[int, ...], min_rate: int) -> int:
    """RBCC.md "Fair share": one water-filling step, floored, at least min_rate."""
    return _water_fill(capacity, agg.sum_limited, agg.n - agg.n_limited, agg.n, recip, min_rate)


def flow_share(
    agg: PortAggregates, capacity: int, recip: tuple[int, ...], min_rate: int, own_rate: int
) -> int:
    """RBCC.md step 4 (Amendment 1): the share a flow recorded as limited at
    `own_rate` would get if this port set its rate: its rate leaves the limited
    sum and it joins the sharers. The fallback branch is the plain share's."""
    rest = agg.sum_limited - own_rate
    sharers = agg.n - agg.n_limited + 1
    return _water_fill(capacity, rest, sharers, agg.n, recip, min_rate)


@dataclass
class AbtSlot:
    src: int
    dst: int
    port: int
    rate: int  # the flow's recorded current_rate, B/s
    limited: bool
    last_seen_us: int


class AbtOutcome(Enum):
    HIT = "hit"  # aggregates untouched, only last_seen refreshed
    UPDATE = "update"  # cache miss: slot rewritten (includes a fresh insert)
    COLLISION = "collision"  # slot holds another live flow: ABT untouched


@dataclass(frozen=True)
class RbccResult:
    header: RbccHeader  # as stamped
    outcome: AbtOutcome
    share: int  # share_f: the share this packet was stamped with


class Abt:
    """The ABT shared by all ports plus each port's aggregates and capacity."""

    def __init__(
        self,
        slots: int,
        idle_timeout_us: int,
        router_id: int,
        min_rate: int,
        capacity: dict[int, int],
    ) -> None:
        self.slots: list[AbtSlot | None] = [None] * slots
        self.idle_timeout_us = idle_timeout_us
        self.router_id = router_id
        self.min_rate = min_rate
        self.capacity = capacity
        self.recip = reciprocals(slots)
        self.aggregates = {port: PortAggregates() for port in capacity}

    def share(self, port: int) -> int:
        return fair_share(self.aggregates[port], self.capacity[port], self.recip, self.min_rate)

    def _remove_contribution(self, slot: AbtSlot) -> None:
        agg = self.aggregates[slot.port]
        if slot.limited:
            agg.n_limited -= 1
            agg.sum_limited -= slot.rate

    def _free(self, index: int, counters: dict[int, PortCounters]) -> None:
        old = self.slots[index]
        assert old is not None
        self._remove_contribution(old)
        self.aggregates[old.port].n -= 1
        counters[old.port].abt_removals += 1
        self.slots[index] = None

    def process(
        self,
        port: int,
        src: int,
        dst: int,
        header: RbccHeader,
        now_us: int,
        counters: dict[int, PortCounters],
    ) -> RbccResult:
        """RBCC.md "Per packet" steps 1-5 for an admitted RBCC packet to `port`."""
        count = counters[port]
        count.rbcc_packets += 1
        index = slot_index(src, dst, port, len(self.slots))
        slot = self.slots[index]
        agg = self.aggregates[port]

        # Step 1: find or claim the slot; a stale occupant (idle strictly
        # longer than idle_timeout) is evicted first.
        held = slot is not None and (slot.src, slot.dst, slot.port) == (src, dst, port)
        if slot is not None and not held:
            if now_us - slot.last_seen_us <= self.idle_timeout_us:
                count.abt_collisions += 1
                return self._stamp(port, header, AbtOutcome.COLLISION, None)
            self._free(index, counters)
            slot = None
        if slot is None:
            agg.n += 1
            count.abt_inserts += 1

        # Step 2.
        limited = header.return_bottle_node != self.router_id

        # Step 3: cache check.
        if (
            held
            and slot is not None
            and slot.limited == limited
            and (not limited or slot.rate == header.current_rate)
        ):
            count.abt_hits += 1
            slot.last_seen_us = now_us
            outcome = AbtOutcome.HIT
        else:
            count.abt_updates += 1
            if slot is not None:
                self._remove_contribution(slot)
            if limited:
                agg.n_limited += 1
                agg.sum_limited += header.current_rate
            self.slots[index] = AbtSlot(src, dst, port, header.current_rate, limited, now_us)
            outcome = AbtOutcome.UPDATE

        # Step 4 (with the aggregates and slot as this packet left them), then step 5.
        result = self._stamp(port, header, outcome, self.slots[index])
        if header.flags & FLAG_FIN:
            self._free(index, counters)
        return result

    def _stamp(
        self, port: int, header: RbccHeader, outcome: AbtOutcome, slot: AbtSlot | None
    ) -> RbccResult:
        if slot is not None and slot.limited:
            share = flow_share(
                self.aggregates[port], self.capacity[port], self.recip, self.min_rate, slot.rate
            )
        else:
            share = self.share(port)
        if share < header.rate:
            header = replace(header, rate=share, bottle_node=self.router_id)
        return RbccResult(header, outcome, share)
