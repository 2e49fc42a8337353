"""The sans-IO UDP sources and sink (Rust, crate ratelab-stack, through ratelab_hoststack)."""

from __future__ import annotations

import itertools
import math

import pytest
from ratelab_hosts.pacing import ceil_div
from ratelab_hosts.udp import UdpSink, UdpSource, UdpSourceConfig
from ratelab_hosts.wire import UDP_OVERHEAD, UDP_PROBE_LEN, parse_udp_probe, udp_probe

SECOND = 1_000_000
NS = 1_000  # ns per us: probe send times are ns


def departures(cfg: UdpSourceConfig, start: int = 0) -> list[tuple[int, bytes]]:
    source = UdpSource(cfg, start)
    out = []
    while (t := source.poll_at()) is not None:
        out.extend((t, p) for p in source.on_timer(t))
    assert source.done and source.packets_sent == len(out)
    assert source.bytes_sent == cfg.size * len(out)
    return out


def test_cbr_departures_are_size_over_rate_apart() -> None:
    cfg = UdpSourceConfig(rate=30_000, size=1000, duration_us=SECOND)
    sent = departures(cfg, start=7)
    assert [t for t, _ in sent] == [7 + ceil_div(k * 10**9, 30_000) for k in range(30)]
    for k, (t, payload) in enumerate(sent):
        assert len(payload) == 1000 - UDP_OVERHEAD  # size is the IPv4 length
        assert parse_udp_probe(payload) == (1, k, t * NS)
        assert payload[UDP_PROBE_LEN:] == bytes(len(payload) - UDP_PROBE_LEN)


def test_a_late_caller_gets_the_backlog_stamped_now_and_the_schedule_holds() -> None:
    source = UdpSource(UdpSourceConfig(rate=10_000, size=1000, duration_us=SECOND), 0)
    assert [parse_udp_probe(p) for p in source.on_timer(250_000)] == [
        (1, k, 250_000 * NS) for k in range(3)
    ]
    assert source.poll_at() == 300_000  # still every 100 ms from the start
    assert source.on_timer(299_999) == []


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


def test_poisson_is_fixed_by_its_seed_and_has_exponential_gaps_of_the_mean() -> None:
    # The generator is the crate's PCG32 (not Python's random): the sequence is
    # checked for determinism and statistics, not for particular values.
    cfg = UdpSourceConfig(rate=100_000, size=1000, duration_us=100 * SECOND, poisson=True, seed=42)
    times = [t for t, _ in departures(cfg)]
    assert times == [t for t, _ in departures(cfg)]
    assert times == sorted(times) and times[0] > 0  # the first departure after a gap
    other = [t for t, _ in departures(UdpSourceConfig(**{**_fields(cfg), "seed": 43}))]
    assert other != times
    # 10_000 expected; the count is Poisson-distributed (sd 100) and fixed by the seed
    assert 9_600 < len(times) < 10_400
    gaps = [b - a for a, b in itertools.pairwise(times)]
    mean = sum(gaps) / len(gaps)
    assert 9_600 < mean < 10_400  # size / rate = 10 ms
    short = sum(1 for g in gaps if g < 10_000)  # P(gap < mean) = 1 - 1/e = 0.632
    assert 0.60 < short / len(gaps) < 0.66
    sd = math.sqrt(sum((g - mean) ** 2 for g in gaps) / len(gaps))
    assert 0.95 < sd / mean < 1.05  # exponential: coefficient of variation 1


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
    assert 150 < len(times) < 250  # 100 per on-second, two on-periods
    assert all(t % (6 * SECOND) < SECOND for t in times)
    assert {t // (6 * SECOND) for t in times} == {0, 1}


def test_source_summary_keeps_the_json_keys() -> None:
    cfg = UdpSourceConfig(rate=10_000, size=100, duration_us=SECOND, on_us=SECOND, off_us=0)
    source = UdpSource(cfg, 5)
    source.on_timer(5)
    assert source.summary() == {
        "role": "udp-send",
        "flow_id": 1,
        "rate": 10_000,
        "size": 100,
        "poisson": False,
        "seed": None,
        "on_s": 1.0,
        "off_s": 0.0,
        "packets_sent": 1,
        "bytes_sent": 100,
    }
    assert UdpSource(UdpSourceConfig(rate=1, poisson=True, seed=9), 0).summary()["seed"] == 9


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"rate": 0}, "rate must be"),
        ({"rate": 125_000_000_001}, "rate must be"),
        ({"rate": "fast"}, "rate must be"),
        ({"size": 47}, "size must be 48..65535"),
        ({"size": 65_536}, "size must be"),
        ({"on_us": SECOND}, "give both on and off"),
        ({"on_us": 0, "off_us": 1}, "on must be > 0"),
        ({"on_us": 1, "off_us": -1}, "off >= 0"),
        ({"duration_us": -1}, "duration must be >= 0"),
        ({"flow_id": 1 << 32}, "flow_id must fit 32 bits"),
        ({"seed": -1}, "seed must be"),
    ],
)
def test_bad_source_configuration_is_rejected(kw: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message) as exc:
        UdpSourceConfig(**{"rate": 1000, **kw})  # type: ignore[arg-type]
    assert "\n" not in str(exc.value)


def test_times_out_of_range_are_rejected() -> None:
    with pytest.raises(ValueError, match="out of range"):
        UdpSource(UdpSourceConfig(rate=1000), 1 << 62)
    with pytest.raises(ValueError, match="out of range"):
        UdpSink(0).on_datagram(1 << 62, "10.0.0.1", udp_probe(1, 0, 0, 100))


def test_sink_counts_losses_reordering_duplicates_and_delay_per_flow() -> None:
    sink = UdpSink(0)
    for seq in (0, 1, 3, 2, 6, 6):
        sink.on_datagram(1000 + seq, "10.0.0.1", udp_probe(5, seq, seq * NS, 100))
    sink.on_datagram(2_500_000, "10.0.0.9", udp_probe(5, 0, 1500 * NS, 100))
    sink.on_datagram(2000, "10.0.0.9", b"tiny")
    assert sink.malformed == 1
    a, b = sink.summary()  # in order of first arrival
    assert (a["src"], a["flow_id"], b["src"], b["flow_id"]) == ("10.0.0.1", 5, "10.0.0.9", 5)
    # 100-byte payloads are 128 bytes on IPv4; the duplicate 6 is not counted as received.
    assert (a["packets_received"], a["bytes_received"], a["duplicates"]) == (5, 640, 1)
    assert (a["lost"], a["highest_seq"], a["reordered"]) == (2, 6, 1)
    assert (a["delay_min_us"], a["delay_max_us"], a["delay_mean_us"]) == (1000, 1000, 1000)
    assert a["throughput_bps"] == 640 * 8 * SECOND // 6
    assert a["bytes_per_second"] == [{"t_s": 0, "bytes": 640}]
    assert (b["packets_received"], b["lost"], b["throughput_bps"]) == (1, 0, None)
    assert b["delay_min_us"] == 2_500_000 - 1500
    assert b["bytes_per_second"] == [{"t_s": 2, "bytes": 128}]


def test_source_to_sink_measures_one_way_delay_and_loss() -> None:
    source = UdpSource(UdpSourceConfig(rate=100_000, size=1000, duration_us=SECOND), 0)
    sink = UdpSink(0)
    k = 0
    while (t := source.poll_at()) is not None:
        for payload in source.on_timer(t):
            if k % 10 != 3:  # every tenth datagram lost on the way
                sink.on_datagram(t + 2_345, "10.0.0.1", payload)
            k += 1
    (flow,) = sink.summary()
    assert (flow["packets_received"], flow["lost"], flow["highest_seq"]) == (90, 10, 99)
    assert flow["delay_min_us"] == flow["delay_max_us"] == 2_345
    assert flow["bytes_per_second"] == [{"t_s": 0, "bytes": 90_000}]


def _fields(cfg: UdpSourceConfig) -> dict[str, object]:
    names = ("rate", "size", "duration_us", "poisson", "seed", "on_us", "off_us", "flow_id")
    return {n: getattr(cfg, n) for n in names}
