import struct

import pytest
from ratelab_hosts.wire import (
    NEXT_PROTO_TRUMP,
    TRUMP_HEADER_LEN,
    RbccPacket,
    TrumpHeader,
    parse_udp_probe,
    udp_probe,
)
from ratelab_model.packet import FLAG_ACK, RATE_UNLIMITED, RbccHeader


def test_trump_header_layout_is_the_documented_one() -> None:
    header = TrumpHeader(
        0x1234, seq=5, pn=9, ts=0x1_0000_0007, cum_ack=3, high=8, ranges=((3, 4), (6, 8))
    )
    data = header.encode()
    assert len(data) == TRUMP_HEADER_LEN + 16 == header.length
    assert struct.unpack("!HBBIIIII", data[:24]) == (0x1234, 2, 0, 5, 9, 7, 3, 8)
    assert struct.unpack("!IIII", data[24:]) == (3, 4, 6, 8)
    assert TrumpHeader.decode(data) == TrumpHeader(0x1234, 5, 9, 7, 3, 8, ((3, 4), (6, 8)))


def test_trump_header_truncation_is_an_error() -> None:
    data = TrumpHeader(1, ranges=((0, 1),)).encode()
    with pytest.raises(ValueError, match="truncated"):
        TrumpHeader.decode(data[:20])
    with pytest.raises(ValueError, match="ranges truncated"):
        TrumpHeader.decode(data[:-1])


def test_rbcc_packet_uses_the_model_header_and_next_proto_254() -> None:
    rbcc = RbccHeader(FLAG_ACK, NEXT_PROTO_TRUMP, RATE_UNLIMITED, 0, 5000, 7, 0)
    packet = RbccPacket(rbcc, TrumpHeader(3, seq=1), b"xyz")
    data = packet.encode()
    assert data[:24] == rbcc.encode()
    assert data[1] == 254
    assert RbccPacket.decode(data) == packet


@pytest.mark.parametrize(
    ("version", "next_proto"), [(2, NEXT_PROTO_TRUMP), (1, 17)], ids=["version", "proto"]
)
def test_rbcc_packet_rejects_other_versions_and_transports(version: int, next_proto: int) -> None:
    rbcc = RbccHeader(0, next_proto, 1, 0, 1, 0, 1, version=version)
    with pytest.raises(ValueError):
        RbccPacket.decode(rbcc.encode() + TrumpHeader(1).encode())


def test_udp_probe_round_trip_and_padding() -> None:
    data = udp_probe(0xDEADBEEF, 1 << 40, 123456789, 100)
    assert len(data) == 100
    assert parse_udp_probe(data) == (0xDEADBEEF, 1 << 40, 123456789)
    with pytest.raises(ValueError):
        parse_udp_probe(data[:19])
