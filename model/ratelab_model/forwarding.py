"""IPv4 forwarding: header checks, longest-prefix match, TTL and MAC rewrite.

Checks run in this order and the first failure names the drop cause (the
order a P4 parser plus ingress sees them): not_ipv4, malformed, bad_checksum,
ttl_expired, no_route. See docs/ROUTER_MODEL.md "Forwarding".
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import Enum

from ratelab_model.config import NextHop, Route, prefix_mask
from ratelab_model.packet import (
    ETH_HEADER_LEN,
    ETHERTYPE_IPV4,
    IPPROTO_RBCC,
    IPV4_MIN_HEADER_LEN,
    RBCC_HEADER_LEN,
    RBCC_VERSION,
    ones_complement_checksum,
)


class ForwardDrop(Enum):
    NOT_IPV4 = "not_ipv4"
    MALFORMED = "malformed"
    BAD_CHECKSUM = "bad_checksum"
    TTL_EXPIRED = "ttl_expired"
    NO_ROUTE = "no_route"


@dataclass(frozen=True)
class Ipv4View:
    """Where the interesting parts of a checked IPv4 frame are."""

    src: int
    dst: int
    header_len: int  # bytes, options included
    rbcc_offset: int | None  # frame offset of a version-1 RBCC header, or None


def parse_ipv4(frame: bytes) -> Ipv4View | ForwardDrop:
    """Check the Ethernet and IPv4 headers; return what forwarding needs or a drop cause.

    An IPv4 packet with protocol 253 and fragment offset 0 must carry a whole
    RBCC header inside its total length (else malformed); one whose RBCC
    version is not 1 is forwarded as plain IPv4.
    """
    if len(frame) < ETH_HEADER_LEN:
        return ForwardDrop.MALFORMED
    if struct.unpack_from("!H", frame, 12)[0] != ETHERTYPE_IPV4:
        return ForwardDrop.NOT_IPV4
    ip = ETH_HEADER_LEN
    if len(frame) < ip + IPV4_MIN_HEADER_LEN:
        return ForwardDrop.MALFORMED
    version, ihl = frame[ip] >> 4, frame[ip] & 0xF
    header_len = ihl * 4
    total_len = struct.unpack_from("!H", frame, ip + 2)[0]
    if version != 4 or ihl < 5 or len(frame) < ip + header_len:
        return ForwardDrop.MALFORMED
    if total_len < header_len or total_len > len(frame) - ip:
        return ForwardDrop.MALFORMED
    rbcc_offset = None
    frag_offset = struct.unpack_from("!H", frame, ip + 6)[0] & 0x1FFF
    if frame[ip + 9] == IPPROTO_RBCC and frag_offset == 0:
        if total_len < header_len + RBCC_HEADER_LEN:
            return ForwardDrop.MALFORMED
        if frame[ip + header_len] >> 4 == RBCC_VERSION:
            rbcc_offset = ip + header_len
    if ones_complement_checksum(frame[ip : ip + header_len]) != 0:
        return ForwardDrop.BAD_CHECKSUM
    if frame[ip + 8] <= 1:
        return ForwardDrop.TTL_EXPIRED
    src, dst = struct.unpack_from("!II", frame, ip + 12)
    return Ipv4View(src=src, dst=dst, header_len=header_len, rbcc_offset=rbcc_offset)


class RoutingTable:
    """Longest-prefix match over the installed routes (ties cannot occur: one
    route per prefix)."""

    def __init__(self, routes: tuple[Route, ...], next_hops: tuple[NextHop, ...]) -> None:
        hops = {h.id: h for h in next_hops}
        self._by_length: list[tuple[int, dict[int, NextHop]]] = []
        for length in sorted({r.length for r in routes}, reverse=True):
            table = {r.prefix: hops[r.next_hop] for r in routes if r.length == length}
            self._by_length.append((prefix_mask(length), table))

    def lookup(self, dst: int) -> NextHop | None:
        for mask, table in self._by_length:
            hop = table.get(dst & mask)
            if hop is not None:
                return hop
        return None


def rewrite(frame: bytes, header_len: int, src_mac: bytes, dst_mac: bytes) -> bytearray:
    """The forwarded frame: new MACs, TTL - 1, IPv4 checksum recomputed over the
    whole header, options included (what v1model's update_checksum does)."""
    out = bytearray(frame)
    out[0:6] = dst_mac
    out[6:12] = src_mac
    ip = ETH_HEADER_LEN
    out[ip + 8] -= 1
    out[ip + 10 : ip + 12] = b"\x00\x00"
    csum = ones_complement_checksum(bytes(out[ip : ip + header_len]))
    out[ip + 10 : ip + 12] = struct.pack("!H", csum)
    return out
