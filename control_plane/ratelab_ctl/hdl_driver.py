"""Register-map driver of the Verilog router core (hdl/rtl/router_core.v).

The same router configuration that `ratelab-ctl push` installs on a P4 switch
(the model's `RouterConfig`, read from the YAML file by `load_config`) becomes
register writes over the core's AXI-Lite port. This module is the register map
in code; hdl/README.md ("Register map") describes it in words.

Layers:

- `config_writes(router, params, port_map)`: the writes as data (`Write`),
  after checking that the configuration fits the core (`CoreFitError`, a
  one-line message naming the configuration field). Nothing is written
  unless the whole configuration fits.
- `core_writes(cfg, params, port_map)`: the same for a `ControllerConfig`, with
  the error as a `ConfigError` at the field's position in the file.
- `CoreDriver` (a bus with plain `write(addr, value)` / `read(addr)`, e.g. a
  board's /dev/mem or UIO mapping) and `AsyncCoreDriver` (the same methods
  awaited, e.g. cocotbext-axi's AXI-Lite master in simulation). Both run the
  same sans-IO procedures, so simulation tests what a board runs.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, Protocol, TypeVar

from ratelab_model import red
from ratelab_model.config import RouterConfig
from ratelab_model.rbcc import reciprocals

from ratelab_ctl.configfile import ConfigError, ControllerConfig

# ------------------------------------------------------------------ global registers
ID = 0x000
VERSION = 0x004
CONFIG0 = 0x008  # [7:0] PORTS, [15:8] DATA_WIDTH/8, [23:16] log2 ABT_SLOTS, [31:24] log2 DECAY_LEN
CONFIG1 = 0x00C  # [15:0] LPM_ENTRIES, [31:16] NH_ENTRIES
CTRL = 0x010  # bit 0 freeze time, bit 1 clear counters (pulse), bit 2 clear ABT (pulse)
STATUS = 0x014  # bit 0 ABT clearing
TIME_LO = 0x018  # write: staged; read: now_us[31:0]
TIME_HI = 0x01C  # write: now_us = {value[15:0], staged TIME_LO}; read: now_us[47:32]
ROUTER_ID = 0x020
IDLE_TIMEOUT_US = 0x024
MIN_RATE = 0x028
CLK_PER_US = 0x02C
CONFIG2 = 0x030  # [15:0] PEND_DEPTH
LPM_PREFIX = 0x040
LPM_MASK = 0x044
LPM_NEXT_HOP = 0x048
LPM_WRITE = 0x04C  # value: bit 31 valid, low bits entry index (index 0 has priority)
NH_MAC_HI = 0x050
NH_MAC_LO = 0x054
NH_PORT = 0x058
NH_WRITE = 0x05C  # value: next-hop table index
RECIP_LO = 0x060
RECIP_HI = 0x064
RECIP_WRITE = 0x068  # value: k (1 .. ABT_SLOTS)

ID_VALUE = 0x524C4142  # "RLAB"
VERSION_VALUE = 0x00010001

CTRL_FREEZE_TIME = 1
CTRL_CLEAR_COUNTERS = 2
CTRL_CLEAR_ABT = 4

# ------------------------------------------------------------------ per port p
# address = PORT_BASE + p * PORT_STRIDE + offset, p the hardware port index
PORT_BASE = 0x1000
PORT_STRIDE = 0x200
P_PORT_ID = 0x000  # the configuration's port number (hashed into the ABT slot)
P_MAC_HI = 0x004
P_MAC_LO = 0x008
P_AQM = 0x00C  # bit 0: RED
P_QUEUE_LIMIT = 0x010
P_RATE_LO = 0x014
P_RATE_HI = 0x018  # rate bits 39:32
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

# the core's counters in hardware order: the model's names plus drop_rx_error
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

RATE_BITS = 40
QUEUE_LIMIT_BITS = 16


def port_reg(index: int, offset: int) -> int:
    """Address of a per-port register of hardware port ``index``."""
    return PORT_BASE + index * PORT_STRIDE + offset


def counter_reg(index: int, name: str) -> int:
    """Address of the low word of counter ``name`` of hardware port ``index``."""
    return port_reg(index, P_COUNTERS + 8 * COUNTER_NAMES.index(name))


_GLOBAL_NAMES = {
    globals()[name]: name
    for name in (
        "ID", "VERSION", "CONFIG0", "CONFIG1", "CTRL", "STATUS", "TIME_LO", "TIME_HI",
        "ROUTER_ID", "IDLE_TIMEOUT_US", "MIN_RATE", "CLK_PER_US", "CONFIG2", "LPM_PREFIX",
        "LPM_MASK", "LPM_NEXT_HOP", "LPM_WRITE", "NH_MAC_HI", "NH_MAC_LO", "NH_PORT", "NH_WRITE",
        "RECIP_LO", "RECIP_HI", "RECIP_WRITE",
    )
}  # fmt: skip
_PORT_NAMES = {v: k[2:] for k, v in list(globals().items()) if k.startswith("P_")}


def register_name(addr: int) -> str:
    """The register's name as in hdl/README.md (``P2.QUEUE_LIMIT`` for a port's)."""
    if addr < PORT_BASE:
        return _GLOBAL_NAMES.get(addr, f"{addr:#06x}")
    index, offset = divmod(addr - PORT_BASE, PORT_STRIDE)
    if offset >= P_COUNTERS:
        i, word = divmod(offset - P_COUNTERS, 8)
        if i < len(COUNTER_NAMES) and word in (0, 4):
            return f"P{index}.{COUNTER_NAMES[i]}.{'hi' if word else 'lo'}"
    return f"P{index}.{_PORT_NAMES.get(offset, f'{offset:#05x}')}"


# ------------------------------------------------------------------ the core's parameters


@dataclass(frozen=True)
class CoreParams:
    """The router_core parameters that decide what a configuration may hold
    (defaults: router_core.v's)."""

    ports: int = 4
    data_width: int = 64
    lpm_entries: int = 32
    nh_entries: int = 16
    abt_slots: int = 1024
    decay_len: int = 16384
    pend_depth: int = 512  # router_core.v's default: every preset's queue limit fits

    # Verilog parameter name -> field, for `--param PORTS=8`
    VERILOG_NAMES = {
        "PORTS": "ports",
        "DATA_WIDTH": "data_width",
        "LPM_ENTRIES": "lpm_entries",
        "NH_ENTRIES": "nh_entries",
        "ABT_SLOTS": "abt_slots",
        "DECAY_LEN": "decay_len",
        "PEND_DEPTH": "pend_depth",
    }

    def __post_init__(self) -> None:
        for f in fields(self):
            if getattr(self, f.name) < 1:
                raise ValueError(f"{f.name.upper()} must be at least 1")

    @classmethod
    def from_registers(cls, config0: int, config1: int, config2: int) -> CoreParams:
        """Decode CONFIG0..2 (what the synthesised core says it has)."""
        return cls(
            ports=config0 & 0xFF,
            data_width=((config0 >> 8) & 0xFF) * 8,
            abt_slots=1 << ((config0 >> 16) & 0xFF),
            decay_len=1 << ((config0 >> 24) & 0xFF),
            lpm_entries=config1 & 0xFFFF,
            nh_entries=config1 >> 16,
            pend_depth=config2 & 0xFFFF,
        )

    def with_verilog(self, assignments: Mapping[str, int]) -> CoreParams:
        """Override by Verilog parameter name; ValueError names an unknown one."""
        changes = {}
        for name, value in assignments.items():
            if name not in self.VERILOG_NAMES:
                known = ", ".join(self.VERILOG_NAMES)
                raise ValueError(f"unknown core parameter {name!r} (known: {known})")
            changes[self.VERILOG_NAMES[name]] = value
        return replace(self, **changes)


class CoreFitError(ValueError):
    """The configuration does not fit the core; ``path`` is the configuration
    field (the dotted paths of docs/CONTROLLER.md)."""

    def __init__(self, path: str, message: str) -> None:
        self.path = path
        self.message = message
        super().__init__(f"{path}: {message}")


class CoreError(Exception):
    """The bus does not lead to a router core (wrong ID) or the core misbehaves."""


# ------------------------------------------------------------------ configuration -> writes


@dataclass(frozen=True)
class Write:
    addr: int
    value: int
    # (table, index) on the consecutive writes that install one RAM table entry:
    # RAM keeps its contents over a reset, so a caller that knows the entry
    # already holds these values may skip the group (the testbench does)
    table: tuple[str, int] | None = None


def identity_port_map(router: RouterConfig) -> dict[int, int]:
    """Configuration port N is hardware port N (a board's natural numbering)."""
    return {p.port: p.port for p in router.ports}


def compact_port_map(router: RouterConfig) -> dict[int, int]:
    """The configured ports, in order, on hardware ports 0, 1, ..."""
    return {n: i for i, n in enumerate(sorted(p.port for p in router.ports))}


def check_fits(
    router: RouterConfig, params: CoreParams, port_map: Mapping[int, int] | None = None
) -> dict[int, int]:
    """Raise CoreFitError for the first setting the core cannot hold exactly;
    return the port map (configuration port number -> hardware index)."""
    pmap = dict(identity_port_map(router) if port_map is None else port_map)
    used: dict[int, int] = {}
    for p in router.ports:
        path = f"ports.{p.port}"
        if p.port not in pmap:
            raise CoreFitError(path, "expected a hardware port for it in the port map")
        hw = pmap[p.port]
        if not 0 <= hw < params.ports:
            what = "a port number" if port_map is None else "a hardware port index (port map)"
            raise CoreFitError(
                path, f"expected {what} below the core's PORTS ({params.ports}), got {hw}"
            )
        if hw in used:
            raise CoreFitError(path, f"hardware port {hw} is already port {used[hw]}'s")
        used[hw] = p.port
        if p.queue_limit > params.pend_depth:
            raise CoreFitError(
                f"{path}.queue_limit",
                f"expected at most the core's PEND_DEPTH ({params.pend_depth}) packets, "
                f"got {p.queue_limit}",
            )
        if p.rate_bps >> RATE_BITS:
            raise CoreFitError(
                f"{path}.rate", f"expected below 2^{RATE_BITS} bit/s, got {p.rate_bps}"
            )
    if router.abt_slots != params.abt_slots:
        raise CoreFitError(
            "rbcc.abt_slots",
            f"expected the core's ABT_SLOTS ({params.abt_slots}), got {router.abt_slots}",
        )
    # the model clamps the decay index at decay_len - 1; the core at DECAY_LEN - 1
    if router.decay_len != params.decay_len:
        raise CoreFitError(
            "decay_len",
            f"expected the core's DECAY_LEN ({params.decay_len}), got {router.decay_len}",
        )
    if router.idle_timeout_us >> 32:
        raise CoreFitError(
            "rbcc.idle_timeout",
            f"expected below 2^32 us (the core's register), got {router.idle_timeout_us} us",
        )
    if len(router.next_hops) > params.nh_entries:
        raise CoreFitError(
            "next_hops",
            f"expected at most the core's NH_ENTRIES ({params.nh_entries}) next hops, "
            f"got {len(router.next_hops)}",
        )
    if len(router.routes) > params.lpm_entries:
        raise CoreFitError(
            "routes",
            f"expected at most the core's LPM_ENTRIES ({params.lpm_entries}) routes, "
            f"got {len(router.routes)}",
        )
    return pmap


def _mac(mac: bytes) -> tuple[int, int]:
    v = int.from_bytes(mac, "big")
    return v >> 32, v & 0xFFFFFFFF


def config_writes(
    router: RouterConfig,
    params: CoreParams | None = None,
    port_map: Mapping[int, int] | None = None,
) -> list[Write]:
    """Every register write that installs ``router`` on a core with ``params``
    (after a reset, or over a previous configuration), in a safe order.

    Routes go into the priority TCAM longest prefix first (entry 0 wins) and
    unused entries are invalidated; next hops get consecutive table indices;
    a RED port's decay table is written up to its last nonzero entry and
    DECAY_USED makes the rest read 0; SEED is written last, as it restarts the
    port's RED state. Raises CoreFitError before producing anything.
    """
    params = params or CoreParams()
    pmap = check_fits(router, params, port_map)
    w: list[Write] = [
        Write(ROUTER_ID, router.router_id),
        Write(IDLE_TIMEOUT_US, router.idle_timeout_us),
        Write(MIN_RATE, router.min_rate),
    ]
    hop_index = {h.id: i for i, h in enumerate(router.next_hops)}
    for h in router.next_hops:
        hi, lo = _mac(h.mac)
        w += [
            Write(NH_MAC_HI, hi),
            Write(NH_MAC_LO, lo),
            Write(NH_PORT, pmap[h.port]),
            Write(NH_WRITE, hop_index[h.id]),
        ]
    # stable sort: among equal lengths the file's order (prefixes differ, so
    # at most one of them matches an address)
    routes = sorted(router.routes, key=lambda r: -r.length)
    for i in range(params.lpm_entries):
        if i < len(routes):
            r = routes[i]
            mask = (0xFFFFFFFF << (32 - r.length)) & 0xFFFFFFFF
            w += [
                Write(LPM_PREFIX, r.prefix),
                Write(LPM_MASK, mask),
                Write(LPM_NEXT_HOP, hop_index[r.next_hop]),
                Write(LPM_WRITE, (1 << 31) | i),
            ]
        else:
            w.append(Write(LPM_WRITE, i))
    for k, value in enumerate(reciprocals(router.abt_slots)[1:], start=1):
        w += [
            Write(RECIP_LO, value & 0xFFFFFFFF, ("recip", k)),
            Write(RECIP_HI, value >> 32, ("recip", k)),
            Write(RECIP_WRITE, k, ("recip", k)),
        ]
    for p in router.ports:
        idx = pmap[p.port]
        hi, lo = _mac(p.mac)
        w += [
            Write(port_reg(idx, P_PORT_ID), p.port),
            Write(port_reg(idx, P_MAC_HI), hi),
            Write(port_reg(idx, P_MAC_LO), lo),
            Write(port_reg(idx, P_QUEUE_LIMIT), p.queue_limit),
            Write(port_reg(idx, P_RATE_LO), p.rate_bps & 0xFFFFFFFF),
            Write(port_reg(idx, P_RATE_HI), p.rate_bps >> 32),
            Write(port_reg(idx, P_CAPACITY), p.rbcc_capacity),
        ]
        if p.aqm.mode != "red":
            w.append(Write(port_reg(idx, P_AQM), 0))
            continue
        inst = red.install(p.aqm, p.rate_bps)
        decay = red.decay_table(p.aqm.w_q, router.decay_len)
        used = sum(1 for v in decay if v)  # the table falls monotonically to 0
        w += [
            Write(port_reg(idx, P_AQM), 1),
            Write(port_reg(idx, P_WQ16), inst.wq16),
            Write(port_reg(idx, P_TH_MIN16), inst.th_min16),
            Write(port_reg(idx, P_TH_MAX16), inst.th_max16),
            Write(port_reg(idx, P_SLOPE_LO), inst.slope & 0xFFFFFFFF),
            Write(port_reg(idx, P_SLOPE_HI), inst.slope >> 32),
            Write(port_reg(idx, P_S_RECIP_LO), inst.s_recip & 0xFFFFFFFF),
            Write(port_reg(idx, P_S_RECIP_HI), inst.s_recip >> 32),
            Write(port_reg(idx, P_DECAY_USED), used),
        ]
        for i, v in enumerate(decay[:used]):
            w += [
                Write(port_reg(idx, P_DECAY_ADDR), i, (f"decay{idx}", i)),
                Write(port_reg(idx, P_DECAY_DATA), v, (f"decay{idx}", i)),
            ]
        w.append(Write(port_reg(idx, P_SEED), inst.seed))
    for x in w:  # check_fits and the model's ranges keep every value within 32 bits
        assert 0 <= x.value < 1 << 32, f"{register_name(x.addr)} = {x.value:#x}"
    return w


def core_writes(
    cfg: ControllerConfig,
    params: CoreParams | None = None,
    port_map: Mapping[int, int] | None = None,
) -> list[Write]:
    """`config_writes` for a loaded configuration file: a setting the core cannot
    hold is a ConfigError at its position in the file. The core has one FIFO per
    port (hdl/README.md): strict-priority queues are refused, not dropped."""
    for p in cfg.priority:
        if p.queues > 1:
            raise cfg.error(
                f"ports.{p.port}.priority_queues",
                "the Verilog core has one queue per port, no strict-priority queues",
            )
    try:
        return config_writes(cfg.router, params, port_map)
    except CoreFitError as e:
        raise cfg.error(e.path, e.message) from None


# ------------------------------------------------------------------ procedures (sans-IO)

T = TypeVar("T")
# a procedure yields ("w", addr, value) or ("r", addr, 0); a read is answered
# with the value read (send), a write with None
Op = tuple[str, int, int]
Proc = Generator[Op, int | None, T]


def _read(addr: int) -> Proc[int]:
    value = yield ("r", addr, 0)
    assert value is not None
    return value


def _write(addr: int, value: int) -> Proc[None]:
    yield ("w", addr, value & 0xFFFFFFFF)


def _read64(addr: int) -> Proc[int]:
    lo = yield from _read(addr)
    hi = yield from _read(addr + 4)
    return lo | hi << 32


def read_params_proc() -> Proc[CoreParams]:
    ident = yield from _read(ID)
    if ident != ID_VALUE:
        raise CoreError(f"no ratelab router core on this bus: ID reads {ident:#010x}")
    version = yield from _read(VERSION)
    # same major version, and a minor one with CONFIG2
    if version >> 16 != VERSION_VALUE >> 16 or version < VERSION_VALUE:
        raise CoreError(
            f"register map version {version:#010x}; this driver needs {VERSION_VALUE:#010x} "
            "or a later minor version"
        )
    c0 = yield from _read(CONFIG0)
    c1 = yield from _read(CONFIG1)
    c2 = yield from _read(CONFIG2)
    return CoreParams.from_registers(c0, c1, c2)


def send_proc(writes: Iterable[Write]) -> Proc[int]:
    n = 0
    for x in writes:
        yield from _write(x.addr, x.value)
        n += 1
    return n


def configure_proc(
    config: RouterConfig | ControllerConfig,
    params: CoreParams | None,
    port_map: Mapping[int, int] | None,
    skip: Callable[[Sequence[Write]], bool] | None,
) -> Proc[int]:
    if params is None:
        params = yield from read_params_proc()
    # every check before the first write
    if isinstance(config, ControllerConfig):
        writes = core_writes(config, params, port_map)
    else:
        writes = config_writes(config, params, port_map)
    return (yield from send_proc(_filter(writes, skip)))


def _filter(
    writes: Sequence[Write], skip: Callable[[Sequence[Write]], bool] | None
) -> Iterable[Write]:
    """Drop the table-entry groups ``skip`` says the RAM already holds."""
    if skip is None:
        yield from writes
        return
    i = 0
    while i < len(writes):
        if writes[i].table is None:
            yield writes[i]
            i += 1
            continue
        j = i
        while j < len(writes) and writes[j].table == writes[i].table:
            j += 1
        group = writes[i:j]
        if not skip(group):
            yield from group
        i = j


def read_counters_proc(index: int) -> Proc[dict[str, int]]:
    out: dict[str, int] = {}
    for name in COUNTER_NAMES:
        out[name] = yield from _read64(counter_reg(index, name))
    out["last_q"] = yield from _read(port_reg(index, P_LAST_Q))
    out["last_avg"] = yield from _read(port_reg(index, P_LAST_AVG))
    return out


def set_time_proc(now_us: int) -> Proc[None]:
    if not 0 <= now_us < 1 << 48:
        raise ValueError(f"time {now_us} us does not fit 48 bits")
    yield from _write(TIME_LO, now_us)
    yield from _write(TIME_HI, now_us >> 32)


def wait_ready_proc(max_reads: int) -> Proc[None]:
    for _ in range(max_reads):
        status = yield from _read(STATUS)
        if not status & 1:
            return
    raise CoreError(f"the ABT is still clearing after {max_reads} STATUS reads")


# ------------------------------------------------------------------ drivers


class RegisterBus(Protocol):
    """32-bit registers at byte addresses. For `AsyncCoreDriver` both methods
    return awaitables."""

    def write(self, addr: int, value: int) -> Any: ...

    def read(self, addr: int) -> Any: ...


class CoreDriver:
    """The router core behind a synchronous bus."""

    def __init__(self, bus: RegisterBus) -> None:
        self.bus = bus

    def run(self, proc: Proc[T]) -> T:
        try:
            op = next(proc)
            while True:
                kind, addr, value = op
                if kind == "w":
                    self.bus.write(addr, value)
                    op = proc.send(None)
                else:
                    op = proc.send(int(self.bus.read(addr)))
        except StopIteration as stop:
            return stop.value

    def read_params(self) -> CoreParams:
        return self.run(read_params_proc())

    def configure(
        self,
        config: RouterConfig | ControllerConfig,
        params: CoreParams | None = None,
        port_map: Mapping[int, int] | None = None,
        skip: Callable[[Sequence[Write]], bool] | None = None,
    ) -> int:
        """Install ``config`` (params: read from the core when not given; port
        map: config port N on hardware port N); returns the number of writes
        sent. A setting the core cannot hold raises before any write:
        CoreFitError, or ConfigError at its place in the file for a
        ControllerConfig. ``skip(group)`` may drop table entries known to be
        in RAM already."""
        return self.run(configure_proc(config, params, port_map, skip))

    def read_counters(self, index: int) -> dict[str, int]:
        """Every counter of hardware port ``index`` plus last_q / last_avg."""
        return self.run(read_counters_proc(index))

    def set_time(self, now_us: int) -> None:
        self.run(set_time_proc(now_us))

    def control(
        self, freeze_time: bool, clear_counters: bool = False, clear_abt: bool = False
    ) -> None:
        """Write CTRL: time frozen or running; the clears are one-shot."""
        self.run(_write(CTRL, _ctrl(freeze_time, clear_counters, clear_abt)))

    def wait_ready(self, max_reads: int = 100_000) -> None:
        """Wait until the ABT clear (after reset or CTRL) is done."""
        self.run(wait_ready_proc(max_reads))


class AsyncCoreDriver:
    """The router core behind a bus whose `write`/`read` are awaited (cocotb)."""

    def __init__(self, bus: RegisterBus) -> None:
        self.bus = bus

    async def run(self, proc: Proc[T]) -> T:
        try:
            op = next(proc)
            while True:
                kind, addr, value = op
                if kind == "w":
                    await _maybe_await(self.bus.write(addr, value))
                    op = proc.send(None)
                else:
                    op = proc.send(int(await _maybe_await(self.bus.read(addr))))
        except StopIteration as stop:
            return stop.value

    async def read_params(self) -> CoreParams:
        return await self.run(read_params_proc())

    async def configure(
        self,
        config: RouterConfig | ControllerConfig,
        params: CoreParams | None = None,
        port_map: Mapping[int, int] | None = None,
        skip: Callable[[Sequence[Write]], bool] | None = None,
    ) -> int:
        """See `CoreDriver.configure`."""
        return await self.run(configure_proc(config, params, port_map, skip))

    async def read_counters(self, index: int) -> dict[str, int]:
        return await self.run(read_counters_proc(index))

    async def set_time(self, now_us: int) -> None:
        await self.run(set_time_proc(now_us))

    async def control(
        self, freeze_time: bool, clear_counters: bool = False, clear_abt: bool = False
    ) -> None:
        await self.run(_write(CTRL, _ctrl(freeze_time, clear_counters, clear_abt)))

    async def wait_ready(self, max_reads: int = 100_000) -> None:
        await self.run(wait_ready_proc(max_reads))


def _ctrl(freeze_time: bool, clear_counters: bool, clear_abt: bool) -> int:
    return (
        (CTRL_FREEZE_TIME if freeze_time else 0)
        | (CTRL_CLEAR_COUNTERS if clear_counters else 0)
        | (CTRL_CLEAR_ABT if clear_abt else 0)
    )


async def _maybe_await(x: Awaitable[T] | T) -> T:
    if inspect.isawaitable(x):
        return await x
    return x


__all__ = [
    "AsyncCoreDriver",
    "ConfigError",
    "CoreDriver",
    "CoreError",
    "CoreFitError",
    "CoreParams",
    "RegisterBus",
    "Write",
    "check_fits",
    "compact_port_map",
    "config_writes",
    "core_writes",
    "counter_reg",
    "identity_port_map",
    "port_reg",
    "register_name",
]
