"""Linux ``struct tcp_info`` (getsockopt TCP_INFO), parsed from its bytes.

Offsets follow include/uapi/linux/tcp.h. The struct only ever grows at the
end, and the kernel copies ``min(buffer, sizeof)`` bytes, so an older kernel
returns a prefix: a field the buffer does not reach is None. Everything up to
``tcpi_total_retrans`` (104 bytes, Linux 2.6) is required. Byte order and
field sizes are the host's (native, unpadded at these offsets).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

# Ask for more than any kernel returns today (6.x: 280 bytes).
TCP_INFO_BUFLEN = 512
# tcpi_snd_ssthresh before the first loss / slow-start exit (TCP_INFINITE_SSTHRESH).
INFINITE_SSTHRESH = 0x7FFFFFFF

# include/net/tcp_states.h
TCP_STATES = {
    1: "ESTABLISHED",
    2: "SYN_SENT",
    3: "SYN_RECV",
    4: "FIN_WAIT1",
    5: "FIN_WAIT2",
    6: "TIME_WAIT",
    7: "CLOSE",
    8: "CLOSE_WAIT",
    9: "LAST_ACK",
    10: "LISTEN",
    11: "CLOSING",
    12: "NEW_SYN_RECV",
}
# enum tcp_ca_state (include/uapi/linux/tcp.h)
CA_STATES = {0: "open", 1: "disorder", 2: "cwr", 3: "recovery", 4: "loss"}

# name -> (offset, struct format); u8 at 0..7, u32 from 8, u64 where marked.
_FIELDS: dict[str, tuple[int, str]] = {
    "state": (0, "B"),
    "ca_state": (1, "B"),
    "rto_us": (8, "I"),
    "snd_mss": (16, "I"),
    "unacked": (24, "I"),
    "sacked": (28, "I"),
    "lost": (32, "I"),
    "retrans": (36, "I"),
    "pmtu": (60, "I"),
    "rtt_us": (68, "I"),
    "rttvar_us": (72, "I"),
    "snd_ssthresh": (76, "I"),
    "snd_cwnd": (80, "I"),
    "total_retrans": (100, "I"),
    # Linux 3.15 and later
    "pacing_rate": (104, "Q"),
    # Linux 4.1
    "bytes_acked": (120, "Q"),
    "bytes_received": (128, "Q"),
    # Linux 4.6 / 4.10
    "notsent_bytes": (144, "I"),
    "min_rtt_us": (148, "I"),
    "delivery_rate": (160, "Q"),
    # Linux 4.19
    "bytes_sent": (200, "Q"),
    "bytes_retrans": (208, "Q"),
}
MIN_LEN = 104


@dataclass(frozen=True)
class TcpInfo:
    state: int
    ca_state: int
    rto_us: int
    snd_mss: int
    unacked: int  # segments sent and not yet acknowledged
    sacked: int
    lost: int
    retrans: int  # segments retransmitted and not yet acknowledged
    pmtu: int
    rtt_us: int  # smoothed RTT (0: no measurement yet)
    rttvar_us: int
    snd_ssthresh: int | None  # None while still "infinite" (no loss, slow start)
    snd_cwnd: int  # segments
    total_retrans: int  # retransmitted segments over the connection's life
    pacing_rate: int | None  # bytes/s
    bytes_acked: int | None  # counts the SYN and the FIN as one byte each
    bytes_received: int | None
    notsent_bytes: int | None
    min_rtt_us: int | None
    delivery_rate: int | None  # bytes/s
    bytes_sent: int | None  # data bytes sent, retransmissions included
    bytes_retrans: int | None

    @property
    def state_name(self) -> str:
        return TCP_STATES.get(self.state, f"UNKNOWN({self.state})")

    @property
    def ca_state_name(self) -> str:
        return CA_STATES.get(self.ca_state, f"unknown({self.ca_state})")


def parse_tcp_info(data: bytes) -> TcpInfo:
    """Parse what getsockopt(TCP_INFO) returned; ValueError if shorter than
    the fields every Linux has."""
    if len(data) < MIN_LEN:
        raise ValueError(f"tcp_info too short: {len(data)} bytes (at least {MIN_LEN})")
    values: dict[str, int | None] = {}
    for name, (offset, fmt) in _FIELDS.items():
        end = offset + struct.calcsize(fmt)
        values[name] = struct.unpack_from("=" + fmt, data, offset)[0] if end <= len(data) else None
    if values["snd_ssthresh"] is not None and values["snd_ssthresh"] >= INFINITE_SSTHRESH:
        values["snd_ssthresh"] = None
    return TcpInfo(**values)  # type: ignore[arg-type]
