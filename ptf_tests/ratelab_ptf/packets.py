"""scapy layers for RBCC (RBCC.md "Packet format") and test frame builders."""

from __future__ import annotations

from scapy.fields import BitField, ByteField, ShortField
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Packet, Raw, bind_layers

RATE_UNLIMITED = 0xFFFFFFFF
HOST_MAC = "02:00:00:00:00:99"
ROUTER_MAC = "02:00:00:00:00:01"


class RBCC(Packet):
    """The 24-byte RBCC header; 32-bit fields unsigned (scapy's IntField is signed)."""

    name = "RBCC"
    fields_desc = [
        BitField("version", 1, 4),
        BitField("flags", 0, 4),
        ByteField("next_proto", 17),
        ShortField("reserved", 0),
        BitField("rate", RATE_UNLIMITED, 32),
        BitField("bottle_node", 0, 32),
        BitField("return_rate", RATE_UNLIMITED, 32),
        BitField("return_bottle_node", 0, 32),
        BitField("current_rate", 0, 32),
    ]


bind_layers(IP, RBCC, proto=253)


def pad60(pkt: Packet) -> bytes:
    """The frame as sent: at least 60 bytes (minimum Ethernet frame, no FCS)."""
    raw = bytes(pkt)
    return raw + bytes(max(0, 60 - len(raw)))


def udp_frame(src: str, dst: str, *, ttl: int = 64, payload: bytes = b"ratelab-ptf") -> bytes:
    pkt = (
        Ether(dst=ROUTER_MAC, src=HOST_MAC)
        / IP(src=src, dst=dst, ttl=ttl, id=1)
        / UDP(sport=4000, dport=5000)
        / Raw(payload)
    )
    return pad60(pkt)


def rbcc_frame(src: str, dst: str, payload: bytes = b"", ttl: int = 64, **fields: int) -> bytes:
    pkt = (
        Ether(dst=ROUTER_MAC, src=HOST_MAC)
        / IP(src=src, dst=dst, ttl=ttl, id=2)
        / RBCC(**fields)
        / Raw(payload or b"rbcc-data")
    )
    return pad60(pkt)


def rbcc_fields(frame: bytes) -> RBCC:
    layer = Ether(frame).getlayer(RBCC)
    if layer is None:
        raise ValueError("not an RBCC frame")
    return layer
