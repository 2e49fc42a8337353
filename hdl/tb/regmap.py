"""Register map of router_core and a driver that turns a router configuration
(ratelab_model.config.RouterConfig, the same data the P4 controller installs)
into register writes.

The driver is transport-free: :func:`config_writes` returns (address, value)
pairs; a cocotb testbench sends them over its AXI-Lite master, the control-plane
library can send them over any bus. Addresses are byte addresses of 32-bit
registers; the map is documented in hdl/README.md.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from ratelab_model import red
from ratelab_model.config import RouterConfig
from ratelab_model.rbcc import reciprocals

# global block
ID = 0x000
VERSION = 0x004
CONFIG0 = 0x008
CONFIG1 = 0x00C
CTRL = 0x010  # bit 0 time freeze, bit 1 clear counters (pulse), bit 2 clear ABT (pulse)
STATUS = 0x014  # bit 0 ABT clearing
TIME_LO = 0x018  # write: staged; read: now_us[31:0]
TIME_HI = 0x01C  # write: now_us = {value[15:0], staged TIME_LO}
ROUTER_ID = 0x020
IDLE_TIMEOUT_US = 0x024
MIN_RATE = 0x028
CLK_PER_US = 0x02C
LPM_PREFIX = 0x040
LPM_MASK = 0x044
LPM_NEXT_HOP = 0x048
LPM_WRITE = 0x04C  # value: bit 31 valid, low bits entry index
NH_MAC_HI = 0x050
NH_MAC_LO = 0x054
NH_PORT = 0x058
NH_WRITE = 0x05C  # value: next-hop table index
RECIP_LO = 0x060
RECIP_HI = 0x064
RECIP_WRITE = 0x068  # value: k (1 .. ABT slots)

ID_VALUE = 0x524C4142

# per port p: PORT_BASE + p * PORT_STRIDE + offset
PORT_BASE = 0x1000
PORT_STRIDE = 0x200
P_PORT_ID = 0x000
P_MAC_HI = 0x004
P_MAC_LO = 0x008
P_AQM = 0x00C  # bit 0: RED
P_QUEUE_LIMIT = 0x010
P_RATE_LO = 0x014
P_RATE_HI = 0x018
P_CAPACITY = 0x01C
P_WQ16 = 0x020
P_TH_MIN16 = 0x024
P_TH_MAX16 = 0x028
P_SLOPE_LO = 0x02C
P_SLOPE_HI = 0x030
P_S_RECIP_LO = 0x034
P_S_RECIP_HI = 0x038
P_SEED = 0x03C  # write: rng = seed, avg = 0, count = -1
P_DECAY_USED = 0x040
P_DECAY_ADDR = 0x044
P_DECAY_DATA = 0x048  # write: decay[addr] = value, addr += 1
P_QLEN = 0x050
P_RED_AVG = 0x054
P_RED_COUNT = 0x058
P_RED_RNG = 0x05C
P_LAST_Q = 0x060
P_LAST_AVG = 0x064
P_AGG_N = 0x068
P_AGG_N_LIMITED = 0x06C
P_AGG_SUM_LO = 0x070
P_AGG_SUM_HI = 0x074
P_COUNTERS = 0x100  # counter i: low word at +8*i, high word at +8*i+4

COUNTER_NAMES = (
    "packets_in",
    "drop_not_ipv4",
    "drop_malformed",
    "drop_bad_checksum",
    "drop_ttl_expired",
    "drop_no_route",
    "drop_rx_error",
    "packets_out",
    "bytes_out",
    "drop_queue_full",
    "drop_red_early",
    "drop_red_forced",
    "rbcc_packets",
    "abt_hits",
    "abt_updates",
    "abt_inserts",
    "abt_removals",
    "abt_collisions",
)


def port_reg(index: int, offset: int) -> int:
    """Address of a per-port register of hardware port ``index``."""
    return PORT_BASE + index * PORT_STRIDE + offset


def counter_reg(index: int, name: str) -> int:
    return port_reg(index, P_COUNTERS + 8 * COUNTER_NAMES.index(name))


@dataclass(frozen=True)
class Write:
    addr: int
    value: int
    # (table name, index) for the consecutive writes that install one table
    # entry, so that a caller that knows the entry already holds these values
    # (RAM contents survive a reset) may skip them
    table: tuple[str, int] | None = None


def _mac(mac: bytes) -> tuple[int, int]:
    v = int.from_bytes(mac, "big")
    return v >> 32, v & 0xFFFFFFFF


def config_writes(
    config: RouterConfig, port_index: dict[int, int], lpm_entries: int
) -> Iterator[Write]:
    """Register writes that install ``config``; ``port_index`` maps the
    configuration's port numbers to hardware port indices.

    Tables: routes go into the priority TCAM longest prefix first (entry 0 has
    priority); next hops get consecutive table indices; the RED decay table
    is written up to its last nonzero entry (DECAY_USED makes the rest read 0).
    """
    yield Write(ROUTER_ID, config.router_id)
    yield Write(IDLE_TIMEOUT_US, config.idle_timeout_us)
    yield Write(MIN_RATE, config.min_rate)
    hop_index = {h.id: i for i, h in enumerate(config.next_hops)}
    for h in config.next_hops:
        hi, lo = _mac(h.mac)
        yield Write(NH_MAC_HI, hi)
        yield Write(NH_MAC_LO, lo)
        yield Write(NH_PORT, port_index[h.port])
        yield Write(NH_WRITE, hop_index[h.id])
    routes = sorted(config.routes, key=lambda r: -r.length)
    if len(routes) > lpm_entries:
        raise ValueError(f"{len(routes)} routes do not fit {lpm_entries} LPM entries")
    for i in range(lpm_entries):
        if i < len(routes):
            r = routes[i]
            mask = (0xFFFFFFFF << (32 - r.length)) & 0xFFFFFFFF
            yield Write(LPM_PREFIX, r.prefix)
            yield Write(LPM_MASK, mask)
            yield Write(LPM_NEXT_HOP, hop_index[r.next_hop])
            yield Write(LPM_WRITE, (1 << 31) | i)
        else:
            yield Write(LPM_WRITE, i)
    for k, value in enumerate(reciprocals(config.abt_slots)[1:], start=1):
        yield Write(RECIP_LO, value & 0xFFFFFFFF, ("recip_lo", k))
        yield Write(RECIP_HI, value >> 32, ("recip_hi", k))
        yield Write(RECIP_WRITE, k, ("recip", k))
    for p in config.ports:
        idx = port_index[p.port]
        hi, lo = _mac(p.mac)
        yield Write(port_reg(idx, P_PORT_ID), p.port)
        yield Write(port_reg(idx, P_MAC_HI), hi)
        yield Write(port_reg(idx, P_MAC_LO), lo)
        yield Write(port_reg(idx, P_QUEUE_LIMIT), min(p.queue_limit, 0xFFFF))
        yield Write(port_reg(idx, P_RATE_LO), p.rate_bps & 0xFFFFFFFF)
        yield Write(port_reg(idx, P_RATE_HI), p.rate_bps >> 32)
        yield Write(port_reg(idx, P_CAPACITY), p.rbcc_capacity)
        if p.aqm.mode == "red":
            inst = red.install(p.aqm, p.rate_bps)
            decay = red.decay_table(p.aqm.w_q, config.decay_len)
            used = sum(1 for v in decay if v)
            yield Write(port_reg(idx, P_AQM), 1)
            yield Write(port_reg(idx, P_WQ16), inst.wq16)
            yield Write(port_reg(idx, P_TH_MIN16), inst.th_min16)
            yield Write(port_reg(idx, P_TH_MAX16), inst.th_max16)
            yield Write(port_reg(idx, P_SLOPE_LO), inst.slope & 0xFFFFFFFF)
            yield Write(port_reg(idx, P_SLOPE_HI), inst.slope >> 32)
            yield Write(port_reg(idx, P_S_RECIP_LO), inst.s_recip & 0xFFFFFFFF)
            yield Write(port_reg(idx, P_S_RECIP_HI), inst.s_recip >> 32)
            yield Write(port_reg(idx, P_DECAY_USED), used)
            for i, v in enumerate(decay[:used]):
                yield Write(port_reg(idx, P_DECAY_ADDR), i, (f"decay{idx}", i))
                yield Write(port_reg(idx, P_DECAY_DATA), v, (f"decay{idx}", i))
            yield Write(port_reg(idx, P_SEED), inst.seed)
        else:
            yield Write(port_reg(idx, P_AQM), 0)
