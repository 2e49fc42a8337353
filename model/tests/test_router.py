"""The pipeline as a whole: order of forwarding, admission and RBCC; counters; records."""

from __future__ import annotations

from decimal import Decimal

import pytest
from ratelab_model.config import AqmConfig
from ratelab_model.packet import FLAG_FIN, RATE_UNLIMITED, RbccHeader, ip_to_int, rbcc_frame
from ratelab_model.router import Router
from ratelab_model.vectors.cases import H1, H2, ROUTER_ID, UNROUTED, port, topology, udp


def _rbcc(current: int, flags: int = 0, src: int = H1) -> bytes:
    return rbcc_frame(src, H2, RbccHeader(flags, 17, RATE_UNLIMITED, 0, RATE_UNLIMITED, 0, current))


def test_forwarded_frame_and_counters() -> None:
    router = Router(topology())
    (out,) = router.process(1, udp(H1, H2, size=100), 5)
    assert out.port == 2 and out.t_deq_us == 5 and len(out.frame) == 100
    assert out.frame[:12] == bytes([2, 0, 0, 0, 1, 2, 2, 0, 0, 0, 0, 2])
    assert router.counters[1].packets_in == 1
    assert (router.counters[2].packets_out, router.counters[2].bytes_out) == (1, 100)
    assert router.process(1, udp(H1, UNROUTED), 6) == []
    assert router.counters[1].drop_no_route == 1


def test_dropped_rbcc_packets_never_touch_the_abt() -> None:
    router = Router(topology(port(2, rate_bps=1_000_000, queue_limit=1, capacity=9000)))
    router.process(1, _rbcc(1000), 0)  # on the wire at once
    router.process(1, _rbcc(1000), 1)  # waits: q = 1 from now on
    assert router.process_packet(1, _rbcc(1000, FLAG_FIN), 2).decision == "queue_full"
    assert router.process_packet(1, _rbcc(50, src=ip_to_int("10.0.3.3")), 3).rbcc is None
    assert router.abt.aggregates[2].n == 1
    assert router.counters[2].rbcc_packets == 2
    assert router.counters[2].drop_queue_full == 2


def test_red_runs_before_the_queue_limit_and_records_what_it_saw() -> None:
    aqm = AqmConfig("red", Decimal("0.2"), Decimal("0.1"), 1, 2, seed=5)
    router = Router(topology(port(2, rate_bps=1_000_000, queue_limit=2, aqm=aqm)))
    records = [router.process_packet(1, udp(H1, H2), t) for t in range(0, 60, 10)]
    assert [r.q for r in records] == [0, 0, 1, 2, 2, 2]
    assert [r.decision for r in records][:4] == [
        "forwarded",
        "forwarded",
        "forwarded",
        "queue_full",
    ]
    assert records[-1].avg == router.red_avg(2) == router.counters[2].last_avg
    assert router.counters[2].last_q == 2
    # avg: 0, 0, 0.2, 0.56 (=0.2 + 0.2 * 1.8), ... in Q16.16 with wq16 = 13107
    assert records[2].avg == (1 << 16) * 13107 >> 16
    forced = [r for r in records if r.decision == "red_forced"]
    assert all(r.avg >= 2 << 16 for r in forced)


def test_stamped_rate_written_back_into_the_frame() -> None:
    router = Router(topology(port(2, capacity=5000)))
    (out,) = router.process(1, _rbcc(1000), 0)
    header = RbccHeader.decode(out.frame[34:])
    # A lone flow limited at 1000 is offered the whole port (Amendment 1).
    assert (header.rate, header.bottle_node) == (5000, ROUTER_ID)


def test_misuse_is_refused() -> None:
    router = Router(topology())
    router.process(1, udp(H1, H2), 100)
    with pytest.raises(ValueError, match="time went backwards"):
        router.process(1, udp(H1, H2), 99)
    with pytest.raises(ValueError, match="unconfigured port 9"):
        router.process(9, udp(H1, H2), 100)
