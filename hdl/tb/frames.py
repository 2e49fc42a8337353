"""Test frames for the router testbenches: Ethernet/IPv4 (options), RBCC, and broken ones.

Frames are built with ``struct`` (byte-exact control over broken headers). The
expected parse results come from the reference model (ratelab_model.forwarding).
"""

from __future__ import annotations

import random
import struct
from dataclasses import dataclass

ETHERTYPE_IPV4 = 0x0800
IPPROTO_RBCC = 253


def csum16(data: bytes) -> int:
    """Internet checksum (RFC 1071) of an even-length byte string."""
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


@dataclass
class RbccFields:
    flags: int = 0
    next_proto: int = 17
    rate: int = 0xFFFFFFFF
    bottle_node: int = 0
    return_rate: int = 0xFFFFFFFF
    return_bottle_node: int = 0
    current_rate: int = 0
    version: int = 1

    def encode(self) -> bytes:
        return struct.pack(
            "!BBHIIIII",
            (self.version << 4) | self.flags,
            self.next_proto,
            0,
            self.rate,
            self.bottle_node,
            self.return_rate,
            self.return_bottle_node,
            self.current_rate,
        )


def ipv4_frame(
    src: int,
    dst: int,
    proto: int = 17,
    payload: bytes = b"",
    ttl: int = 64,
    options: bytes = b"",
    flags_frag: int = 0,
    dst_mac: bytes = b"\x02\x00\x00\x00\x00\x01",
    src_mac: bytes = b"\x02\x00\x00\x00\x00\x02",
    pad_to: int = 60,
    bad_csum: bool = False,
) -> bytes:
    ihl = 5 + len(options) // 4
    total = ihl * 4 + len(payload)
    hdr = struct.pack(
        "!BBHHHBBHII", 0x40 | ihl, 0, total, 0x1234, flags_frag, ttl, proto, 0, src, dst
    )
    hdr += options
    c = csum16(hdr) ^ (0x0101 if bad_csum else 0)
    hdr = hdr[:10] + struct.pack("!H", c) + hdr[12:]
    frame = dst_mac + src_mac + struct.pack("!H", ETHERTYPE_IPV4) + hdr + payload
    return frame + bytes(max(0, pad_to - len(frame)))


def random_frame(rng: random.Random) -> bytes:
    """A random frame: mostly valid IPv4 (UDP or RBCC, with options), some broken."""
    kind = rng.random()
    opts = bytes(rng.getrandbits(8) for _ in range(4 * rng.choice([0, 0, 0, 1, 3, 10])))
    src, dst = rng.getrandbits(32), rng.getrandbits(32)
    ttl = rng.choice([0, 1, 2, 64, 255])
    if kind < 0.45:
        rb = RbccFields(
            flags=rng.getrandbits(3),
            rate=rng.getrandbits(32),
            bottle_node=rng.getrandbits(32),
            return_rate=rng.getrandbits(32),
            return_bottle_node=rng.getrandbits(32),
            current_rate=rng.getrandbits(32),
            version=1 if rng.random() < 0.9 else 2,
        )
        payload = rb.encode() + bytes(rng.getrandbits(8) for _ in range(rng.randrange(0, 40)))
        frag = 0 if rng.random() < 0.9 else 0x0010
        f = ipv4_frame(
            src,
            dst,
            IPPROTO_RBCC,
            payload,
            ttl,
            opts,
            flags_frag=frag,
            bad_csum=rng.random() < 0.1,
        )
    elif kind < 0.75:
        payload = bytes(rng.getrandbits(8) for _ in range(rng.randrange(0, 100)))
        f = ipv4_frame(src, dst, 17, payload, ttl, opts, bad_csum=rng.random() < 0.1)
    elif kind < 0.8:
        # not IPv4
        f = bytes(12) + b"\x86\xdd" + bytes(rng.getrandbits(8) for _ in range(50))
    elif kind < 0.85:
        # runt frame
        f = bytes(rng.getrandbits(8) for _ in range(rng.randrange(1, 34)))
    elif kind < 0.9:
        # RBCC with the total length too short for the RBCC header
        f = bytearray(ipv4_frame(src, dst, IPPROTO_RBCC, bytes(10), ttl, opts))
        f = bytes(f)
    else:
        # IPv4 with a broken version / IHL / total length, or truncated
        f = bytearray(ipv4_frame(src, dst, 17, bytes(30), ttl, opts, pad_to=0))
        which = rng.randrange(4)
        if which == 0:
            f[14] = (rng.choice([4, 6]) << 4) | rng.randrange(0, 5)
        elif which == 1:
            f[14] = 0x60 | (f[14] & 0xF)
        elif which == 2:
            f[16:18] = struct.pack("!H", rng.randrange(0, 0x10000))
        else:
            f = f[: rng.randrange(14, len(f))]
        f = bytes(f)
    return f
