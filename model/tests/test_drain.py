"""The queue drain model: transmission times, q as an arrival sees it, idle start."""

from __future__ import annotations

import random

from ratelab_model.drain import DrainQueue, service_time_us


def test_service_time_rounds_up_and_is_zero_when_unlimited() -> None:
    assert service_time_us(60, 1_000_000) == 480
    assert service_time_us(60, 1_100_000) == 437  # 436.36...
    assert service_time_us(1500, 0) == 0


def test_q_counts_admitted_packets_not_yet_dequeued() -> None:
    """Against a direct recount over every packet's dequeue time."""
    rng = random.Random(3)
    queue = DrainQueue(2_000_000)
    deq_times: list[int] = []
    now = 0
    for _ in range(500):
        now += rng.choice([0, 10, 100, 500, 3000])
        q = queue.length_at(now)
        assert q == sum(1 for t in deq_times if t > now)
        if q < 8:
            t_deq = queue.admit(now, rng.choice([60, 500, 1500]))
            assert t_deq >= now and t_deq >= max(deq_times, default=0)
            deq_times.append(t_deq)


def test_idle_since_is_the_dequeue_time_of_the_packet_that_empties_the_queue() -> None:
    queue = DrainQueue(1_000_000)  # 480 us per 60 B frame
    assert queue.admit(100, 60) == 100  # straight onto the wire: queue empty at 100
    assert queue.idle_since_us == 100
    assert queue.admit(200, 60) == 580  # waits for the first
    assert queue.admit(300, 60) == 1060
    assert queue.length_at(1059) == 1
    assert queue.idle_since_us == 100
    assert queue.length_at(5000) == 0
    assert queue.idle_since_us == 1060


def test_unlimited_port_never_queues() -> None:
    queue = DrainQueue(0)
    for t in (0, 0, 0, 5):
        assert queue.length_at(t) == 0
        assert queue.admit(t, 1500) == t
