"""Wire formats the router reads and writes: Ethernet II, IPv4 (with options) and RBCC.

Plain struct code, no scapy: the model runs in simulations with many packets.
RBCC header layout: RBCC.md "Packet format" (24 bytes, big-endian).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

ETH_HEADER_LEN = 14
ETHERTYPE_IPV4 = 0x0800
IPV4_MIN_HEADER_LEN = 20
IPPROTO_RBCC = 253
RBCC_HEADER_LEN = 24
RBCC_VERSION = 1
RATE_UNLIMITED = 0xFFFFFFFF

FLAG_SYN = 0x1
FLAG_ACK = 0x2
FLAG_FIN = 0x4

_RBCC_STRUCT = struct.Struct("!BBHIIIII")


def mac_to_bytes(text: str) -> bytes:
    """'02:00:00:00:00:01' -> 6 bytes; ValueError on anything else."""
    parts = text.split(":")
    if len(parts) != 6 or not all(len(p) == 2 for p in parts):
        raise ValueError(f"not a MAC address: {text!r}")
    return bytes(int(p, 16) for p in parts)


def mac_to_str(mac: bytes) -> str:
    return ":".join(f"{b:02x}" for b in mac)


def ip_to_int(text: str) -> int:
    """Dotted quad -> 32-bit integer; ValueError on anything else."""
    parts = text.split(".")
    if len(parts) != 4 or not all(p.isdigit() and int(p) <= 255 for p in parts):
        raise ValueError(f"not an IPv4 address: {text!r}")
    value = 0
    for p in parts:
        value = (value << 8) | int(p)
    return value


def ip_to_str(addr: int) -> str:
    return ".".join(str((addr >> s) & 0xFF) for s in (24, 16, 8, 0))


def ones_complement_checksum(data: bytes) -> int:
    """The Internet checksum (RFC 1071) of `data` (even length)."""
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


@dataclass(frozen=True)
class RbccHeader:
    flags: int
    next_proto: int
    rate: int
    bottle_node: int
    return_rate: int
    return_bottle_node: int
    current_rate: int
    version: int = RBCC_VERSION
    reserved: int = 0

    def encode(self) -> bytes:
        return _RBCC_STRUCT.pack(
            (self.version << 4) | self.flags,
            self.next_proto,
            self.reserved,
            self.rate,
            self.bottle_node,
            self.return_rate,
            self.return_bottle_node,
            self.current_rate,
        )

    @staticmethod
    def decode(data: bytes) -> RbccHeader:
        if len(data) < RBCC_HEADER_LEN:
            raise ValueError("RBCC header truncated")
        vf, nxt, res, rate, bn, rr, rbn, cur = _RBCC_STRUCT.unpack_from(data)
        return RbccHeader(
            flags=vf & 0xF,
            next_proto=nxt,
            rate=rate,
            bottle_node=bn,
            return_rate=rr,
            return_bottle_node=rbn,
            current_rate=cur,
            version=vf >> 4,
            reserved=res,
        )


def ipv4_header(
    src: int,
    dst: int,
    protocol: int,
    payload_len: int,
    ttl: int = 64,
    options: bytes = b"",
    ident: int = 0,
    flags_frag: int = 0,
    tos: int = 0,
    checksum: int | None = None,
) -> bytes:
    """An IPv4 header with a correct checksum unless `checksum` forces one."""
    if len(options) % 4:
        raise ValueError("IPv4 options must be a multiple of 4 bytes")
    ihl = (IPV4_MIN_HEADER_LEN + len(options)) // 4
    total = ihl * 4 + payload_len
    fields = (0x40 | ihl, tos, total, ident, flags_frag, ttl, protocol, 0, src, dst)
    header = struct.pack("!BBHHHBBHII", *fields) + options
    csum = ones_complement_checksum(header) if checksum is None else checksum
    return header[:10] + struct.pack("!H", csum) + header[12:]


def build_frame(
    dst_mac: bytes,
    src_mac: bytes,
    ip_header: bytes,
    payload: bytes,
    pad_to: int = 60,
) -> bytes:
    """Ethernet II frame (no FCS) carrying IPv4, zero-padded to `pad_to` bytes."""
    frame = dst_mac + src_mac + struct.pack("!H", ETHERTYPE_IPV4) + ip_header + payload
    return frame + bytes(max(0, pad_to - len(frame)))


HOST_MAC = bytes.fromhex("020000000099")
ROUTER_MAC = bytes.fromhex("020000000001")


def ipv4_frame(
    src: int,
    dst: int,
    protocol: int,
    payload: bytes,
    *,
    ttl: int = 64,
    options: bytes = b"",
    ident: int = 0,
    flags_frag: int = 0,
    checksum: int | None = None,
    dst_mac: bytes = ROUTER_MAC,
    src_mac: bytes = HOST_MAC,
) -> bytes:
    """A whole test frame: Ethernet + IPv4 (+ options) + payload, padded to 60 bytes."""
    header = ipv4_header(
        src,
        dst,
        protocol,
        len(payload),
        ttl=ttl,
        options=options,
        ident=ident,
        flags_frag=flags_frag,
        checksum=checksum,
    )
    return build_frame(dst_mac, src_mac, header, payload)


def rbcc_frame(src: int, dst: int, header: RbccHeader, body: bytes = b"", **kw: object) -> bytes:
    """An RBCC packet: IPv4 protocol 253, the RBCC header, then `body`."""
    return ipv4_frame(src, dst, IPPROTO_RBCC, header.encode() + body, **kw)  # type: ignore[arg-type]
