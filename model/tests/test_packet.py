"""Wire formats: RBCC header layout, the Internet checksum, address helpers."""

from __future__ import annotations

import pytest
from ratelab_model.packet import (
    RbccHeader,
    ip_to_int,
    ip_to_str,
    ipv4_header,
    mac_to_bytes,
    ones_complement_checksum,
)


def test_rbcc_header_layout_is_big_endian_24_bytes() -> None:
    header = RbccHeader(0x5, 6, 0x01020304, 0x0A000001, 0xFFFFFFFF, 7, 1500, reserved=0xABCD)
    raw = header.encode()
    assert raw.hex() == "1506abcd010203040a000001ffffffff00000007000005dc"
    assert RbccHeader.decode(raw) == header


def test_rbcc_decode_rejects_a_short_header() -> None:
    with pytest.raises(ValueError, match="truncated"):
        RbccHeader.decode(bytes(23))


def test_checksum_of_a_known_header() -> None:
    # A textbook IPv4 header whose checksum is 0xb861.
    header = bytes.fromhex("450000730000400040110000c0a80001c0a800c7")
    assert ones_complement_checksum(header) == 0xB861


def test_built_header_verifies_to_zero() -> None:
    header = ipv4_header(ip_to_int("10.0.0.1"), ip_to_int("10.0.0.2"), 17, 100, options=bytes(8))
    assert len(header) == 28 and header[0] == 0x47
    assert ones_complement_checksum(header) == 0


@pytest.mark.parametrize("text", ["10.0.0", "10.0.0.256", "a.b.c.d", "1.2.3.4.5"])
def test_bad_ip_text_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        ip_to_int(text)


def test_address_helpers_round_trip() -> None:
    assert ip_to_str(ip_to_int("192.168.7.9")) == "192.168.7.9"
    assert mac_to_bytes("02:00:00:00:00:0a") == bytes([2, 0, 0, 0, 0, 10])
    with pytest.raises(ValueError):
        mac_to_bytes("02:00:00:00:00")
