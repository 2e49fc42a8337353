"""The sans-IO UDP sources and sink."""

from __future__ import annotations

import itertools

import pytest
from ratelab_hosts.pacing import ceil_div
from ratelab_hosts.udp import UdpSink, UdpSource, UdpSourceConfig
from ratelab_hosts.wire import parse_udp_probe, udp_probe

SECOND = 1_000_000


def departures(cfg: UdpSourceConfig, start: int = 0) -> list[tuple[int, bytes]]:
    source = UdpSource(cfg, start)
    out = []
    while (t := source.poll_at()) is not None:
        out.extend((t, p) for p in source.on_timer(t))
    assert source.done and source.packets_sent == len(out)
    return out


def test_cbr_departures_are_size_over_rate_apart() -> None:
    cfg = UdpSourceConfig(rate=30_000, size=1000, duration_us=SECOND)
    sent = departures(cfg, start=7)
    assert [t for t, _ in sent] == [7 + ceil_div(k * 10**9, 30_000) for k in range(30)]
    for k, (t, payload) in enumerate(sent):
        assert len(payload) == 1000 - 28  # size is the IPv4 length
        assert parse_udp_probe(payload) == (1, k, t)


def test_cbr_with_on_off_sends_only_while_on() -> None:
    # 10 kB/s, 1000 B: every 100 ms while on; on 0.3 s, off 0.5 s, for 2 s.
    cfg = UdpSourceConfig(
        rate=10_000, size=1000, duration_us=2 * SECOND, on_us=300_000, off_us=500_000
    )
    times = [t for t, _ in departures(cfg)]
    assert times == [
        0,
        100_000,
        200_000,
        800_000,
        900_000,
        1_000_000,
        1_600_000,
        1_700_000,
        1_800_000,
    ]


def test_poisson_is_fixed_by_its_seed_and_has_the_mean_rate() -> None:
    cfg = UdpSourceConfig(rate=100_000, size=1000, duration_us=100 * SECOND, poisson=True, seed=42)
    times = [t for t, _ in departures(cfg)]
    assert times == [t for t, _ in departures(cfg)]
    other = [t for t, _ in departures(UdpSourceConfig(**{**cfg.__dict__, "seed": 43}))]
    assert other != times
    # 10_000 expected; the count is Poisson-distributed (sd 100) and fixed by the seed
    assert 9_600 < len(times) < 10_400
    gaps = [b - a for a, b in itertools.pairwise(times)]
    short = sum(1 for g in gaps if g < 10_000)  # P(gap < mean) = 1 - 1/e = 0.632
    assert 0.60 < short / len(gaps) < 0.66


def test_poisson_on_off_stays_inside_on_periods() -> None:
    cfg = UdpSourceConfig(
        rate=50_000,
        size=500,
        duration_us=12 * SECOND,
        poisson=True,
        on_us=SECOND,
        off_us=5 * SECOND,
    )
    times = [t for t, _ in departures(cfg)]
    assert times
    assert all(t % (6 * SECOND) < SECOND for t in times)
    assert {t // (6 * SECOND) for t in times} == {0, 1}


@pytest.mark.parametrize(
    "kw",
    [
        {"rate": 0},
        {"size": 47},
        {"on_us": SECOND},
        {"on_us": 0, "off_us": 1},
        {"duration_us": -1},
        {"flow_id": 1 << 32},
    ],
)
def test_bad_source_configuration_is_rejected(kw: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        UdpSourceConfig(**{"rate": 1000, **kw})  # type: ignore[arg-type]


def test_sink_counts_losses_reordering_and_delay_per_flow() -> None:
    sink = UdpSink(0)
    for seq in (0, 1, 3, 2, 6):
        sink.on_datagram(1000 + seq, "10.0.0.1", udp_probe(5, seq, seq, 100))
    sink.on_datagram(2000, "10.0.0.9", udp_probe(5, 0, 1500, 100))
    sink.on_datagram(2000, "10.0.0.9", b"tiny")
    a = sink.flows[("10.0.0.1", 5)]
    assert (a.packets_received, a.bytes_received, a.lost, a.reordered) == (5, 640, 2, 1)
    assert (a.delay_min_us, a.delay_max_us, a.delay_sum_us) == (1000, 1000, 5000)
    b = sink.flows[("10.0.0.9", 5)]
    assert (b.packets_received, b.lost) == (1, 0)
    assert sink.malformed == 1
    summary = {(s["src"], s["flow_id"]): s for s in sink.summary()}
    assert summary[("10.0.0.1", 5)]["lost"] == 2
    assert summary[("10.0.0.1", 5)]["delay_mean_us"] == 1000
