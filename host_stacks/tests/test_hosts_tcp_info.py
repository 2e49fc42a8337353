"""struct tcp_info parsing: handcrafted bytes at the Linux offsets, shorter
structs of older kernels, and one live socket on loopback."""

from __future__ import annotations

import dataclasses
import socket
import struct

import pytest
from ratelab_hosts import tcp_info as ti
from ratelab_hosts.tcp_info import MIN_LEN, TcpInfo, parse_tcp_info

# (offset, format, value) per field, as include/uapi/linux/tcp.h lays them out;
# every value distinct so a wrong offset shows.
LAYOUT = {
    "state": (0, "B", 1),
    "ca_state": (1, "B", 3),
    "rto_us": (8, "I", 204_000),
    "snd_mss": (16, "I", 1448),
    "unacked": (24, "I", 17),
    "sacked": (28, "I", 2),
    "lost": (32, "I", 4),
    "retrans": (36, "I", 5),
    "pmtu": (60, "I", 1500),
    "rtt_us": (68, "I", 20_123),
    "rttvar_us": (72, "I", 3_456),
    "snd_ssthresh": (76, "I", 33),
    "snd_cwnd": (80, "I", 44),
    "total_retrans": (100, "I", 77),
    "pacing_rate": (104, "Q", 1 << 33),
    "bytes_acked": (120, "Q", (1 << 32) + 5),
    "bytes_received": (128, "Q", 99),
    "notsent_bytes": (144, "I", 6_000),
    "min_rtt_us": (148, "I", 19_000),
    "delivery_rate": (160, "Q", 1_250_000),
    "bytes_sent": (200, "Q", (1 << 34) + 1),
    "bytes_retrans": (208, "Q", 8_888),
}
LINUX_6_LEN = 280


def handcrafted(length: int = LINUX_6_LEN, **override: int) -> bytes:
    buf = bytearray(b"\xee" * LINUX_6_LEN)  # filler: fields not parsed stay nonzero
    for name, (offset, fmt, value) in LAYOUT.items():
        struct.pack_into("=" + fmt, buf, offset, override.get(name, value))
    return bytes(buf[:length])


def test_every_field_is_read_at_its_linux_offset() -> None:
    info = parse_tcp_info(handcrafted())
    assert dataclasses.asdict(info) == {name: value for name, (_, _, value) in LAYOUT.items()}
    assert info.state_name == "ESTABLISHED" and info.ca_state_name == "recovery"


def test_the_table_covers_the_dataclass() -> None:
    assert {f.name for f in dataclasses.fields(TcpInfo)} == set(ti._FIELDS) == set(LAYOUT)


@pytest.mark.parametrize(
    ("length", "present", "absent"),
    [
        (104, "total_retrans", "pacing_rate"),  # Linux 2.6 to 3.14
        (120, "pacing_rate", "bytes_acked"),  # 3.15
        (136, "bytes_received", "notsent_bytes"),  # 4.1
        (160, "min_rtt_us", "delivery_rate"),  # 4.6
        (168, "delivery_rate", "bytes_sent"),  # 4.9
        (207, "delivery_rate", "bytes_sent"),  # a field cut short is absent
        (232, "bytes_retrans", None),  # 5.x
    ],
)
def test_a_shorter_struct_leaves_the_fields_it_lacks_none(
    length: int, present: str, absent: str | None
) -> None:
    info = dataclasses.asdict(parse_tcp_info(handcrafted(length)))
    assert info[present] == LAYOUT[present][2]
    names = list(LAYOUT)
    if absent is not None:
        assert all(info[n] is None for n in names[names.index(absent) :])
    assert all(info[n] == LAYOUT[n][2] for n in names[: names.index(present) + 1])


def test_shorter_than_every_linux_is_an_error() -> None:
    with pytest.raises(ValueError, match="too short: 103 bytes"):
        parse_tcp_info(handcrafted(MIN_LEN - 1))


def test_infinite_ssthresh_and_unknown_states() -> None:
    info = parse_tcp_info(handcrafted(snd_ssthresh=0x7FFFFFFF, state=42, ca_state=9))
    assert info.snd_ssthresh is None
    assert info.state_name == "UNKNOWN(42)" and info.ca_state_name == "unknown(9)"
    assert parse_tcp_info(handcrafted(snd_ssthresh=0x7FFFFFFE)).snd_ssthresh == 0x7FFFFFFE


def test_a_live_connection_parses_as_the_kernel_describes_it() -> None:
    with (
        socket.create_server(("127.0.0.1", 0)) as server,
        socket.create_connection(server.getsockname()) as client,
    ):
        raw = client.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, ti.TCP_INFO_BUFLEN)
        info = parse_tcp_info(raw)
        server.accept()[0].close()
    assert info.state_name == "ESTABLISHED" and info.ca_state_name == "open"
    # connect() returns once the SYN-ACK is in: the SYN counts as one acked byte
    assert info.bytes_acked == 1 and info.unacked == 0 and info.total_retrans == 0
    assert info.snd_ssthresh is None  # still in slow start
    assert info.snd_cwnd > 0 and 0 < info.snd_mss < info.pmtu
    assert info.rtt_us > 0  # the handshake's RTT
