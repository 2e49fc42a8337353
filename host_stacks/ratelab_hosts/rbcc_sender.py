"""The TRUMP-style RBCC sender as a sans-IO state machine (RBCC.md "Hosts").

Rate control (RBCC.md "Hosts"): the sender paces data packets at
``r = min(desired_rate, last return_rate)`` and writes ``current_rate = r``,
``rate = desired_rate``, ``bottle_node = 0`` and the last ``return_rate`` /
``return_bottle_node`` it received (0xFFFFFFFF / 0 before the first ACK) into
every data packet. Before the first ACK it paces at ``initial_rate``.

Connection setup: a SYN every ``syn_interval_us`` (1 s), giving up after
``give_up_us`` (30 s) without a SYN-ACK. Whether the SYN-ACK counts as "the
first ACK" (its echoed rate is adopted) is ``adopt_synack_rate``; by default it
does not: the SYN-ACK only opens the connection, data starts at the initial
rate and the first data ACK sets the rate.

Loss recovery (selective retransmission, kept apart from rate control: a
loss never changes r, retransmissions just take pacing slots before new data):

- An ACK lists the segments still missing below ``high`` (wire.py). A missing
  segment is retransmitted when the ACK was caused by a transmission made
  after that segment's last one (the ACK's ``pn`` is larger): on an in-order
  path that last transmission is lost. Reordering only causes spurious
  retransmissions.
- Tail losses and lost ACKs: a retransmission timeout (RFC 6298 estimator,
  200 ms minimum as in Linux, doubling on each expiry) re-sends every
  unacknowledged segment last sent at least one RTO ago.
- No ACK at all for ``give_up_us`` while data is outstanding fails the
  connection.

When the application's data is done (``segments`` sent, or ``duration_us``
after setup) and everything is acknowledged, the sender sends FIN, repeated
every ``syn_interval_us`` until FIN-ACK, for at most ``give_up_us``.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from enum import Enum

from ratelab_model.packet import FLAG_ACK, FLAG_FIN, FLAG_SYN, RATE_UNLIMITED, RbccHeader

from ratelab_hosts.pacing import Pacer
from ratelab_hosts.wire import (
    NEXT_PROTO_TRUMP,
    RBCC_OVERHEAD,
    RbccPacket,
    TrumpHeader,
)

SECOND_US = 1_000_000
MIN_RTO_US = 200_000
MAX_RTO_US = 60 * SECOND_US
INITIAL_RTO_US = SECOND_US  # RFC 6298 2.1


class SenderState(Enum):
    SYN_SENT = "syn_sent"
    ESTABLISHED = "established"
    FIN_SENT = "fin_sent"
    CLOSED = "closed"
    FAILED = "failed"


@dataclass(frozen=True)
class SenderConfig:
    desired_rate: int  # B/s; 0xFFFFFFFF = no limit of its own
    initial_rate: int  # B/s, paces data before the first ACK
    size: int = 1000  # IPv4 total length of each data packet, bytes
    segments: int | None = None  # data packets to send (None: no count limit)
    duration_us: int | None = None  # send new data this long after setup (None: no limit)
    flow_id: int = 1
    adopt_synack_rate: bool = False
    syn_interval_us: int = SECOND_US
    give_up_us: int = 30 * SECOND_US
    max_lateness_us: int = 1_000  # see Pacer.on_send

    def __post_init__(self) -> None:
        if not 1 <= self.desired_rate <= RATE_UNLIMITED:
            raise ValueError("desired_rate must be 1..0xFFFFFFFF B/s")
        if not 1 <= self.initial_rate < RATE_UNLIMITED:
            raise ValueError("initial_rate must be 1..0xFFFFFFFE B/s")
        if not RBCC_OVERHEAD <= self.size <= 65535:
            raise ValueError(f"size must be {RBCC_OVERHEAD}..65535 bytes (IPv4 total length)")
        if self.segments is None and self.duration_us is None:
            raise ValueError("give segments or duration_us (or both)")
        if self.segments is not None and self.segments < 0:
            raise ValueError("segments must be >= 0")
        if self.duration_us is not None and self.duration_us < 0:
            raise ValueError("duration_us must be >= 0")
        if not 0 <= self.flow_id <= 0xFFFF:
            raise ValueError("flow_id must fit 16 bits")

    @property
    def payload_len(self) -> int:
        return self.size - RBCC_OVERHEAD


@dataclass
class RateSample:
    t_us: int  # since the sender started
    rate: int  # r, the rate paced at from now on
    return_rate: int
    return_bottle_node: int


@dataclass
class SenderMetrics:
    syn_sent: int = 0
    fin_sent: int = 0
    data_packets_sent: int = 0  # every data transmission, retransmissions included
    data_bytes_sent: int = 0  # IPv4 bytes of those
    retransmissions: int = 0
    rto_expiries: int = 0
    acks_received: int = 0
    segments_acked: int = 0
    srtt_us: int | None = None
    established_us: int | None = None  # since the sender started
    last_ack_us: int | None = None  # since the sender started
    fin_acked: bool = False
    first_data_us: int | None = None  # since the sender started
    last_data_us: int | None = None
    rates: list[RateSample] = field(default_factory=list)


@dataclass
class _Segment:
    pn: int  # transmission number of its last transmission
    sent_us: int
    queued: bool = False  # waiting in the retransmission queue


def _payload_for(seq: int, length: int) -> bytes:
    """Deterministic content, so a receiver (or a test) can check it."""
    return bytes([seq & 0xFF]) * length


class RbccSender:
    def __init__(self, config: SenderConfig, now_us: int) -> None:
        self.config = config
        self.state = SenderState.SYN_SENT
        self.error: str | None = None
        self.metrics = SenderMetrics()
        self._start_us = now_us
        self._now_us = now_us
        self._syn_next_us = now_us
        self._fin_first_us = 0
        self._fin_next_us = 0
        self._data_end_us: int | None = None
        self._last_heard_us = now_us  # last ACK of any kind
        # rate control (RBCC.md "Hosts")
        self.return_rate = RATE_UNLIMITED
        self.return_bottle_node = 0
        self._acked = False
        self._pacer = Pacer(config.initial_rate, config.max_lateness_us)
        # loss recovery
        self._next_seq = 0
        self._next_pn = 0
        self._cum_ack = 0
        self._unacked: dict[int, _Segment] = {}
        self._retx: list[int] = []  # heap of queued segment numbers (may hold stale ones)
        self._retx_pending = 0  # unacknowledged segments marked queued
        self._srtt: int | None = None
        self._rttvar = 0
        self._rto = INITIAL_RTO_US
        self._rto_deadline: int | None = None
        self._record_rate(now_us)

    # ------------------------------------------------------------ rate
    @property
    def rate(self) -> int:
        """r: what the sender paces at now."""
        if not self._acked:
            return self.config.initial_rate
        return max(1, min(self.config.desired_rate, self.return_rate))

    def _record_rate(self, now_us: int) -> None:
        rates = self.metrics.rates
        sample = RateSample(
            now_us - self._start_us, self.rate, self.return_rate, self.return_bottle_node
        )
        last = rates[-1] if rates else None
        if last is None or (last.rate, last.return_rate, last.return_bottle_node) != (
            sample.rate,
            sample.return_rate,
            sample.return_bottle_node,
        ):
            rates.append(sample)

    def _header(self, flags: int) -> RbccHeader:
        return RbccHeader(
            flags=flags,
            next_proto=NEXT_PROTO_TRUMP,
            rate=self.config.desired_rate,
            bottle_node=0,
            return_rate=self.return_rate,
            return_bottle_node=self.return_bottle_node,
            current_rate=self.rate,
        )

    # ------------------------------------------------------------ the sans-IO interface
    @property
    def done(self) -> bool:
        return self.state in (SenderState.CLOSED, SenderState.FAILED)

    def poll_at(self) -> int | None:
        """When on_timer must next be called (None: never, the sender is done)."""
        state = self.state
        if state is SenderState.SYN_SENT:
            return self._syn_next_us
        if state is SenderState.FIN_SENT:
            return self._fin_next_us
        if state is not SenderState.ESTABLISHED:
            return None
        times: list[int] = []
        if self._has_data(self._now_us):
            due = self._pacer.next_at()
            times.append(self._now_us if due is None else due)
        elif not self._unacked:
            return self._now_us  # all data acknowledged: FIN is due
        if self._unacked:
            assert self._rto_deadline is not None
            times.append(self._rto_deadline)
            times.append(self._last_heard_us + self.config.give_up_us)
        return min(times)

    def on_timer(self, now_us: int) -> list[bytes]:
        """Timers and pacing: returns the datagrams (IPv4 payloads) to send now."""
        self._advance(now_us)
        state = self.state
        if state is SenderState.SYN_SENT:
            return self._syn_timer(now_us)
        if state is SenderState.FIN_SENT:
            return self._fin_timer(now_us)
        if state is SenderState.ESTABLISHED:
            return self._established_timer(now_us)
        return []

    def on_datagram(self, now_us: int, data: bytes) -> list[bytes]:
        """An RBCC datagram from the receiver (IPv4 payload). Anything that is not
        an ACK of this flow is ignored. Returns datagrams to send (always none:
        sending happens in on_timer, at once if poll_at() says so)."""
        self._advance(now_us)
        try:
            packet = RbccPacket.decode(data)
        except ValueError:
            return []
        rbcc, trump = packet.rbcc, packet.trump
        if not rbcc.flags & FLAG_ACK or trump.flow_id != self.config.flow_id:
            return []
        self.metrics.acks_received += 1
        self._last_heard_us = now_us
        self.metrics.last_ack_us = now_us - self._start_us
        if rbcc.flags & FLAG_SYN:
            if self.state is SenderState.SYN_SENT:
                self._rtt_sample(now_us, trump.ts)
                if self.config.adopt_synack_rate:
                    self._adopt_rate(now_us, rbcc)
                self._established(now_us)
            return []
        if self.state not in (SenderState.ESTABLISHED, SenderState.FIN_SENT):
            return []
        self._rtt_sample(now_us, trump.ts)
        if rbcc.flags & FLAG_FIN:
            if self.state is SenderState.FIN_SENT:
                self.metrics.fin_acked = True
                self.state = SenderState.CLOSED
            return []
        self._adopt_rate(now_us, rbcc)
        self._process_ack(now_us, trump)
        return []

    # ------------------------------------------------------------ connection setup and teardown
    def _advance(self, now_us: int) -> None:
        if now_us < self._now_us:
            raise ValueError(f"time went backwards: {now_us} us after {self._now_us} us")
        self._now_us = now_us

    def _syn_timer(self, now_us: int) -> list[bytes]:
        if now_us < self._syn_next_us:
            return []
        if now_us - self._start_us >= self.config.give_up_us:
            self._fail(f"no SYN-ACK after {self.config.give_up_us / SECOND_US:g} s, giving up")
            return []
        self._syn_next_us = _next_tick(self._syn_next_us, now_us, self.config.syn_interval_us)
        self.metrics.syn_sent += 1
        trump = TrumpHeader(self.config.flow_id, ts=now_us)
        return [RbccPacket(self._header(FLAG_SYN), trump).encode()]

    def _established(self, now_us: int) -> None:
        self.state = SenderState.ESTABLISHED
        self.metrics.established_us = now_us - self._start_us
        if self.config.duration_us is not None:
            self._data_end_us = now_us + self.config.duration_us

    def _fin_packet(self, now_us: int) -> bytes:
        self.metrics.fin_sent += 1
        trump = TrumpHeader(self.config.flow_id, seq=self._next_seq, pn=self._next_pn, ts=now_us)
        return RbccPacket(self._header(FLAG_FIN), trump).encode()

    def _fin_timer(self, now_us: int) -> list[bytes]:
        if now_us < self._fin_next_us:
            return []
        if now_us - self._fin_first_us >= self.config.give_up_us:
            # All data was acknowledged; only the FIN-ACK is missing.
            self.state = SenderState.CLOSED
            return []
        self._fin_next_us = _next_tick(self._fin_next_us, now_us, self.config.syn_interval_us)
        return [self._fin_packet(now_us)]

    def _fail(self, message: str) -> None:
        self.state = SenderState.FAILED
        self.error = message

    # ------------------------------------------------------------ data
    def _app_done(self, now_us: int) -> bool:
        """No new segment will ever be offered."""
        limit = self.config.segments
        if limit is not None and self._next_seq >= limit:
            return True
        return self._data_end_us is not None and now_us >= self._data_end_us

    def _has_data(self, now_us: int) -> bool:
        return self._retx_pending > 0 or not self._app_done(now_us)

    def _established_timer(self, now_us: int) -> list[bytes]:
        out: list[bytes] = []
        if self._unacked:
            if now_us - self._last_heard_us >= self.config.give_up_us:
                self._fail(f"no ACK for {self.config.give_up_us / SECOND_US:g} s, giving up")
                return out
            assert self._rto_deadline is not None
            if now_us >= self._rto_deadline:
                self._on_rto(now_us)
        while self._has_data(now_us) and self._pacer.ready(now_us):
            out.append(self._send_segment(now_us))
        if not self._has_data(now_us) and not self._unacked:
            self.state = SenderState.FIN_SENT
            self._fin_first_us = now_us
            self._fin_next_us = now_us + self.config.syn_interval_us
            out.append(self._fin_packet(now_us))
        return out

    def _send_segment(self, now_us: int) -> bytes:
        seq = None
        while self._retx_pending:
            candidate = heapq.heappop(self._retx)
            segment = self._unacked.get(candidate)
            if segment is not None and segment.queued:
                segment.queued = False
                self._retx_pending -= 1
                seq = candidate
                self.metrics.retransmissions += 1
                break
        if seq is None:
            assert not self._app_done(now_us)
            seq = self._next_seq
            self._next_seq += 1
        pn = self._next_pn
        self._next_pn += 1
        self._unacked[seq] = _Segment(pn, now_us)
        if self._rto_deadline is None:
            self._rto_deadline = now_us + self._rto
        size = self.config.size
        self._pacer.on_send(now_us, size)
        self.metrics.data_packets_sent += 1
        if self.metrics.first_data_us is None:
            self.metrics.first_data_us = now_us - self._start_us
        self.metrics.last_data_us = now_us - self._start_us
        self.metrics.data_bytes_sent += size
        trump = TrumpHeader(self.config.flow_id, seq=seq, pn=pn, ts=now_us)
        payload = _payload_for(seq, self.config.payload_len)
        return RbccPacket(self._header(0), trump, payload).encode()

    def _queue_retx(self, seq: int, segment: _Segment) -> None:
        if not segment.queued:
            segment.queued = True
            self._retx_pending += 1
            heapq.heappush(self._retx, seq)

    def _on_rto(self, now_us: int) -> None:
        self.metrics.rto_expiries += 1
        for seq, segment in self._unacked.items():
            if now_us - segment.sent_us >= self._rto:
                self._queue_retx(seq, segment)
        self._rto = min(self._rto * 2, MAX_RTO_US)
        self._rto_deadline = now_us + self._rto

    # ------------------------------------------------------------ ACK processing
    def _adopt_rate(self, now_us: int, ack: RbccHeader) -> None:
        self.return_rate = ack.return_rate
        self.return_bottle_node = ack.return_bottle_node
        self._acked = True
        self._pacer.set_rate(self.rate)
        self._record_rate(now_us)

    def _rtt_sample(self, now_us: int, ts: int) -> None:
        """RFC 6298 section 2 from the echoed send time (no Karn problem: the
        echo names the transmission)."""
        rtt = (now_us - ts) & 0xFFFFFFFF
        if self._srtt is None:
            self._srtt, self._rttvar = rtt, rtt // 2
        else:
            self._rttvar = (3 * self._rttvar + abs(self._srtt - rtt)) // 4
            self._srtt = (7 * self._srtt + rtt) // 8
        self._rto = min(max(self._srtt + 4 * self._rttvar, MIN_RTO_US), MAX_RTO_US)
        self.metrics.srtt_us = self._srtt

    def _process_ack(self, now_us: int, ack: TrumpHeader) -> None:
        before = len(self._unacked)
        # _unacked iterates in ascending segment order: segments enter it in
        # order when first sent, and a retransmission keeps the key's place.
        limit = max(ack.cum_ack, ack.high)
        received = []
        for seq, segment in self._unacked.items():
            if seq >= limit:
                break  # not covered by this ACK (still in flight, or lost at the tail)
            if seq >= ack.cum_ack and _in_ranges(seq, ack.ranges):
                if segment.pn < ack.pn:
                    self._queue_retx(seq, segment)
            else:
                received.append(seq)
        for seq in received:
            if self._unacked.pop(seq).queued:
                self._retx_pending -= 1  # acknowledged after all: no resend
        if not self._retx_pending:
            self._retx.clear()
        self._cum_ack = max(self._cum_ack, ack.cum_ack)
        acked = before - len(self._unacked)
        self.metrics.segments_acked += acked
        if acked:
            # progress: restart the retransmission timer (RFC 6298 5.3)
            self._rto_deadline = now_us + self._rto if self._unacked else None
        elif not self._unacked:
            self._rto_deadline = None

    # ------------------------------------------------------------ results
    def summary(self) -> dict[str, object]:
        m = self.metrics
        payload = self.config.payload_len
        goodput = None
        if m.established_us is not None and m.last_ack_us is not None:
            elapsed = m.last_ack_us - m.established_us
            if elapsed > 0:
                goodput = m.segments_acked * payload * 8 * SECOND_US // elapsed
        return {
            "role": "rbcc-send",
            "flow_id": self.config.flow_id,
            "state": self.state.value,
            "error": self.error,
            "desired_rate": self.config.desired_rate,
            "initial_rate": self.config.initial_rate,
            "size": self.config.size,
            "syn_sent": m.syn_sent,
            "fin_sent": m.fin_sent,
            "fin_acked": m.fin_acked,
            "packets_sent": m.data_packets_sent,
            "bytes_sent": m.data_bytes_sent,
            "segments": self._next_seq,
            "segments_acked": m.segments_acked,
            "retransmissions": m.retransmissions,
            "rto_expiries": m.rto_expiries,
            "acks_received": m.acks_received,
            "srtt_us": m.srtt_us,
            "established_s": None if m.established_us is None else m.established_us / SECOND_US,
            "goodput_bps": goodput,
            "send_span_s": None
            if m.first_data_us is None or m.last_data_us is None
            else (m.last_data_us - m.first_data_us) / SECOND_US,
            "pacing_restarts": self._pacer.restarts,
            "pacing_lost_s": self._pacer.lost_us / SECOND_US,
            "rate": self.rate,
            "rates": [
                {
                    "t_s": s.t_us / SECOND_US,
                    "rate": s.rate,
                    "return_rate": s.return_rate,
                    "return_bottle_node": s.return_bottle_node,
                }
                for s in m.rates
            ],
        }


def _next_tick(tick_us: int, now_us: int, interval_us: int) -> int:
    """The next time on a periodic grid after now (a late caller skips ticks)."""
    tick_us += interval_us
    if tick_us <= now_us:
        tick_us += ((now_us - tick_us) // interval_us + 1) * interval_us
    return tick_us


def _in_ranges(seq: int, ranges: tuple[tuple[int, int], ...]) -> bool:
    return any(start <= seq < end for start, end in ranges)
