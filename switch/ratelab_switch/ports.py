"""Switch ports on Linux network interfaces: AF_PACKET sockets read in batches."""

from __future__ import annotations

import os
import socket
import struct

from .pcap import PcapWriter

ETH_P_ALL = 0x0003
SOL_PACKET = 263
PACKET_AUXDATA = 8
PACKET_IGNORE_OUTGOING = 23  # Linux >= 4.20: do not see our own (and the host's) transmissions
TP_STATUS_VLAN_VALID = 0x10
TP_STATUS_VLAN_TPID_VALID = 0x40
ETH_P_8021Q = 0x8100
MAX_FRAME = 65535
BATCH = 64  # frames read from one port per wake-up
# struct tpacket_auxdata: status, len, snaplen (u32); mac, net, vlan_tci, vlan_tpid (u16)
_AUXDATA = struct.Struct("=IIIHHHH")
_ANC_SIZE = socket.CMSG_SPACE(_AUXDATA.size)


def restore_vlan_tag(frame: bytes, ancillary: list[tuple[int, int, bytes]]) -> bytes:
    """The kernel strips a received 802.1Q tag into metadata (VLAN offload); put it back,
    as libpcap does, so the pipeline sees the frame as it was on the wire."""
    for level, kind, data in ancillary:
        if level != SOL_PACKET or kind != PACKET_AUXDATA or len(data) < _AUXDATA.size:
            continue
        status, _, _, _, _, tci, tpid = _AUXDATA.unpack_from(data)
        if status & TP_STATUS_VLAN_VALID and len(frame) >= 12:
            if not status & TP_STATUS_VLAN_TPID_VALID:
                tpid = ETH_P_8021Q
            return frame[:12] + struct.pack("!HH", tpid, tci) + frame[12:]
    return frame


class Port:
    """One switch port bound to an interface, with optional pcap capture."""

    def __init__(self, number: int, iface: str, pcap_dir: str | None = None) -> None:
        self.number = number
        self.iface = iface
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        try:
            self.sock.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
            self.sock.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)
            self.sock.bind((iface, ETH_P_ALL))
            self.sock.setblocking(False)
        except OSError:
            self.sock.close()
            raise
        self.tx_errors = 0
        self._pcap_in = self._pcap_out = None
        if pcap_dir is not None:
            self._pcap_in = PcapWriter(os.path.join(pcap_dir, f"{iface}_in.pcap"))
            self._pcap_out = PcapWriter(os.path.join(pcap_dir, f"{iface}_out.pcap"))

    def fileno(self) -> int:
        return self.sock.fileno()

    def receive(self, now_us: int) -> list[bytes]:
        """Up to BATCH frames that are waiting (never blocks)."""
        frames: list[bytes] = []
        for _ in range(BATCH):
            try:
                frame, ancillary, _, _ = self.sock.recvmsg(MAX_FRAME, _ANC_SIZE)
            except (BlockingIOError, InterruptedError):
                break
            frame = restore_vlan_tag(frame, ancillary)
            frames.append(frame)
            if self._pcap_in is not None:
                self._pcap_in.write(frame, now_us)
        return frames

    def send(self, frame: bytes, time_us: int) -> None:
        try:
            self.sock.send(frame)
        except OSError:
            self.tx_errors += 1  # e.g. interface down or frame too short: dropped, as on a wire
            return
        if self._pcap_out is not None:
            self._pcap_out.write(frame, time_us)

    def close(self) -> None:
        self.sock.close()
        for w in (self._pcap_in, self._pcap_out):
            if w is not None:
                w.close()
