"""Sans-IO parts of the kernel-TCP traffic: when the application writes how
much (the patterns), what a sender records from TCP_INFO, what a sink counts
per connection. The kernel does the transport; nothing here reads a clock or
touches a socket (tcp_driver.py does).

Patterns, each from the time the connection is established:

- ``bulk``: write whenever the socket takes data, until the duration is over
  or ``bytes_limit`` bytes are written.
- ``onoff``: like bulk during on-periods of ``on_us``, nothing during the
  ``off_us`` after each; the cycle runs in real time from the start.
- ``stream``: application-limited at ``rate`` B/s in writes of
  ``stream_write`` bytes (2 ms worth, 512 B to 64 KiB): write *k* (k from 1)
  is due at ``start + ceil(k * stream_write * 10^6 / rate)``. A late wake-up
  (or a socket that took nothing for a while) writes what is due at once, so
  the schedule is kept, as a real application with a backlog would.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

from ratelab_hosts.tcp_info import TcpInfo
from ratelab_hosts.units import US_PER_S, ceil_div

PATTERNS = ("bulk", "onoff", "stream")
BULK_WRITE = 64 << 10  # bytes per send() call for bulk and on-off
STREAM_TICK_US = 2_000
STREAM_WRITE_MIN = 512
STREAM_WRITE_MAX = 64 << 10
MIN_SAMPLE_INTERVAL_US = 1_000


def check_congestion_control(name: str, available: Sequence[str]) -> None:
    """ValueError with a message fit for the user unless the kernel offers `name`."""
    if name not in available:
        offered = " ".join(available) or "none"
        raise ValueError(f"--cc {name}: not available in this kernel (available: {offered})")


@dataclass(frozen=True)
class TcpSendConfig:
    cc: str
    pattern: str = "bulk"
    duration_us: int | None = 3 * US_PER_S  # None: until bytes_limit is written
    bytes_limit: int | None = None
    on_us: int | None = None  # onoff only
    off_us: int | None = None
    rate: int | None = None  # stream only, B/s
    sample_interval_us: int = 100_000
    flow_id: int = 1  # a label for the results; TCP carries no flow id

    def __post_init__(self) -> None:
        if self.pattern not in PATTERNS:
            raise ValueError(f"pattern must be one of {', '.join(PATTERNS)}")
        if self.duration_us is None and self.bytes_limit is None:
            raise ValueError("give a duration or a byte count")
        if self.duration_us is not None and self.duration_us <= 0:
            raise ValueError("duration must be > 0")
        if self.bytes_limit is not None and self.bytes_limit < 1:
            raise ValueError("bytes must be >= 1")
        if self.pattern == "onoff":
            if self.on_us is None or self.off_us is None:
                raise ValueError("--pattern onoff needs --on and --off")
            if self.on_us <= 0:
                raise ValueError("--on must be > 0")
        elif self.on_us is not None or self.off_us is not None:
            raise ValueError("--on and --off go with --pattern onoff only")
        if self.pattern == "stream":
            if self.rate is None:
                raise ValueError("--pattern stream needs --rate")
        elif self.rate is not None:
            raise ValueError("--rate goes with --pattern stream only")
        if self.rate is not None and self.rate < 1:
            raise ValueError("rate must be >= 1 B/s")
        if self.sample_interval_us < MIN_SAMPLE_INTERVAL_US:
            raise ValueError(f"sample interval must be >= {MIN_SAMPLE_INTERVAL_US // 1000} ms")
        if not 0 <= self.flow_id < 1 << 32:
            raise ValueError("flow_id must fit 32 bits")

    @property
    def stream_write(self) -> int | None:
        if self.rate is None:
            return None
        return max(STREAM_WRITE_MIN, min(STREAM_WRITE_MAX, self.rate * STREAM_TICK_US // US_PER_S))


class TcpSchedule:
    """When the application may write how much. The driver asks
    ``next_write(now)`` and calls ``on_written`` with what the socket took,
    and sleeps until ``wake_at(now)`` when nothing is to be written (or the
    socket is full)."""

    def __init__(self, config: TcpSendConfig, now_us: int) -> None:
        self.config = config
        self.start_us = now_us
        self.end_us = None if config.duration_us is None else now_us + config.duration_us
        self.written = 0

    def _remaining(self) -> int | None:
        limit = self.config.bytes_limit
        return None if limit is None else limit - self.written

    def finished(self, now_us: int) -> bool:
        """Nothing more will be written (duration over or byte count reached)."""
        return (self.end_us is not None and now_us >= self.end_us) or self._remaining() == 0

    def _on(self, now_us: int) -> bool:
        cfg = self.config
        if cfg.on_us is None or cfg.off_us is None:
            return True
        return (now_us - self.start_us) % (cfg.on_us + cfg.off_us) < cfg.on_us

    def _stream_threshold(self) -> int:
        write = self.config.stream_write
        assert write is not None
        remaining = self._remaining()
        return write if remaining is None else min(write, remaining)

    def next_write(self, now_us: int) -> int:
        """Bytes to hand to the next send() now (0: none now)."""
        if self.finished(now_us) or not self._on(now_us):
            return 0
        remaining = self._remaining()
        if self.config.pattern == "stream":
            assert self.config.rate is not None
            due = (now_us - self.start_us) * self.config.rate // US_PER_S - self.written
            threshold = self._stream_threshold()
            return threshold if due >= threshold else 0
        return BULK_WRITE if remaining is None else min(BULK_WRITE, remaining)

    def on_written(self, n: int) -> None:
        remaining = self._remaining()
        if n < 0 or (remaining is not None and n > remaining):
            raise ValueError(f"written {n} bytes, more than allowed")
        self.written += n

    def wake_at(self, now_us: int) -> int | None:
        """The next time after now when what next_write() says can change
        (None: never; finished, or bulk without a duration)."""
        if self.finished(now_us):
            return None
        cfg = self.config
        at: int | None = None
        if cfg.pattern == "onoff":
            assert cfg.on_us is not None and cfg.off_us is not None
            phase = (now_us - self.start_us) % (cfg.on_us + cfg.off_us)
            at = now_us - phase + (cfg.on_us if phase < cfg.on_us else cfg.on_us + cfg.off_us)
        elif cfg.pattern == "stream" and self.next_write(now_us) == 0:
            assert cfg.rate is not None
            at = self.start_us + ceil_div(
                (self.written + self._stream_threshold()) * US_PER_S, cfg.rate
            )
        if self.end_us is not None and (at is None or at > self.end_us):
            at = self.end_us
        return at


def sample_record(t_us: int, info: TcpInfo, written: int) -> dict[str, object]:
    """One entry of a sender's `samples`: t_s since the connection was
    established, the kernel's view of the connection, and the bytes the
    application had written by then."""
    return {
        "t_s": t_us / US_PER_S,
        "state": info.state_name,
        "ca_state": info.ca_state_name,
        "rtt_us": info.rtt_us,
        "rttvar_us": info.rttvar_us,
        "min_rtt_us": info.min_rtt_us,
        "snd_cwnd": info.snd_cwnd,
        "snd_ssthresh": info.snd_ssthresh,
        "unacked": info.unacked,
        "retrans": info.retrans,
        "lost": info.lost,
        "total_retrans": info.total_retrans,
        "bytes_acked": acked_data(info, written),
        "bytes_sent": info.bytes_sent,
        "notsent_bytes": info.notsent_bytes,
        "delivery_rate": info.delivery_rate,
        "pacing_rate": info.pacing_rate,
        "written": written,
    }


def acked_data(info: TcpInfo, written: int) -> int | None:
    """Data bytes acknowledged: tcpi_bytes_acked counts the SYN and the FIN
    as one byte each."""
    if info.bytes_acked is None:
        return None
    return max(0, min(written, info.bytes_acked - 1))


class TcpSendRecorder:
    """TCP_INFO samples on a regular grid from the start (a late sample does
    not shift the grid; missed grid points are skipped), plus extra ones."""

    def __init__(self, start_us: int, interval_us: int) -> None:
        self.start_us = start_us
        self.interval_us = interval_us
        self.next_at = start_us
        self.samples: list[dict[str, object]] = []

    def record(self, now_us: int, info: TcpInfo, written: int) -> None:
        self.samples.append(sample_record(now_us - self.start_us, info, written))
        if now_us >= self.next_at:
            periods = (now_us - self.start_us) // self.interval_us + 1
            self.next_at = self.start_us + periods * self.interval_us

    def stats(self) -> dict[str, object]:
        """retransmissions and bytes_acked from the last sample; RTT statistics
        over the samples' smoothed RTT (those with a measurement); ssthresh
        changes between consecutive samples (None -> a value counts: the
        first reduction)."""
        rtts = [s["rtt_us"] for s in self.samples if isinstance(s["rtt_us"], int) and s["rtt_us"]]
        last = self.samples[-1] if self.samples else {}
        ssthresh = [s["snd_ssthresh"] for s in self.samples]
        return {
            "retransmissions": last.get("total_retrans"),
            "bytes_acked": last.get("bytes_acked"),
            "ssthresh_changes": sum(1 for a, b in itertools.pairwise(ssthresh) if a != b),
            "rtt_min_us": min(rtts) if rtts else None,
            "rtt_mean_us": sum(rtts) // len(rtts) if rtts else None,
            "rtt_max_us": max(rtts) if rtts else None,
        }


@dataclass
class TcpConnStats:
    peer: str  # "IP:PORT" of the sender's socket
    accepted_us: int
    bytes_received: int = 0
    first_us: int | None = None
    last_us: int | None = None
    closed_us: int | None = None
    end: str | None = None  # "fin", "reset", or None while open
    per_second: list[tuple[int, int]] = field(default_factory=list)  # (second, bytes)


class TcpSinkStats:
    """What a sink counts per accepted connection (keyed by the driver's id)."""

    def __init__(self, now_us: int) -> None:
        self.start_us = now_us
        self.conns: dict[int, TcpConnStats] = {}

    @property
    def open(self) -> int:
        return sum(1 for c in self.conns.values() if c.end is None)

    def on_accept(self, now_us: int, conn: int, peer: str) -> None:
        if conn in self.conns:
            raise ValueError(f"connection {conn} accepted twice")
        self.conns[conn] = TcpConnStats(peer, now_us)

    def on_data(self, now_us: int, conn: int, n: int) -> None:
        stats = self.conns[conn]
        stats.bytes_received += n
        if stats.first_us is None:
            stats.first_us = now_us
        stats.last_us = now_us
        second = (now_us - self.start_us) // US_PER_S
        if stats.per_second and stats.per_second[-1][0] == second:
            stats.per_second[-1] = (second, stats.per_second[-1][1] + n)
        else:
            stats.per_second.append((second, n))

    def on_close(self, now_us: int, conn: int, end: str) -> None:
        stats = self.conns[conn]
        if stats.end is None:
            stats.closed_us, stats.end = now_us, end

    def summary(self) -> list[dict[str, object]]:
        def rel(t: int | None) -> float | None:
            return None if t is None else (t - self.start_us) / US_PER_S

        out: list[dict[str, object]] = []
        for c in self.conns.values():
            span = (c.last_us or 0) - (c.first_us or 0)
            out.append(
                {
                    "role": "tcp-sink",
                    "src": c.peer,
                    "bytes_received": c.bytes_received,
                    "accepted_s": rel(c.accepted_us),
                    "first_byte_s": rel(c.first_us),
                    "last_byte_s": rel(c.last_us),
                    "closed_s": rel(c.closed_us),
                    "end": c.end,
                    "goodput_bps": c.bytes_received * 8 * US_PER_S // span if span > 0 else None,
                    "bytes_per_second": [{"t_s": t, "bytes": b} for t, b in c.per_second],
                }
            )
        return out
