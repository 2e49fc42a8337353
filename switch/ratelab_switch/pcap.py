"""pcap capture files (the classic libpcap format, Ethernet link type): reading those the
data plane (switch/dataplane/src/pcap.rs) writes for --pcap and --use-files, and writing
input files for --use-files."""

from __future__ import annotations

import struct

_MAGIC_US = 0xA1B2C3D4
_LINKTYPE_ETHERNET = 1


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


def write_pcap(path: str, records: list[tuple[int, bytes]]) -> None:
    """A file of (time_us, bytes) records, e.g. the NAME_in.pcap of a --use-files port."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", _MAGIC_US, 2, 4, 0, 0, 65535, _LINKTYPE_ETHERNET))
        for time_us, data in records:
            sec, usec = divmod(time_us, 1_000_000)
            f.write(struct.pack("<IIII", sec, usec, len(data), len(data)))
            f.write(data)
