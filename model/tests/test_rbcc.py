"""RBCC router rules (RBCC.md "Router state", "Per packet"), one by one, and
the table's invariants under random traffic."""

from __future__ import annotations

import random

from ratelab_model.counters import PortCounters
from ratelab_model.packet import FLAG_FIN, RATE_UNLIMITED, RbccHeader
from ratelab_model.rbcc import (
    Abt,
    AbtOutcome,
    PortAggregates,
    fair_share,
    flow_share,
    reciprocals,
    slot_index,
)

ME, OTHER = 77, 88


def _crc32_bitwise(data: bytes) -> int:
    """IEEE 802.3 CRC-32, reflected, init and final xor 0xFFFFFFFF: written out bit by bit."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0xEDB88320 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def test_slot_index_is_crc32_of_src_dst_port16() -> None:
    rng = random.Random(2)
    for _ in range(200):
        src, dst, port = rng.getrandbits(32), rng.getrandbits(32), rng.randrange(512)
        raw = src.to_bytes(4, "big") + dst.to_bytes(4, "big") + port.to_bytes(2, "big")
        assert slot_index(src, dst, port, 1024) == _crc32_bitwise(raw) % 1024
    assert _crc32_bitwise(b"123456789") == 0xCBF43926  # the CRC-32 check value


def test_share_is_the_floored_division_or_one_less() -> None:
    recip = reciprocals(1024)
    rng = random.Random(4)
    for _ in range(2000):
        capacity = rng.getrandbits(32)
        n = rng.randrange(0, 1025)
        n_limited = rng.randrange(0, n + 1)
        sum_limited = rng.choice([0, rng.getrandbits(rng.randrange(1, 40))])
        share = fair_share(PortAggregates(n, n_limited, sum_limited), capacity, recip, 0)
        if capacity > sum_limited:
            exact = (capacity - sum_limited) // max(1, n - n_limited)
        else:
            exact = capacity // max(1, n)
        assert exact - 1 <= share <= exact


def test_min_rate_is_a_floor() -> None:
    assert fair_share(PortAggregates(3, 0, 0), 3000, reciprocals(4), 1500) == 1500


def _data(current: int, rbn: int = 0, rate: int = RATE_UNLIMITED, flags: int = 0) -> RbccHeader:
    return RbccHeader(flags, 17, rate, 0, RATE_UNLIMITED, rbn, current)


class _Table:
    def __init__(self, slots: int = 1024, capacity: int = 10_000) -> None:
        self.counters = {1: PortCounters(), 2: PortCounters()}
        self.abt = Abt(slots, 1_000_000, ME, 1, {1: capacity, 2: capacity})

    def send(self, src: int, header: RbccHeader, now: int = 0, port: int = 1, dst: int = 9):
        return self.abt.process(port, src, dst, header, now, self.counters)


def test_insert_hit_and_the_cache_miss_rules() -> None:
    t = _Table()
    assert t.send(1, _data(100)).outcome is AbtOutcome.UPDATE  # insert
    assert t.counters[1].abt_inserts == 1
    assert t.send(1, _data(100)).outcome is AbtOutcome.HIT
    assert t.send(1, _data(101)).outcome is AbtOutcome.UPDATE  # limited, new rate
    assert t.abt.aggregates[1] == PortAggregates(1, 1, 101)
    assert t.send(1, _data(101, rbn=ME)).outcome is AbtOutcome.UPDATE  # limited bit flips
    assert t.abt.aggregates[1] == PortAggregates(1, 0, 0)
    assert t.send(1, _data(5, rbn=ME)).outcome is AbtOutcome.HIT  # unlimited: rate ignored
    assert t.send(1, _data(5, rbn=OTHER)).outcome is AbtOutcome.UPDATE
    assert t.counters[1].abt_inserts == 1


def test_stamp_uses_the_share_after_this_packets_update_and_only_lowers() -> None:
    t = _Table(capacity=10_000)
    t.send(1, _data(2000))  # limited at 2000
    result = t.send(2, _data(0, rbn=ME))  # not limited: the plain share
    assert result.share == 8000
    assert (result.header.rate, result.header.bottle_node) == (8000, ME)
    kept = t.send(2, _data(0, rbn=ME, rate=8000))
    assert kept.header.rate == 8000 and kept.header.bottle_node == 0


def test_limited_flow_is_offered_the_share_it_would_get_here() -> None:
    """Amendment 1: a flow recorded as limited leaves the limited set and
    joins the sharers when it is stamped."""
    t = _Table(capacity=10_000)
    lone = t.send(1, _data(2000))
    assert lone.share == 10_000  # alone: the whole port, not capacity - 2000
    assert lone.header.rate == 10_000 and lone.header.bottle_node == ME
    t.send(2, _data(0, rbn=ME))
    beside = t.send(1, _data(2000))
    assert beside.outcome is AbtOutcome.HIT and beside.share == 5000  # 10000 / 2
    kept = t.send(1, _data(2000, rate=4000))
    assert kept.header.rate == 4000 and kept.header.bottle_node == 0


def test_limited_flow_share_falls_back_to_capacity_over_n() -> None:
    t = _Table(capacity=10_000)
    t.send(1, _data(12_000))
    small = t.send(2, _data(3000))  # the rest (12000) >= capacity: 10000 / 2
    assert small.share == 5000
    big = t.send(1, _data(12_000))  # the rest is 3000: (10000 - 3000) / 1
    assert big.share == 7000


def test_flow_share_is_the_floored_division_or_one_less() -> None:
    recip = reciprocals(1024)
    rng = random.Random(5)
    for _ in range(2000):
        capacity = rng.getrandbits(32)
        n = rng.randrange(1, 1025)
        n_limited = rng.randrange(1, n + 1)
        own = rng.getrandbits(32)
        sum_limited = own + rng.choice([0, rng.getrandbits(rng.randrange(1, 40))])
        share = flow_share(PortAggregates(n, n_limited, sum_limited), capacity, recip, 0, own)
        if capacity > sum_limited - own:
            exact = (capacity - (sum_limited - own)) // (n - n_limited + 1)
        else:
            exact = capacity // n
        assert exact - 1 <= share <= exact


def test_collision_leaves_the_table_alone_until_the_occupant_is_stale() -> None:
    t = _Table(slots=1)  # every flow shares slot 0
    t.send(1, _data(300), now=0)
    before = PortAggregates(**vars(t.abt.aggregates[1]))
    result = t.send(2, _data(100, flags=FLAG_FIN), now=1_000_000)  # exactly the timeout
    assert result.outcome is AbtOutcome.COLLISION and result.share == 9700
    assert t.abt.aggregates[1] == before and t.counters[1].abt_collisions == 1
    result = t.send(2, _data(100), now=1_000_001, port=2)  # occupant now stale
    assert result.outcome is AbtOutcome.UPDATE
    assert t.abt.aggregates[1] == PortAggregates(0, 0, 0)
    assert t.abt.aggregates[2] == PortAggregates(1, 1, 100)
    assert t.counters[1].abt_removals == 1 and t.counters[2].abt_inserts == 1


def test_fin_removes_after_stamping() -> None:
    t = _Table()
    t.send(1, _data(0, rbn=ME))
    t.send(2, _data(0, rbn=ME))
    result = t.send(1, _data(0, rbn=ME, flags=FLAG_FIN))
    assert result.share == 5000  # both flows still counted when stamping
    assert t.abt.aggregates[1] == PortAggregates(1, 0, 0)
    assert t.counters[1].abt_removals == 1
    assert t.send(1, _data(1000)).outcome is AbtOutcome.UPDATE
    assert t.counters[1].abt_inserts == 3


def test_invariants_under_random_traffic() -> None:
    """Aggregates always equal a recount of the slots; counters add up."""
    rng = random.Random(11)
    t = _Table(slots=32)
    now = 0
    for _ in range(3000):
        now += rng.choice([1, 10, 1000, 400_000])
        header = _data(
            rng.choice([100, 200, RATE_UNLIMITED]),
            rbn=rng.choice([0, ME, OTHER]),
            flags=FLAG_FIN if rng.random() < 0.05 else 0,
        )
        t.send(rng.randrange(40), header, now=now, port=rng.choice([1, 2]))
        for port in (1, 2):
            held = [s for s in t.abt.slots if s is not None and s.port == port]
            limited = [s for s in held if s.limited]
            assert t.abt.aggregates[port] == PortAggregates(
                len(held), len(limited), sum(s.rate for s in limited)
            )
            c = t.counters[port]
            assert c.abt_hits + c.abt_updates + c.abt_collisions == c.rbcc_packets
            assert c.abt_inserts - c.abt_removals == len(held)
