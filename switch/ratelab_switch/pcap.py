"""Minimal pcap file writer (the classic libpcap format, Ethernet link type)."""

from __future__ import annotations

import struct
from typing import BinaryIO

_MAGIC_US = 0xA1B2C3D4
_LINKTYPE_ETHERNET = 1
_SNAPLEN = 65535


class PcapWriter:
    def __init__(self, path: str) -> None:
        self._f: BinaryIO = open(path, "wb")  # noqa: SIM115 - closed by close()
        self._f.write(struct.pack("<IHHiIII", _MAGIC_US, 2, 4, 0, 0, _SNAPLEN, _LINKTYPE_ETHERNET))
        self._f.flush()

    def write(self, data: bytes, time_us: int) -> None:
        captured = data[:_SNAPLEN]
        sec, usec = divmod(time_us, 1_000_000)
        self._f.write(struct.pack("<IIII", sec, usec, len(captured), len(data)))
        self._f.write(captured)
        self._f.flush()  # readable while the switch runs, as BMv2's are

    def close(self) -> None:
        self._f.close()


def read_pcap(path: str) -> list[tuple[int, bytes]]:
    """(time_us, bytes) of every record; for tests and tools."""
    with open(path, "rb") as f:
        data = f.read()
    magic, _, _, _, _, _, linktype = struct.unpack_from("<IHHiIII", data, 0)
    if magic != _MAGIC_US or linktype != _LINKTYPE_ETHERNET:
        raise ValueError(f"{path}: not an Ethernet pcap file with microsecond stamps")
    out = []
    pos = 24
    while pos + 16 <= len(data):
        sec, usec, caplen, _ = struct.unpack_from("<IIII", data, pos)
        pos += 16
        out.append((sec * 1_000_000 + usec, data[pos : pos + caplen]))
        pos += caplen
    return out
