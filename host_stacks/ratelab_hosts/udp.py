"""Sans-IO UDP traffic: constant bit rate and Poisson sources with optional
on-off patterns, and a sink that counts what arrives.

Each datagram carries a probe header (wire.py: flow id, sequence number, send
time). ``size`` is the IPv4 total length, so ``rate`` is the load the source
puts on an IP link (IPv4 + UDP headers included).

Schedules are made in "active time" (time spent in on-periods) and mapped to
real time: active time ``v`` is real time ``start + (v // on) * (on + off) +
v % on``. A CBR source's k-th datagram is at ``v = ceil(k * size * 10^6 /
rate)`` us; a Poisson source draws exponential gaps of mean ``size / rate``
from ``random.Random(seed)``, so a seed fixes the whole sequence. Without
on-off, active time is real time.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

from ratelab_hosts.units import US_PER_S, ceil_div
from ratelab_hosts.wire import UDP_OVERHEAD, UDP_PROBE_LEN, parse_udp_probe, udp_probe


@dataclass(frozen=True)
class UdpSourceConfig:
    rate: int  # B/s of IPv4 datagrams while on
    size: int = 1000  # IPv4 total length
    duration_us: int = US_PER_S
    poisson: bool = False
    seed: int = 1
    on_us: int | None = None  # on-off pattern; both or neither
    off_us: int | None = None
    flow_id: int = 1

    def __post_init__(self) -> None:
        if self.rate < 1:
            raise ValueError("rate must be >= 1 B/s")
        if not UDP_OVERHEAD + UDP_PROBE_LEN <= self.size <= 65535:
            raise ValueError(f"size must be {UDP_OVERHEAD + UDP_PROBE_LEN}..65535 bytes")
        if self.duration_us < 0:
            raise ValueError("duration must be >= 0")
        if (self.on_us is None) != (self.off_us is None):
            raise ValueError("give both on and off, or neither")
        if self.on_us is not None and (self.on_us <= 0 or (self.off_us or 0) < 0):
            raise ValueError("on must be > 0 and off >= 0")
        if not 0 <= self.flow_id < 1 << 32:
            raise ValueError("flow_id must fit 32 bits")


class UdpSource:
    def __init__(self, config: UdpSourceConfig, now_us: int) -> None:
        self.config = config
        self._start_us = now_us
        self._end_us = now_us + config.duration_us
        self._rng = random.Random(config.seed)
        self._k = 0  # datagrams scheduled so far
        self._active_us = 0.0  # Poisson: active time of the next departure
        self.packets_sent = 0
        self.bytes_sent = 0
        self._next_us: int | None = self._real(self._next_active())

    def _next_active(self) -> float:
        cfg = self.config
        if cfg.poisson:
            if self._k > 0:
                self._active_us += self._rng.expovariate(cfg.rate / (cfg.size * US_PER_S))
            return self._active_us
        return ceil_div(self._k * cfg.size * US_PER_S, cfg.rate)

    def _real(self, active_us: float) -> int | None:
        cfg = self.config
        v = math.ceil(active_us)
        if cfg.on_us is not None and cfg.off_us is not None:
            cycles, within = divmod(v, cfg.on_us)
            v = cycles * (cfg.on_us + cfg.off_us) + within
        t = self._start_us + v
        return t if t < self._end_us else None

    @property
    def done(self) -> bool:
        return self._next_us is None

    def poll_at(self) -> int | None:
        return self._next_us

    def on_timer(self, now_us: int) -> list[bytes]:
        """UDP payloads due by now."""
        out: list[bytes] = []
        payload_len = self.config.size - UDP_OVERHEAD
        while self._next_us is not None and self._next_us <= now_us:
            out.append(udp_probe(self.config.flow_id, self._k, now_us, payload_len))
            self.packets_sent += 1
            self.bytes_sent += self.config.size
            self._k += 1
            self._next_us = self._real(self._next_active())
        return out

    def summary(self) -> dict[str, object]:
        cfg = self.config
        return {
            "role": "udp-send",
            "flow_id": cfg.flow_id,
            "rate": cfg.rate,
            "size": cfg.size,
            "poisson": cfg.poisson,
            "seed": cfg.seed if cfg.poisson else None,
            "on_s": None if cfg.on_us is None else cfg.on_us / US_PER_S,
            "off_s": None if cfg.off_us is None else cfg.off_us / US_PER_S,
            "packets_sent": self.packets_sent,
            "bytes_sent": self.bytes_sent,
        }


@dataclass
class UdpFlowStats:
    packets_received: int = 0
    bytes_received: int = 0  # IPv4 bytes
    highest_seq: int = -1
    reordered: int = 0  # arrived with a lower seq than one seen before
    first_us: int | None = None
    last_us: int | None = None
    delay_sum_us: int = 0  # one-way delay, when sender and sink share a clock
    delay_min_us: int | None = None
    delay_max_us: int | None = None
    samples: list[tuple[int, int]] = field(default_factory=list)  # (t_us, bytes) per second

    @property
    def lost(self) -> int:
        """Datagrams missing below the highest seen (the tail cannot be seen)."""
        return max(0, self.highest_seq + 1 - self.packets_received)


class UdpSink:
    """Counts probe datagrams per (source address, flow id)."""

    def __init__(self, now_us: int) -> None:
        self._start_us = now_us
        self.flows: dict[tuple[str, int], UdpFlowStats] = {}
        self.malformed = 0

    def on_datagram(self, now_us: int, src: str, payload: bytes) -> None:
        try:
            flow_id, seq, ts = parse_udp_probe(payload)
        except ValueError:
            self.malformed += 1
            return
        stats = self.flows.setdefault((src, flow_id), UdpFlowStats())
        size = len(payload) + UDP_OVERHEAD
        stats.packets_received += 1
        stats.bytes_received += size
        if seq < stats.highest_seq:
            stats.reordered += 1
        stats.highest_seq = max(stats.highest_seq, seq)
        if stats.first_us is None:
            stats.first_us = now_us
        stats.last_us = now_us
        delay = now_us - ts
        stats.delay_sum_us += delay
        stats.delay_min_us = delay if stats.delay_min_us is None else min(delay, stats.delay_min_us)
        stats.delay_max_us = delay if stats.delay_max_us is None else max(delay, stats.delay_max_us)
        second = (now_us - self._start_us) // US_PER_S
        if stats.samples and stats.samples[-1][0] == second:
            stats.samples[-1] = (second, stats.samples[-1][1] + size)
        else:
            stats.samples.append((second, size))

    def summary(self) -> list[dict[str, object]]:
        out: list[dict[str, object]] = []
        for (src, flow_id), s in self.flows.items():
            elapsed = (s.last_us or 0) - (s.first_us or 0)
            out.append(
                {
                    "role": "udp-sink",
                    "src": src,
                    "flow_id": flow_id,
                    "packets_received": s.packets_received,
                    "bytes_received": s.bytes_received,
                    "lost": s.lost,
                    "highest_seq": s.highest_seq,
                    "reordered": s.reordered,
                    "throughput_bps": s.bytes_received * 8 * US_PER_S // elapsed
                    if elapsed > 0
                    else None,
                    "delay_mean_us": s.delay_sum_us // s.packets_received,
                    "delay_min_us": s.delay_min_us,
                    "delay_max_us": s.delay_max_us,
                    "bytes_per_second": [{"t_s": t, "bytes": b} for t, b in s.samples],
                }
            )
        return out
