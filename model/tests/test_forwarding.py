"""Forwarding rules: LPM, drop causes and their order, TTL and checksum rewrite."""

from __future__ import annotations

import random
import struct

from ratelab_model.config import NextHop, Route, prefix_mask
from ratelab_model.forwarding import ForwardDrop, Ipv4View, RoutingTable, parse_ipv4, rewrite
from ratelab_model.packet import ip_to_int, ipv4_frame, ones_complement_checksum

SRC, DST = ip_to_int("10.0.1.1"), ip_to_int("10.0.2.2")


def test_lpm_matches_a_brute_force_longest_match() -> None:
    rng = random.Random(5)
    hops = tuple(NextHop(i, 1, bytes(6)) for i in range(40))
    routes: dict[tuple[int, int], int] = {}
    for i in range(40):
        length = rng.choice([0, 8, 12, 16, 20, 24, 28, 32])
        prefix = rng.getrandbits(32) & prefix_mask(length) & 0x0AFFFFFF
        routes[(prefix, length)] = i
    table = RoutingTable(tuple(Route(p, n, h) for (p, n), h in routes.items()), hops)
    for _ in range(2000):
        dst = rng.getrandbits(32) & 0x0AFFFFFF
        matches = [(n, h) for (p, n), h in routes.items() if dst & prefix_mask(n) == p]
        want = max(matches)[1] if matches else None
        got = table.lookup(dst)
        assert (got.id if got else None) == want


def test_checks_and_their_order() -> None:
    good = ipv4_frame(SRC, DST, 17, bytes(30))
    assert isinstance(parse_ipv4(good), Ipv4View)
    assert parse_ipv4(good[:12] + b"\x86\xdd" + good[14:]) is ForwardDrop.NOT_IPV4
    assert parse_ipv4(good[:33]) is ForwardDrop.MALFORMED
    bad_both = ipv4_frame(SRC, DST, 17, bytes(30), ttl=1, checksum=0)
    assert parse_ipv4(bad_both) is ForwardDrop.BAD_CHECKSUM
    assert parse_ipv4(ipv4_frame(SRC, DST, 17, bytes(30), ttl=1)) is ForwardDrop.TTL_EXPIRED
    rbcc_short = ipv4_frame(SRC, DST, 253, bytes(23))
    assert parse_ipv4(rbcc_short) is ForwardDrop.MALFORMED


def test_rbcc_is_recognised_after_options_and_only_at_fragment_offset_zero() -> None:
    rbcc = bytes([0x10]) + bytes(23)
    view = parse_ipv4(ipv4_frame(SRC, DST, 253, rbcc, options=bytes(12)))
    assert isinstance(view, Ipv4View) and view.rbcc_offset == 14 + 32
    later = parse_ipv4(ipv4_frame(SRC, DST, 253, rbcc, flags_frag=1))
    assert isinstance(later, Ipv4View) and later.rbcc_offset is None


def _rfc1624_update(old_csum: int, old_word: int, new_word: int) -> int:
    """RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'), an independent way to get the result."""
    total = (~old_csum & 0xFFFF) + (~old_word & 0xFFFF) + new_word
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def test_ttl_decrement_checksum_equals_incremental_update() -> None:
    rng = random.Random(9)
    for _ in range(300):
        ttl = rng.randrange(2, 256)
        options = bytes(rng.getrandbits(8) for _ in range(4 * rng.randrange(0, 11)))
        frame = ipv4_frame(
            rng.getrandbits(32),
            rng.getrandbits(32),
            17,
            bytes(8),
            ttl=ttl,
            options=options,
            ident=rng.getrandbits(16),
        )
        header_len = 20 + len(options)
        out = rewrite(frame, header_len, b"\x02" * 6, b"\x04" * 6)
        assert out[:12] == b"\x04" * 6 + b"\x02" * 6
        assert out[22] == ttl - 1
        old_csum = struct.unpack_from("!H", frame, 24)[0]
        old_word = struct.unpack_from("!H", frame, 22)[0]
        new_word = struct.unpack_from("!H", out, 22)[0]
        assert struct.unpack_from("!H", out, 24)[0] == _rfc1624_update(old_csum, old_word, new_word)
        assert ones_complement_checksum(bytes(out[14 : 14 + header_len])) == 0
        assert out[14 + header_len :] == frame[14 + header_len :]
