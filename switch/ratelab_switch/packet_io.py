"""controller_packet_metadata headers: built in front of PacketOut payloads, parsed off
packets the pipeline sends to the CPU port.

Header fields are packed most significant bit first, in P4Info order, as the
P4 header they describe is laid out on the wire; a header whose width is not a
whole number of bytes is padded with zero bits at its end.
"""

from __future__ import annotations

from finsy.proto.p4.v1 import p4runtime_pb2 as p4r
from ratelab_p4info import ControllerHeaderInfo

from . import codec
from .errors import invalid


def header_bytes(header: ControllerHeaderInfo) -> int:
    return (header.bitwidth + 7) // 8


def build_packet_out(header: ControllerHeaderInfo | None, msg: p4r.PacketOut) -> bytes:
    """The bytes to inject on the CPU port: the packet_out header then the payload."""
    if header is None:
        if msg.metadata:
            raise invalid("PacketOut has metadata but the P4Info has no packet_out header")
        return bytes(msg.payload)
    given: dict[int, bytes] = {}
    for md in msg.metadata:
        if header.fields and all(f.id != md.metadata_id for f in header.fields):
            raise invalid(f"PacketOut: unknown metadata id {md.metadata_id}")
        if md.metadata_id in given:
            raise invalid(f"PacketOut: metadata id {md.metadata_id} given twice")
        given[md.metadata_id] = md.value
    acc = 0
    for f in header.fields:
        raw = given.get(f.id)
        if raw is None:
            raise invalid(f"PacketOut: metadata {f.name} is missing")
        acc = (acc << f.bitwidth) | codec.decode(raw, f.bitwidth, f"PacketOut metadata {f.name}")
    total = header_bytes(header)
    acc <<= total * 8 - header.bitwidth
    return acc.to_bytes(total, "big") + bytes(msg.payload)


def parse_packet_in(header: ControllerHeaderInfo | None, data: bytes) -> p4r.PacketIn:
    """Split a CPU-port packet into PacketIn metadata and payload."""
    if header is None:
        return p4r.PacketIn(payload=data)
    total = header_bytes(header)
    if len(data) < total:
        raise invalid(f"packet to the CPU port is shorter than the packet_in header ({total} B)")
    acc = int.from_bytes(data[:total], "big") >> (total * 8 - header.bitwidth)
    out = p4r.PacketIn(payload=data[total:])
    shift = header.bitwidth
    for f in header.fields:
        shift -= f.bitwidth
        value = (acc >> shift) & codec.mask_of(f.bitwidth)
        out.metadata.add(metadata_id=f.id, value=codec.encode(value, f.bitwidth))
    return out
