"""The TRUMP-style RBCC receiver as a sans-IO state machine (RBCC.md "Hosts").

Every data packet (and SYN, FIN) is answered by one ACK that copies the
packet's ``rate`` into ``return_rate`` and its ``bottle_node`` into
``return_bottle_node``. The ACK's own ``rate`` is 0xFFFFFFFF and its
``current_rate`` 0, as the reference model's hosts do (docs/ROUTER_MODEL.md,
RBCC section): routers on the way back then record the ACK flow as a limited
flow at 0 B/s, taking nothing from data flows. The header is built by the
model's ``hosts.ack_for``.

The receiver delivers data in order (out-of-order segments wait in a buffer),
reports missing segments in every ACK (wire.py), and counts losses exactly
from the transmission numbers: ``lost`` = data transmissions the sender made
(the highest pn seen + 1, or the count the FIN carries) minus those that
arrived. ``RbccListener`` demultiplexes flows by (source address, flow id).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum

from ratelab_model.hosts import ack_for
from ratelab_model.packet import FLAG_ACK, FLAG_FIN, FLAG_SYN, RbccHeader

from ratelab_hosts.wire import (
    IPV4_HEADER_LEN,
    MAX_RANGES,
    NEXT_PROTO_TRUMP,
    RbccPacket,
    TrumpHeader,
)

SECOND_US = 1_000_000


class ReceiverState(Enum):
    LISTEN = "listen"
    ESTABLISHED = "established"
    CLOSED = "closed"  # FIN received (FIN retransmissions are still answered)


@dataclass
class EchoSample:
    t_us: int  # since the SYN arrived
    rate: int  # the rate field the network left in the data packet
    bottle_node: int


@dataclass
class ReceiverMetrics:
    packets_received: int = 0  # data transmissions that arrived, duplicates included
    bytes_received: int = 0  # IPv4 bytes of those
    duplicates: int = 0  # data packets for segments already held
    segments_delivered: int = 0
    bytes_delivered: int = 0  # payload bytes delivered in order
    acks_sent: int = 0
    max_pn: int = -1
    fin_pn: int | None = None  # data transmissions the sender made, from its FIN
    fin_seq: int | None = None
    first_data_us: int | None = None
    last_delivery_us: int | None = None
    rates: list[EchoSample] = field(default_factory=list)


class RbccReceiver:
    """One connection. Feed it the datagrams of one flow (flow_id)."""

    def __init__(self, flow_id: int) -> None:
        self.flow_id = flow_id
        self.state = ReceiverState.LISTEN
        self.metrics = ReceiverMetrics()
        self._start_us: int | None = None
        self._cum = 0  # next in-order segment
        self._buffer: dict[int, bytes] = {}  # out-of-order segments above _cum
        self._delivered: list[tuple[int, bytes]] = []

    @property
    def lost(self) -> int:
        """Data transmissions lost on the way (exact on a path that does not
        duplicate packets)."""
        m = self.metrics
        made = max(m.max_pn + 1, m.fin_pn or 0)
        return max(0, made - m.packets_received)

    @property
    def complete(self) -> bool:
        """FIN seen and every segment before it delivered."""
        return self.metrics.fin_seq is not None and self._cum >= self.metrics.fin_seq

    def poll_at(self) -> int | None:
        return None  # the receiver only ever answers

    def on_timer(self, now_us: int) -> list[bytes]:
        return []

    def take_delivered(self) -> list[tuple[int, bytes]]:
        """In-order (segment, payload) pairs delivered since the last call."""
        out, self._delivered = self._delivered, []
        return out

    def on_datagram(self, now_us: int, data: bytes) -> list[bytes]:
        """An RBCC datagram (IPv4 payload) from the sender; returns the ACK to send."""
        try:
            packet = RbccPacket.decode(data)
        except ValueError:
            return []
        rbcc, trump = packet.rbcc, packet.trump
        if rbcc.flags & FLAG_ACK or trump.flow_id != self.flow_id:
            return []
        if rbcc.flags & FLAG_SYN:
            if self.state is ReceiverState.LISTEN:
                self.state = ReceiverState.ESTABLISHED
                self._start_us = now_us
            return [self._ack(rbcc, trump, FLAG_SYN | FLAG_ACK)]
        if self.state is ReceiverState.LISTEN:
            return []  # no connection: the sender only sends data after our SYN-ACK
        if rbcc.flags & FLAG_FIN:
            self.metrics.fin_pn = trump.pn
            self.metrics.fin_seq = trump.seq
            self.state = ReceiverState.CLOSED
            return [self._ack(rbcc, trump, FLAG_FIN | FLAG_ACK)]
        if self.state is ReceiverState.CLOSED:
            return []
        self._on_data(now_us, packet, len(data))
        return [self._ack(rbcc, trump, FLAG_ACK)]

    def _on_data(self, now_us: int, packet: RbccPacket, length: int) -> None:
        m = self.metrics
        trump = packet.trump
        m.packets_received += 1
        m.bytes_received += IPV4_HEADER_LEN + length
        m.max_pn = max(m.max_pn, trump.pn)
        if m.first_data_us is None:
            m.first_data_us = now_us
        self._record_rate(now_us, packet.rbcc.rate, packet.rbcc.bottle_node)
        seq = trump.seq
        if seq < self._cum or seq in self._buffer:
            m.duplicates += 1
            return
        self._buffer[seq] = packet.payload
        while self._cum in self._buffer:
            payload = self._buffer.pop(self._cum)
            self._delivered.append((self._cum, payload))
            m.segments_delivered += 1
            m.bytes_delivered += len(payload)
            m.last_delivery_us = now_us
            self._cum += 1

    def _record_rate(self, now_us: int, rate: int, bottle_node: int) -> None:
        rates = self.metrics.rates
        if rates and (rates[-1].rate, rates[-1].bottle_node) == (rate, bottle_node):
            return
        assert self._start_us is not None
        rates.append(EchoSample(now_us - self._start_us, rate, bottle_node))

    def missing(self) -> tuple[int, tuple[tuple[int, int], ...]]:
        """(high, ranges): the gaps below the highest segment held, at most
        MAX_RANGES of them, and where that report ends."""
        if not self._buffer:
            return self._cum, ()
        ranges: list[tuple[int, int]] = []
        start = self._cum
        for seq in sorted(self._buffer):
            if seq > start:
                if len(ranges) == MAX_RANGES:
                    return ranges[-1][1], tuple(ranges)
                ranges.append((start, seq))
            start = seq + 1
        return start, tuple(ranges)

    def _ack(self, rbcc_in: RbccHeader, trump_in: TrumpHeader, flags: int) -> bytes:
        high, ranges = self.missing()
        rbcc = replace(ack_for(rbcc_in, NEXT_PROTO_TRUMP), flags=flags)
        trump = TrumpHeader(
            self.flow_id,
            seq=trump_in.seq,
            pn=trump_in.pn,
            ts=trump_in.ts,
            cum_ack=self._cum,
            high=high,
            ranges=ranges,
        )
        self.metrics.acks_sent += 1
        return RbccPacket(rbcc, trump).encode()

    def summary(self) -> dict[str, object]:
        m = self.metrics
        goodput = None
        if m.first_data_us is not None and m.last_delivery_us is not None:
            elapsed = m.last_delivery_us - m.first_data_us
            if elapsed > 0:
                goodput = m.bytes_delivered * 8 * SECOND_US // elapsed
        return {
            "role": "rbcc-recv",
            "flow_id": self.flow_id,
            "state": self.state.value,
            "complete": self.complete,
            "packets_received": m.packets_received,
            "bytes_received": m.bytes_received,
            "duplicates": m.duplicates,
            "lost": self.lost,
            "segments_delivered": m.segments_delivered,
            "bytes_delivered": m.bytes_delivered,
            "acks_sent": m.acks_sent,
            "sender_packets": m.fin_pn,
            "goodput_bps": goodput,
            "rates": [
                {"t_s": s.t_us / SECOND_US, "rate": s.rate, "bottle_node": s.bottle_node}
                for s in m.rates
            ],
        }


class RbccListener:
    """Accepts connections: one RbccReceiver per (source address, flow id),
    created by a SYN. Addresses are opaque to it (the driver's strings)."""

    def __init__(self) -> None:
        self.flows: dict[tuple[str, int], RbccReceiver] = {}

    def on_datagram(self, now_us: int, src: str, data: bytes) -> list[bytes]:
        try:
            packet = RbccPacket.decode(data)
        except ValueError:
            return []
        key = (src, packet.trump.flow_id)
        receiver = self.flows.get(key)
        if receiver is None:
            if not packet.rbcc.flags & FLAG_SYN or packet.rbcc.flags & FLAG_ACK:
                return []
            receiver = self.flows[key] = RbccReceiver(packet.trump.flow_id)
        return receiver.on_datagram(now_us, data)

    def take_delivered(self) -> list[tuple[int, bytes]]:
        out: list[tuple[int, bytes]] = []
        for receiver in self.flows.values():
            out.extend(receiver.take_delivered())
        return out
