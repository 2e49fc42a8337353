"""The binding of ratelab-stack's TCP (ratelab_hoststack.TcpConfig and
TcpConnection): one-line ValueErrors naming the field, a handshake and a
transfer between two connections in memory (TCP segments and whole IPv4
frames), malformed input counted and dropped."""

from __future__ import annotations

import struct

import pytest
from ratelab_hoststack import TcpConfig, TcpConnection

MS = 1_000_000
A = ("10.0.1.2", 40000)
B = ("10.0.2.1", 5001)
ETH = bytes(range(12)) + b"\x08\x00"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"cc": "bbr"},
            'cc: unknown algorithm "bbr" (expected reno, newreno, cubic, cubic-linux or vegas)',
        ),
        ({"iw": 0}, "iw: must be 1 to 1000 segments, got 0"),
        ({"iw": 1001}, "iw: must be 1 to 1000 segments, got 1001"),
        ({"iw": -3}, "iw: must be 1 to 1000 segments, got -3"),
        ({"iw": "ten"}, "iw: must be a whole number (1 to 1000 segments), got 'ten'"),
        ({"initial_rto_ns": 0}, "initial_rto: must be 1 ms to 60 s, got 0 ms"),
        ({"initial_rto_ns": 61_000 * MS}, "initial_rto: must be 1 ms to 60 s, got 61000 ms"),
        ({"initial_rto_ns": -1}, "initial_rto: must be a time in ns >= 0, got -1"),
        ({"min_rto_ns": 0}, "min_rto: must be 1 ms to 60 s, got 0 ms"),
        ({"mss": 10}, "mss: must be 88 to 65495 bytes, got 10"),
        ({"delayed_ack_ns": 600 * MS}, "delayed_ack: must be above 0 and below 500 ms"),
        ({"send_buffer": 100}, "send_buffer: must be 2*mss (2920) to 1 GiB, got 100"),
        (
            {"send_buffer_policy": "big"},
            'send_buffer_policy: expected auto or fixed, got "big"',
        ),
        (
            {"rto_formula": "Linux"},
            'rto_formula: unknown formula "Linux" (expected rfc6298 or linux)',
        ),
    ],
)
def test_bad_config_is_one_line_naming_the_field(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError) as info:
        TcpConfig(**kwargs)  # type: ignore[arg-type]
    text = str(info.value)
    assert text.startswith(message), text
    assert "\n" not in text


def test_config_keeps_its_values() -> None:
    c = TcpConfig(cc="vegas", iw=3, initial_rto_ns=3000 * MS, min_rto_ns=MS, delayed_ack=False)
    assert (c.cc, c.iw, c.initial_rto_ns, c.min_rto_ns, c.delayed_ack_ns) == (
        "vegas",
        3,
        3000 * MS,
        MS,
        None,
    )
    # the default maximum RTO (60 s) is never below the initial one
    assert TcpConfig(initial_rto_ns=60_000 * MS).max_rto_ns == 60_000 * MS
    assert TcpConfig().delayed_ack_ns == 40 * MS and TcpConfig().sack
    # RTO formula and HyStart++: RFC 6298's and off unless asked for
    assert (TcpConfig().rto_formula, TcpConfig().hystart) == ("rfc6298", False)
    c = TcpConfig(cc="cubic", rto_formula="linux", hystart=True)
    assert (c.rto_formula, c.hystart) == ("linux", True)
    # the send buffer: auto-tuned up to 4 MiB (16 KiB before the handshake), or fixed
    assert (TcpConfig().send_buffer_policy, TcpConfig().send_buffer) == ("auto", 4 << 20)
    assert TcpConnection.connect(TcpConfig(), A, B, 1, 0).send_capacity == 16_384
    fixed = TcpConfig(send_buffer_policy="fixed", send_buffer=100_000)
    conn = TcpConnection.connect(fixed, A, B, 1, 0)
    assert (fixed.send_buffer_policy, conn.send_capacity) == ("fixed", 100_000)
    assert conn.send(bytes(150_000)) == 100_000
    assert conn.stats()["bytes_written"] == 100_000


def test_bad_endpoints() -> None:
    with pytest.raises(ValueError, match=r"^local: not an IPv4 address: \"10.0.1\"$"):
        TcpConnection.connect(TcpConfig(), ("10.0.1", 1), B, 1, 0)
    with pytest.raises(ValueError, match=r"^remote: port must be 1 to 65535, got 0$"):
        TcpConnection.connect(TcpConfig(), A, (B[0], 0), 1, 0)


def _exchange(
    a: TcpConnection, b: TcpConnection, now: int, *, frames: bool = False, drop_every: int = 0
) -> int:
    """Deliver what each side sends (1 ms one way) until both are quiet or
    only timers are pending; returns the new time."""
    sent = 0
    for _ in range(10_000):
        moved = False
        for src, dst in ((a, b), (b, a)):
            while True:
                out = src.poll_packet(now) if frames else src.poll_transmit(now)
                if out is None:
                    break
                moved = True
                sent += 1
                if drop_every and sent % drop_every == 0:
                    continue
                if frames:
                    assert dst.handle_packet(now + MS, out)
                else:
                    dst.handle_segment(now + MS, src.local[0], out)
        now += MS
        if not moved:
            due = [t for t in (a.poll_at(), b.poll_at()) if t is not None]
            if not due or min(due) > now + 5_000 * MS:
                return now
            now = max(now, min(due))
    raise AssertionError("no quiet point in 10,000 rounds")


@pytest.mark.parametrize("cc", ["reno", "newreno", "cubic", "vegas"])
@pytest.mark.parametrize("frames", [False, True])
def test_handshake_and_transfer_in_memory(cc: str, frames: bool) -> None:
    cfg = TcpConfig(cc=cc, iw=10, send_buffer_policy="fixed")
    client = TcpConnection.connect(cfg, A, B, 1000, 0)
    server = TcpConnection.listen(cfg, B, 7, 0)
    if frames:
        client.set_link_header(ETH)
        server.set_link_header(ETH)
    assert (client.state, server.state) == ("SYN_SENT", "LISTEN")
    data = bytes(i % 251 for i in range(300_000))
    taken = client.send(data)
    assert taken == len(data)  # a fixed 4 MiB buffer takes it all (auto: 16 KiB)
    now = _exchange(client, server, 0, frames=frames, drop_every=37)
    assert client.state == server.state == "ESTABLISHED"
    got = server.recv(1 << 20)
    assert got == data
    stats = client.stats()
    assert stats["bytes_acked"] == stats["bytes_sent"] == len(data)
    assert stats["retransmissions"] > 0  # every 37th packet was dropped
    assert stats["ssthresh_changes"] > 0 and client.ssthresh is not None
    assert stats["malformed"] == 0 and stats["cc"] == cc
    assert stats["srtt_ns"] is not None and stats["srtt_ns"] >= MS
    assert client.bytes_in_flight == 0 and client.notsent_bytes == 0
    client.check_invariants()
    client.close()
    now = _exchange(client, server, now, frames=frames)
    assert server.peer_closed and server.state == "CLOSE_WAIT"
    assert client.state == "FIN_WAIT2"


def test_before_the_first_reduction_ssthresh_is_none_and_cwnd_is_the_iw() -> None:
    client = TcpConnection.connect(TcpConfig(iw=3), A, B, 1, 0)
    server = TcpConnection.listen(TcpConfig(), B, 2, 0)
    _exchange(client, server, 0)
    assert client.ssthresh is None and client.stats()["ssthresh"] is None
    assert client.cwnd == 3 * client.smss


def test_malformed_input_is_counted_and_dropped() -> None:
    client = TcpConnection.connect(TcpConfig(), A, B, 1, 0)
    client.set_link_header(ETH)
    syn = client.poll_packet(0)
    assert syn is not None and syn[:14] == ETH
    # A frame addressed to the client: its own SYN with addresses swapped.
    ip = bytearray(syn[14:])
    ip[12:16], ip[16:20] = ip[16:20], ip[12:16]
    tcp = bytearray(ip[20:])
    tcp[0:2], tcp[2:4] = tcp[2:4], tcp[0:2]

    def frame(ip_part: bytes, tcp_part: bytes) -> bytes:
        return ETH + ip_part + tcp_part

    bad_ip_checksum = bytearray(ip[:20])
    bad_ip_checksum[10] ^= 0xFF
    assert client.handle_packet(MS, frame(bad_ip_checksum, tcp))  # ours, counted
    bad_tcp_checksum = bytearray(tcp)
    bad_tcp_checksum[14] ^= 0x01  # the window field
    assert client.handle_packet(MS, frame(ip[:20], bad_tcp_checksum))
    short = bytearray(ip[:20])
    struct.pack_into("!H", short, 2, 10)  # total length below the header
    assert client.handle_packet(MS, frame(short, tcp))
    assert client.stats()["malformed"] == 3
    client.handle_segment(MS, B[0], b"\x01\x02\x03")  # too short for TCP
    client.handle_segment(MS, B[0], bytes(tcp[:-1]))
    assert client.stats()["malformed"] == 5
    # Not ours at all: other address, other protocol, other port: ignored, not counted.
    other_dst = bytearray(ip[:20])
    other_dst[19] ^= 1
    assert not client.handle_packet(MS, frame(other_dst, tcp))
    udp = bytearray(ip[:20])
    udp[9] = 17
    assert not client.handle_packet(MS, frame(udp, tcp))
    other_port = bytearray(tcp)
    other_port[2:4] = b"\x00\x50"
    assert not client.handle_packet(MS, frame(ip[:20], other_port))
    assert not client.handle_packet(MS, b"\x00" * 10)
    assert client.stats()["malformed"] == 5
    assert client.state == "SYN_SENT"
    client.check_invariants()


def test_outgoing_ipv4_header_is_valid() -> None:
    client = TcpConnection.connect(TcpConfig(), A, B, 1, 0)
    packet = client.poll_packet(0)
    assert packet is not None
    version_ihl, _tos, total, _id, frag, ttl, proto = struct.unpack("!BBHHHBB", packet[:10])
    assert (version_ihl, total, frag, ttl, proto) == (0x45, len(packet), 0x4000, 64, 6)
    words = struct.unpack("!10H", packet[:20])
    s = sum(words)
    while s > 0xFFFF:
        s = (s & 0xFFFF) + (s >> 16)
    assert s == 0xFFFF
    assert packet[12:16] == bytes([10, 0, 1, 2]) and packet[16:20] == bytes([10, 0, 2, 1])
