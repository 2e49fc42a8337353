"""The router's control-plane state: everything a controller installs, as plain data.

Real-valued RED parameters are kept as `Decimal` so that the integers derived
from them (red.py) are exact and the same in every implementation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Literal

DEFAULT_ABT_SLOTS = 1024
DEFAULT_IDLE_TIMEOUT_US = 1_000_000
DEFAULT_MIN_RATE = 1500
DEFAULT_DECAY_LEN = 16384
DEFAULT_UTILISATION = Decimal("0.95")

AqmMode = Literal["fifo", "red"]


@dataclass(frozen=True)
class AqmConfig:
    """Queue discipline of one port (AQM.md). FIFO ignores the RED fields."""

    mode: AqmMode = "fifo"
    w_q: Decimal = Decimal("0.002")
    max_p: Decimal = Decimal("0.1")
    th_min: int = 5
    th_max: int = 15
    seed: int = 1

    def __post_init__(self) -> None:
        if self.mode not in ("fifo", "red"):
            raise ValueError(f"aqm.mode must be 'fifo' or 'red', not {self.mode!r}")
        if self.mode == "red":
            if not Decimal(0) < self.w_q < Decimal(1):
                raise ValueError("aqm.w_q must be in (0, 1)")
            if not Decimal(0) < self.max_p <= Decimal(1):
                raise ValueError("aqm.max_p must be in (0, 1]")
            if not 0 <= self.th_min < self.th_max < 1 << 15:
                raise ValueError("aqm needs 0 <= th_min < th_max < 32768")
        if not 0 <= self.seed < 1 << 32:
            raise ValueError("aqm.seed must be a 32-bit unsigned integer")


@dataclass(frozen=True)
class PortConfig:
    port: int
    mac: bytes
    rate_bps: int  # drain rate of the egress queue; 0 = unlimited
    queue_limit: int  # packets; an arrival is dropped if q >= queue_limit
    rbcc_capacity: int  # B/s this port hands out to RBCC flows (RBCC.md "Router state")
    aqm: AqmConfig = field(default_factory=AqmConfig)

    def __post_init__(self) -> None:
        if not 0 <= self.port < 512:
            raise ValueError(f"port number {self.port} out of range 0..511")
        if len(self.mac) != 6:
            raise ValueError(f"port {self.port}: MAC must be 6 bytes")
        if self.rate_bps < 0:
            raise ValueError(f"port {self.port}: rate_bps must be >= 0")
        # q stays below 2^16 so that avg (Q16.16) and q << 16 fit 32 bits
        if not 0 <= self.queue_limit < 1 << 16:
            raise ValueError(f"port {self.port}: queue_limit must be in 0..65535")
        if not 0 <= self.rbcc_capacity < 1 << 32:
            raise ValueError(f"port {self.port}: rbcc_capacity must fit 32 bits")


def prefix_mask(length: int) -> int:
    """Netmask of a /length prefix as a 32-bit integer."""
    return (0xFFFFFFFF << (32 - length)) & 0xFFFFFFFF


@dataclass(frozen=True)
class NextHop:
    id: int
    port: int
    mac: bytes


@dataclass(frozen=True)
class Route:
    prefix: int  # IPv4 address, host bits zero
    length: int
    next_hop: int

    def __post_init__(self) -> None:
        if not 0 <= self.length <= 32:
            raise ValueError(f"route prefix length {self.length} out of range 0..32")
        if self.prefix & ~prefix_mask(self.length) & 0xFFFFFFFF:
            raise ValueError(f"route prefix has host bits set beyond /{self.length}")


@dataclass(frozen=True)
class RouterConfig:
    router_id: int
    ports: tuple[PortConfig, ...]
    next_hops: tuple[NextHop, ...]
    routes: tuple[Route, ...]
    abt_slots: int = DEFAULT_ABT_SLOTS
    idle_timeout_us: int = DEFAULT_IDLE_TIMEOUT_US
    min_rate: int = DEFAULT_MIN_RATE
    decay_len: int = DEFAULT_DECAY_LEN

    def __post_init__(self) -> None:
        if self.abt_slots < 1 or self.abt_slots & (self.abt_slots - 1):
            raise ValueError("abt_slots must be a power of two")
        if self.decay_len < 1:
            raise ValueError("decay_len must be >= 1")
        port_numbers = {p.port for p in self.ports}
        if len(port_numbers) != len(self.ports):
            raise ValueError("a port is configured twice")
        hop_ids = {h.id for h in self.next_hops}
        for hop in self.next_hops:
            if hop.port not in port_numbers:
                raise ValueError(f"next hop {hop.id} uses unconfigured port {hop.port}")
        for route in self.routes:
            if route.next_hop not in hop_ids:
                raise ValueError(f"route uses unknown next hop {route.next_hop}")

    def port(self, number: int) -> PortConfig:
        for p in self.ports:
            if p.port == number:
                return p
        raise KeyError(number)
