"""Counter time series: one row per port per sample, CSV or JSON lines.

Columns: `time` (Unix seconds of the read), `elapsed_s` (since the first
sample), `port`, then every counter of `ratelab_model.counters.COUNTER_NAMES`
in that order (cumulative values as the switch reports them). `last_q` and
`last_avg` (Q16.16 packets) are empty in CSV / null in JSON when the target
does not serve registers (BMv2).

The poller keeps an absolute schedule (sample k at start + k * interval) so
that slow reads do not make the series drift; a sample that overruns its slot
is followed immediately by the next one.
"""

from __future__ import annotations

import csv
import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

from ratelab_model.counters import COUNTER_NAMES, PortCounters

from ratelab_ctl.counters import GAUGE_REGISTERS, CounterSnapshot

SERIES_FIELDS: tuple[str, ...] = ("time", "elapsed_s", "port", *COUNTER_NAMES)


class SeriesWriter:
    """Appends snapshots to a CSV (default) or JSON-lines (.jsonl/.json) file."""

    def __init__(self, out: IO[str], fmt: str = "csv") -> None:
        if fmt not in ("csv", "jsonl"):
            raise ValueError(f"unknown series format {fmt!r}")
        self.out = out
        self.fmt = fmt
        self.t0: float | None = None
        self.rows = 0
        self._csv = csv.writer(out, lineterminator="\n") if fmt == "csv" else None
        if self._csv is not None:
            self._csv.writerow(SERIES_FIELDS)

    @classmethod
    def for_path(cls, path: str | Path) -> SeriesWriter:
        p = Path(path)
        fmt = "jsonl" if p.suffix in (".jsonl", ".json") else "csv"
        return cls(open(p, "w", encoding="utf-8", newline=""), fmt)

    def write(self, snap: CounterSnapshot) -> None:
        if self.t0 is None:
            self.t0 = snap.time
        elapsed = round(snap.time - self.t0, 6)
        for port, pc in snap.ports.items():
            values = pc.as_dict()
            row: dict[str, object] = {"time": round(snap.time, 6), "elapsed_s": elapsed}
            row["port"] = port
            for name in COUNTER_NAMES:
                row[name] = values[name] if snap.gauges or name not in GAUGE_REGISTERS else None
            if self._csv is not None:
                self._csv.writerow(["" if row[f] is None else row[f] for f in SERIES_FIELDS])
            else:
                self.out.write(json.dumps(row) + "\n")
            self.rows += 1
        self.out.flush()

    def close(self) -> None:
        self.out.close()


def summary_line(
    port: int, cur: PortCounters, prev: PortCounters | None, dt: float, gauges: bool
) -> str:
    """One line per port: output rate since the previous sample, drops, queue, RBCC."""
    if prev is not None and dt > 0:
        pps = (cur.packets_out - prev.packets_out) / dt
        mbit = (cur.bytes_out - prev.bytes_out) * 8 / dt / 1e6
        rate = f"{pps:9.1f} pkt/s {mbit:8.3f} Mbit/s"
    else:
        rate = f"{'-':>9} pkt/s {'-':>8} Mbit/s"
    queue = (
        f"q {cur.last_q:5d} avg {cur.last_avg / 65536:7.2f}" if gauges else "q     - avg       -"
    )
    rbcc = ""
    if cur.rbcc_packets:
        hit = 100.0 * cur.abt_hits / cur.rbcc_packets
        rbcc = f" rbcc {cur.rbcc_packets} hit {hit:5.1f}%"
    return (
        f"port {port:3d}: out {cur.packets_out:10d} {rate} {queue} "
        f"drops full {cur.drop_queue_full} early {cur.drop_red_early} "
        f"forced {cur.drop_red_forced}{rbcc}"
    )


class Poller:
    """Calls `read()` every `interval` seconds, writes each snapshot, and hands it
    to `on_sample` (the live summary) until `duration` has passed or `stop()`."""

    def __init__(
        self,
        read: Callable[[], CounterSnapshot],
        writer: SeriesWriter,
        interval: float,
        duration: float | None = None,
        on_sample: Callable[[CounterSnapshot, CounterSnapshot | None], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if interval <= 0:
            raise ValueError("interval must be > 0")
        self.read = read
        self.writer = writer
        self.interval = interval
        self.duration = duration
        self.on_sample = on_sample
        self.clock = clock
        self.sleep = sleep
        self.samples = 0
        self._stop = False

    def stop(self) -> None:
        self._stop = True

    def run(self) -> int:
        start = self.clock()
        prev: CounterSnapshot | None = None
        k = 0
        while not self._stop:
            snap = self.read()
            self.writer.write(snap)
            if self.on_sample is not None:
                self.on_sample(snap, prev)
            prev = snap
            self.samples += 1
            k += 1
            due = start + k * self.interval
            if self.duration is not None and due - start > self.duration + 1e-9:
                break
            wait = due - self.clock()
            if wait > 0:
                self.sleep(wait)
        return self.samples


class BackgroundPoller:
    """A `Poller` on a thread of its own, for callers that run traffic meanwhile.

    A failed read ends the polling and is kept in `error` (it is not raised on
    the thread, where nobody would see it): when a run is torn down, the switch
    may go away before the poller is told to stop."""

    def __init__(self, poller: Poller, name: str = "poller") -> None:
        self.poller = poller
        self.error: Exception | None = None
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def _run(self) -> None:
        try:
            self.poller.run()
        except Exception as e:  # reported through `error`
            self.error = e

    def start(self) -> BackgroundPoller:
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self.poller.stop()
        if self._thread.is_alive():
            self._thread.join(timeout)
