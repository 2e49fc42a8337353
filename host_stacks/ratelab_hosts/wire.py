"""Wire formats of the host stack: the TRUMP transport header that follows the
RBCC header, and the UDP probe payload. The RBCC header itself is the reference
model's codec (ratelab_model.packet.RbccHeader), not a second one.

TRUMP transport header (RBCC ``next_proto`` = 254, RFC 3692's second
experimental protocol number; all fields big-endian, 24 bytes + 8 per range):

| offset | bits | field    | data, SYN, FIN                 | ACK (flag 0x2 set)                |
|--------|------|----------|--------------------------------|-----------------------------------|
| 0      | 16   | flow_id  | chosen by the sender           | copied                            |
| 2      | 8    | n_ranges | 0                              | missing ranges that follow        |
| 3      | 8    | reserved | 0                              | 0                                 |
| 4      | 32   | seq      | segment (SYN 0, FIN: segments) | seq of the packet acknowledged    |
| 8      | 32   | pn       | transmission number (below)    | pn of the packet acknowledged     |
| 12     | 32   | ts       | sender clock, us, low 32 bits  | ts of the packet acknowledged     |
| 16     | 32   | cum_ack  | 0                              | all segments below it received   |
| 20     | 32   | high     | 0                              | the report covers [cum_ack, high) |
| 24     | 64 n | ranges   | -                              | (start, end) half-open, ascending |

Segments are numbered 0, 1, 2, ... (one segment per data packet); ``pn``
counts data transmissions (first sends and retransmissions alike), so a
receiver learns exactly how many data transmissions the network lost
(RbccReceiver.lost). SYN carries pn 0; FIN carries the number of data
transmissions made, so losses at the tail are counted too. In an ACK, every
segment in [cum_ack, high) that is not inside a listed range was received;
when more gaps exist than fit, ``high`` is cut at the end of the last range
listed. Numbers do not wrap (2^32 segments per connection).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from ratelab_model.packet import RBCC_HEADER_LEN, RbccHeader

NEXT_PROTO_TRUMP = 254
TRUMP_HEADER_LEN = 24
MAX_RANGES = 16
IPV4_HEADER_LEN = 20
UDP_HEADER_LEN = 8
# An RBCC data packet: IPv4 + RBCC + TRUMP headers, then payload.
RBCC_OVERHEAD = IPV4_HEADER_LEN + RBCC_HEADER_LEN + TRUMP_HEADER_LEN

_TRUMP = struct.Struct("!HBBIIIII")
_RANGE = struct.Struct("!II")


@dataclass(frozen=True)
class TrumpHeader:
    flow_id: int
    seq: int = 0
    pn: int = 0
    ts: int = 0
    cum_ack: int = 0
    high: int = 0
    ranges: tuple[tuple[int, int], ...] = ()

    def encode(self) -> bytes:
        if len(self.ranges) > 255:
            raise ValueError("too many ranges")
        head = _TRUMP.pack(
            self.flow_id,
            len(self.ranges),
            0,
            self.seq,
            self.pn,
            self.ts & 0xFFFFFFFF,
            self.cum_ack,
            self.high,
        )
        return head + b"".join(_RANGE.pack(a, b) for a, b in self.ranges)

    @property
    def length(self) -> int:
        return TRUMP_HEADER_LEN + _RANGE.size * len(self.ranges)

    @staticmethod
    def decode(data: bytes) -> TrumpHeader:
        if len(data) < TRUMP_HEADER_LEN:
            raise ValueError("TRUMP header truncated")
        flow_id, n, _res, seq, pn, ts, cum, high = _TRUMP.unpack_from(data)
        end = TRUMP_HEADER_LEN + _RANGE.size * n
        if len(data) < end:
            raise ValueError("TRUMP ranges truncated")
        ranges = tuple(
            _RANGE.unpack_from(data, TRUMP_HEADER_LEN + _RANGE.size * i) for i in range(n)
        )
        return TrumpHeader(flow_id, seq, pn, ts, cum, high, ranges)


@dataclass(frozen=True)
class RbccPacket:
    """An RBCC datagram as the host sees it: everything after the IPv4 header."""

    rbcc: RbccHeader
    trump: TrumpHeader
    payload: bytes = b""

    def encode(self) -> bytes:
        return self.rbcc.encode() + self.trump.encode() + self.payload

    @staticmethod
    def decode(data: bytes) -> RbccPacket:
        """ValueError if it is not version-1 RBCC carrying a TRUMP header."""
        rbcc = RbccHeader.decode(data)
        if rbcc.version != 1 or rbcc.next_proto != NEXT_PROTO_TRUMP:
            raise ValueError("not an RBCC v1 packet carrying TRUMP")
        trump = TrumpHeader.decode(data[RBCC_HEADER_LEN:])
        return RbccPacket(rbcc, trump, data[RBCC_HEADER_LEN + trump.length :])


# UDP probe payload (ratelab-stack's udp::Probe): flow_id (32), seq (64), send
# time in ns (64), then zeros.
_UDP_PROBE = struct.Struct("!IQQ")
UDP_PROBE_LEN = _UDP_PROBE.size
UDP_OVERHEAD = IPV4_HEADER_LEN + UDP_HEADER_LEN


def udp_probe(flow_id: int, seq: int, sent_ns: int, payload_len: int) -> bytes:
    head = _UDP_PROBE.pack(flow_id, seq, sent_ns)
    return head + bytes(max(0, payload_len - len(head)))


def parse_udp_probe(data: bytes) -> tuple[int, int, int]:
    """(flow_id, seq, sent_ns); ValueError if too short."""
    if len(data) < UDP_PROBE_LEN:
        raise ValueError("UDP probe payload truncated")
    return _UDP_PROBE.unpack_from(data)
