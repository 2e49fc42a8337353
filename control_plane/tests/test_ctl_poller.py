"""The time series: format of the rows, schedule of the samples."""

from __future__ import annotations

import csv
import io
import json
import time

import pytest
from ratelab_ctl.counters import CounterSnapshot
from ratelab_ctl.poller import SERIES_FIELDS, BackgroundPoller, Poller, SeriesWriter, summary_line
from ratelab_model.counters import COUNTER_NAMES, PortCounters


def snap(t: float, gauges: bool = True, out: int = 0) -> CounterSnapshot:
    a = PortCounters(packets_out=out, bytes_out=out * 1500, last_q=3, last_avg=3 * 65536 // 2)
    b = PortCounters(packets_in=out, drop_red_early=2)
    return CounterSnapshot(t, {1: a, 3: b}, gauges)


def test_csv_rows() -> None:
    buf = io.StringIO()
    w = SeriesWriter(buf, "csv")
    w.write(snap(1000.0, out=10))
    w.write(snap(1000.5, gauges=False, out=20))
    rows = list(csv.reader(io.StringIO(buf.getvalue())))
    assert rows[0] == list(SERIES_FIELDS)
    assert ("time", "elapsed_s", "port", *COUNTER_NAMES) == SERIES_FIELDS
    assert len(rows) == 1 + 4 and w.rows == 4  # one row per port per sample
    first = dict(zip(rows[0], rows[1], strict=True))
    assert first["time"] == "1000.0" and first["elapsed_s"] == "0.0" and first["port"] == "1"
    assert first["packets_out"] == "10" and first["bytes_out"] == "15000"
    assert first["last_q"] == "3" and first["last_avg"] == str(3 * 65536 // 2)
    third = dict(zip(rows[0], rows[3], strict=True))
    assert third["elapsed_s"] == "0.5" and third["port"] == "1"
    assert third["last_q"] == "" and third["last_avg"] == ""  # not read: empty, not 0
    fourth = dict(zip(rows[0], rows[4], strict=True))
    assert fourth["port"] == "3" and fourth["drop_red_early"] == "2"


def test_jsonl_rows(tmp_path) -> None:
    path = tmp_path / "series.jsonl"
    w = SeriesWriter.for_path(path)
    w.write(snap(5.0, gauges=False, out=1))
    w.close()
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["port"] for r in rows] == [1, 3]
    assert list(rows[0]) == list(SERIES_FIELDS)
    assert rows[0]["last_q"] is None and rows[0]["packets_out"] == 1
    assert SeriesWriter.for_path(tmp_path / "s.csv").fmt == "csv"


class FakeTime:
    def __init__(self) -> None:
        self.now = 100.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, s: float) -> None:
        self.sleeps.append(round(s, 9))
        self.now += s


def test_schedule_and_duration() -> None:
    t = FakeTime()
    reads: list[float] = []

    def read() -> CounterSnapshot:
        reads.append(t.now)
        t.now += 0.1  # each read takes 0.1 s: the schedule must not drift
        return snap(t.now)

    seen: list[tuple[float, float | None]] = []
    p = Poller(
        read,
        SeriesWriter(io.StringIO()),
        interval=0.5,
        duration=2.0,
        on_sample=lambda s, prev: seen.append((s.time, prev.time if prev else None)),
        clock=t.clock,
        sleep=t.sleep,
    )
    assert p.run() == 5  # at 0, 0.5, 1.0, 1.5, 2.0
    assert [round(r - 100.0, 6) for r in reads] == [0.0, 0.5, 1.0, 1.5, 2.0]
    assert t.sleeps == [0.4] * 4
    assert seen[0][1] is None and seen[1][1] == seen[0][0]


def test_overrun_samples_at_once_and_stop() -> None:
    t = FakeTime()
    p: Poller
    reads: list[float] = []

    def read() -> CounterSnapshot:
        reads.append(t.now)
        t.now += 0.7  # slower than the interval
        if len(reads) == 4:
            p.stop()
        return snap(t.now)

    p = Poller(read, SeriesWriter(io.StringIO()), 0.5, None, None, t.clock, t.sleep)
    assert p.run() == 4
    assert t.sleeps == []  # behind schedule: the next read starts at once
    assert [round(r - 100.0, 6) for r in reads] == [0.0, 0.7, 1.4, 2.1]
    with pytest.raises(ValueError):
        Poller(read, SeriesWriter(io.StringIO()), 0, None)


def test_summary_line() -> None:
    prev = PortCounters(packets_out=100, bytes_out=150_000)
    cur = PortCounters(
        packets_out=600, bytes_out=900_000, last_q=12, last_avg=10 * 65536, drop_red_early=4
    )
    cur.rbcc_packets, cur.abt_hits = 200, 199
    line = summary_line(3, cur, prev, 0.5, True)
    assert line == (
        "port   3: out        600    1000.0 pkt/s   12.000 Mbit/s q    12 avg   10.00 "
        "drops full 0 early 4 forced 0 rbcc 200 hit  99.5%"
    )
    assert "q     - avg       -" in summary_line(3, cur, None, 0.0, False)


def test_background_poller_keeps_a_failed_read_and_stops() -> None:
    calls = []

    def read() -> CounterSnapshot:
        calls.append(1)
        if len(calls) == 3:
            raise ConnectionError("switch went away")
        return CounterSnapshot(float(len(calls)), {1: PortCounters()}, True)

    out = io.StringIO()
    background = BackgroundPoller(Poller(read, SeriesWriter(out), 0.001), "test").start()
    deadline = time.monotonic() + 5
    while background.error is None and time.monotonic() < deadline:
        time.sleep(0.01)
    background.stop()
    assert isinstance(background.error, ConnectionError)
    assert len(calls) == 3 and out.getvalue().count("\n") == 1 + 2  # header + two rows
