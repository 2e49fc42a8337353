"""The sans-IO parts of the kernel-TCP traffic: write schedules of the
patterns, TCP_INFO samples and their statistics, the sink's per-connection
counts. No sockets, no clock."""

from __future__ import annotations

import dataclasses

import pytest
from ratelab_hosts.pacing import ceil_div
from ratelab_hosts.tcp_info import TcpInfo
from ratelab_hosts.tcp_traffic import (
    BULK_WRITE,
    TcpSchedule,
    TcpSendConfig,
    TcpSendRecorder,
    TcpSinkStats,
    check_congestion_control,
)

MS = 1_000
SECOND = 1_000_000


def run(cfg: TcpSendConfig, start: int = 0) -> list[tuple[int, int]]:
    """(time, bytes) of every write when the socket takes all it is given
    and the caller wakes exactly at wake_at()."""
    schedule = TcpSchedule(cfg, start)
    writes = []
    now: int | None = start
    while now is not None:
        while (n := schedule.next_write(now)) > 0:
            schedule.on_written(n)
            writes.append((now, n))
        assert schedule.next_write(now) == 0
        nxt = schedule.wake_at(now)
        assert nxt is None or nxt > now  # never a busy loop
        now = nxt
    assert schedule.written == sum(n for _, n in writes)
    return writes


def test_bulk_writes_until_the_duration_is_over() -> None:
    schedule = TcpSchedule(TcpSendConfig(cc="reno", duration_us=2 * SECOND), 5)
    assert schedule.next_write(5) == BULK_WRITE
    schedule.on_written(1000)  # the socket took part of a write: still more to write
    assert schedule.next_write(5) == BULK_WRITE
    assert schedule.wake_at(5) == 5 + 2 * SECOND  # nothing changes before the end
    assert schedule.next_write(5 + 2 * SECOND - 1) == BULK_WRITE
    assert not schedule.finished(5 + 2 * SECOND - 1)
    assert schedule.finished(5 + 2 * SECOND)
    assert schedule.next_write(5 + 2 * SECOND) == 0
    assert schedule.wake_at(5 + 2 * SECOND) is None


def test_bulk_with_a_byte_count_writes_exactly_that() -> None:
    cfg = TcpSendConfig(cc="reno", duration_us=None, bytes_limit=3 * BULK_WRITE + 17)
    assert run(cfg) == [(0, BULK_WRITE)] * 3 + [(0, 17)]
    schedule = TcpSchedule(cfg, 0)
    assert schedule.wake_at(0) is None  # no time limit: only the socket wakes the writer
    with pytest.raises(ValueError, match="more than allowed"):
        schedule.on_written(3 * BULK_WRITE + 18)


def test_a_byte_count_ends_a_timed_run_early() -> None:
    schedule = TcpSchedule(TcpSendConfig(cc="reno", duration_us=SECOND, bytes_limit=10), 0)
    schedule.on_written(schedule.next_write(0))
    assert schedule.written == 10 and schedule.finished(1)
    assert schedule.wake_at(1) is None


def test_on_off_writes_only_in_on_periods() -> None:
    cfg = TcpSendConfig(
        cc="cubic", pattern="onoff", duration_us=2 * SECOND, on_us=300 * MS, off_us=500 * MS
    )
    schedule = TcpSchedule(cfg, 0)
    wakes = [0]
    while (at := schedule.wake_at(wakes[-1])) is not None:
        wakes.append(at)
    assert wakes == [0, 300 * MS, 800 * MS, 1100 * MS, 1600 * MS, 1900 * MS, 2 * SECOND]
    on = [t for t in range(0, 2 * SECOND, 50 * MS) if schedule.next_write(t) > 0]
    assert on == [0, 50 * MS, 100 * MS, 150 * MS, 200 * MS, 250 * MS] + [
        t + 800 * MS for t in (0, 50 * MS, 100 * MS, 150 * MS, 200 * MS, 250 * MS)
    ] + [1600 * MS, 1650 * MS, 1700 * MS, 1750 * MS, 1800 * MS, 1850 * MS]
    # Blocked on a full socket late in an on-period: woken at its end.
    assert schedule.wake_at(299 * MS) == 300 * MS
    assert schedule.next_write(299 * MS) > 0 and schedule.next_write(300 * MS) == 0


def test_stream_writes_stream_write_bytes_on_the_exact_schedule() -> None:
    cfg = TcpSendConfig(cc="reno", pattern="stream", rate=333_333, duration_us=SECOND)
    assert cfg.stream_write == 666  # 2 ms worth
    writes = run(cfg, start=7)
    assert all(n == 666 for _, n in writes)
    assert [t for t, _ in writes] == [
        7 + ceil_div(k * 666 * SECOND, 333_333) for k in range(1, len(writes) + 1)
    ]
    # every write due before the end is made, none after
    assert len(writes) == 333_333 // 666 and writes[-1][0] < 7 + SECOND


def test_stream_catches_up_after_a_late_wake_up() -> None:
    cfg = TcpSendConfig(cc="reno", pattern="stream", rate=500_000, duration_us=SECOND)
    schedule = TcpSchedule(cfg, 0)
    assert schedule.next_write(0) == 0 and schedule.wake_at(0) == 2 * MS
    late = []
    while (n := schedule.next_write(11 * MS)) > 0:  # 5.5 writes due: 5 now
        schedule.on_written(n)
        late.append(n)
    assert late == [1000] * 5
    assert schedule.wake_at(11 * MS) == 12 * MS


def test_stream_with_a_byte_count_ends_with_the_remainder() -> None:
    cfg = TcpSendConfig(
        cc="reno", pattern="stream", rate=500_000, duration_us=None, bytes_limit=2500
    )
    assert run(cfg) == [(2 * MS, 1000), (4 * MS, 1000), (5 * MS, 500)]


@pytest.mark.parametrize(("rate", "write"), [(1_000, 512), (10**9, 64 << 10)])
def test_stream_writes_stay_between_512_bytes_and_64_kib(rate: int, write: int) -> None:
    assert TcpSendConfig(cc="reno", pattern="stream", rate=rate).stream_write == write


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"pattern": "burst"}, "pattern must be one of"),
        ({"duration_us": None}, "a duration or a byte count"),
        ({"duration_us": 0}, "duration must be > 0"),
        ({"bytes_limit": 0}, "bytes must be >= 1"),
        ({"pattern": "onoff", "on_us": SECOND}, "needs --on and --off"),
        ({"pattern": "onoff", "on_us": 0, "off_us": SECOND}, "--on must be > 0"),
        ({"on_us": SECOND, "off_us": SECOND}, "with --pattern onoff only"),
        ({"pattern": "stream"}, "needs --rate"),
        ({"rate": 1000}, "with --pattern stream only"),
        ({"pattern": "stream", "rate": 0}, "rate must be >= 1"),
        ({"sample_interval_us": 999}, "sample interval must be >= 1 ms"),
        ({"flow_id": 1 << 32}, "32 bits"),
    ],
)
def test_config_rejects(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        TcpSendConfig(cc="reno", **kwargs)  # type: ignore[arg-type]


def test_congestion_control_must_be_in_the_kernel() -> None:
    check_congestion_control("cubic", ["reno", "cubic", "bbr"])
    with pytest.raises(ValueError) as exc:
        check_congestion_control("vegas", ["reno", "cubic", "bbr"])
    assert str(exc.value) == "--cc vegas: not available in this kernel (available: reno cubic bbr)"
    with pytest.raises(ValueError, match=r"\(available: none\)"):
        check_congestion_control("reno", [])


BASE_INFO = TcpInfo(
    state=1,
    ca_state=0,
    rto_us=204_000,
    snd_mss=1448,
    unacked=0,
    sacked=0,
    lost=0,
    retrans=0,
    pmtu=1500,
    rtt_us=0,
    rttvar_us=0,
    snd_ssthresh=None,
    snd_cwnd=10,
    total_retrans=0,
    pacing_rate=None,
    bytes_acked=1,
    bytes_received=0,
    notsent_bytes=0,
    min_rtt_us=None,
    delivery_rate=None,
    bytes_sent=0,
    bytes_retrans=0,
)


def info(**changes: object) -> TcpInfo:
    return dataclasses.replace(BASE_INFO, **changes)  # type: ignore[arg-type]


def test_samples_stay_on_their_grid_and_record_the_kernel_view() -> None:
    recorder = TcpSendRecorder(1_000, 100 * MS)
    assert recorder.next_at == 1_000
    recorder.record(1_000, info(), 0)
    assert recorder.next_at == 1_000 + 100 * MS
    recorder.record(1_000 + 250 * MS, info(rtt_us=900, snd_cwnd=20, bytes_acked=5001), 6000)
    assert recorder.next_at == 1_000 + 300 * MS  # missed points skipped, grid kept
    recorder.record(1_000 + 260 * MS, info(), 6000)  # an extra sample off the grid
    assert recorder.next_at == 1_000 + 300 * MS
    sample = recorder.samples[1]
    assert sample["t_s"] == 0.25 and sample["state"] == "ESTABLISHED"
    assert sample["ca_state"] == "open" and sample["snd_cwnd"] == 20
    assert sample["rtt_us"] == 900 and sample["snd_ssthresh"] is None
    assert sample["bytes_acked"] == 5000  # the SYN's byte is not data
    assert sample["written"] == 6000


def test_flow_statistics_from_the_samples() -> None:
    recorder = TcpSendRecorder(0, 100 * MS)
    series = [
        info(rtt_us=0),  # no RTT measured yet: not in the statistics
        info(rtt_us=1_000, snd_ssthresh=None),
        info(rtt_us=3_000, snd_ssthresh=20, total_retrans=1),
        info(rtt_us=2_000, snd_ssthresh=20, total_retrans=1),
        info(rtt_us=6_000, snd_ssthresh=14, total_retrans=3, bytes_acked=10_002),
    ]
    for k, sample in enumerate(series):
        recorder.record(k * 100 * MS, sample, 10_000)
    assert recorder.stats() == {
        "retransmissions": 3,
        "bytes_acked": 10_000,  # SYN and FIN are not data
        "ssthresh_changes": 2,
        "rtt_min_us": 1_000,
        "rtt_mean_us": 3_000,
        "rtt_max_us": 6_000,
    }


def test_no_samples_no_statistics() -> None:
    stats = TcpSendRecorder(0, 100 * MS).stats()
    assert stats["rtt_mean_us"] is None and stats["retransmissions"] is None
    assert stats["ssthresh_changes"] == 0


def test_a_kernel_without_bytes_acked_gives_none() -> None:
    recorder = TcpSendRecorder(0, 100 * MS)
    recorder.record(0, info(bytes_acked=None), 500)
    assert recorder.stats()["bytes_acked"] is None


def test_sink_counts_each_connection_apart() -> None:
    sink = TcpSinkStats(1_000)
    sink.on_accept(1_000 + 10 * MS, 0, "10.0.0.1:40000")
    sink.on_accept(1_000 + 20 * MS, 1, "10.0.0.3:40001")
    sink.on_data(1_000 + 100 * MS, 0, 1_000)
    sink.on_data(1_000 + 900 * MS, 0, 500)
    sink.on_data(1_000 + SECOND + 100 * MS, 0, 2_000)
    sink.on_data(1_000 + 50 * MS, 1, 7)
    sink.on_close(1_000 + 2 * SECOND, 0, "fin")
    sink.on_close(1_000 + 3 * SECOND, 0, "reset")  # the first end stands
    assert sink.open == 1
    first, second = sink.summary()
    assert first == {
        "role": "tcp-sink",
        "src": "10.0.0.1:40000",
        "bytes_received": 3_500,
        "accepted_s": 0.01,
        "first_byte_s": 0.1,
        "last_byte_s": 1.1,
        "closed_s": 2.0,
        "end": "fin",
        "goodput_bps": 28_000,  # 3500 B over the 1 s from first to last byte
        "bytes_per_second": [{"t_s": 0, "bytes": 1_500}, {"t_s": 1, "bytes": 2_000}],
    }
    assert second["src"] == "10.0.0.3:40001" and second["bytes_received"] == 7
    assert second["end"] is None and second["closed_s"] is None
    assert second["goodput_bps"] is None  # one read: no span to divide by
    with pytest.raises(ValueError, match="accepted twice"):
        sink.on_accept(0, 1, "10.0.0.3:40001")
