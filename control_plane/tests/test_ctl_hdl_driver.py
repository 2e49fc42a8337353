"""The Verilog core's register-map driver (ratelab_ctl.hdl_driver) against a fake
bus that decodes the writes the way router_core.v does: the tables it builds
must give the model's forwarding, RED and RBCC numbers; a configuration the
core cannot hold must fail naming its field, before the first write."""

from __future__ import annotations

import asyncio
import random
import re
from pathlib import Path

import pytest
from ratelab_ctl import hdl_driver as hd
from ratelab_ctl.cli import main
from ratelab_ctl.configfile import ConfigError, load_config
from ratelab_model import red
from ratelab_model.forwarding import RoutingTable
from ratelab_model.rbcc import reciprocals


class FakeCore:
    """Register file of router_core as seen from the bus: staged table writes,
    the decay address that counts up, the read-only identification."""

    def __init__(self, params: hd.CoreParams | None = None) -> None:
        self.params = params or hd.CoreParams()
        self.regs: dict[int, int] = {}
        self.log: list[tuple[int, int]] = []
        self.lpm: dict[int, tuple[int, int, int] | None] = {}  # index -> (prefix, mask, hop)
        self.nh: dict[int, tuple[int, int]] = {}  # index -> (mac, hw port)
        self.recip: dict[int, int] = {}
        self.decay: dict[int, dict[int, int]] = {}  # hw port -> {addr: value}
        self.counters: dict[tuple[int, str], int] = {}
        self.version = hd.VERSION_VALUE

    def write(self, addr: int, value: int) -> None:
        assert 0 <= value < 1 << 32 and addr % 4 == 0
        self.log.append((addr, value))
        r = self.regs
        if addr == hd.LPM_WRITE:
            entry = (r.get(hd.LPM_PREFIX, 0), r.get(hd.LPM_MASK, 0), r.get(hd.LPM_NEXT_HOP, 0))
            self.lpm[value & 0xFFFF] = entry if value >> 31 else None
        elif addr == hd.NH_WRITE:
            self.nh[value] = (r[hd.NH_MAC_HI] << 32 | r[hd.NH_MAC_LO], r[hd.NH_PORT])
        elif addr == hd.RECIP_WRITE:
            self.recip[value] = r[hd.RECIP_HI] << 32 | r[hd.RECIP_LO]
        elif addr >= hd.PORT_BASE and (addr - hd.PORT_BASE) % hd.PORT_STRIDE == hd.P_DECAY_DATA:
            index = (addr - hd.PORT_BASE) // hd.PORT_STRIDE
            a = hd.port_reg(index, hd.P_DECAY_ADDR)
            self.decay.setdefault(index, {})[r[a]] = value
            r[a] += 1
        else:
            r[addr] = value

    def read(self, addr: int) -> int:
        p = self.params
        fixed = {
            hd.ID: hd.ID_VALUE,
            hd.VERSION: self.version,
            hd.CONFIG0: p.ports
            | (p.data_width // 8) << 8
            | (p.abt_slots.bit_length() - 1) << 16
            | (p.decay_len.bit_length() - 1) << 24,
            hd.CONFIG1: p.lpm_entries | p.nh_entries << 16,
            hd.CONFIG2: p.pend_depth,
        }
        if addr in fixed:
            return fixed[addr]
        for (index, name), value in self.counters.items():
            low = hd.counter_reg(index, name)
            if addr in (low, low + 4):
                return value >> 32 if addr == low + 4 else value & 0xFFFFFFFF
        return self.regs.get(addr, 0)

    def port(self, index: int, offset: int) -> int:
        return self.regs[hd.port_reg(index, offset)]

    def lookup(self, dst: int) -> tuple[int, int] | None:
        """The priority TCAM: the lowest valid matching index wins."""
        for i in sorted(self.lpm):
            e = self.lpm[i]
            if e is not None and dst & e[1] == e[0]:
                return self.nh[e[2]]
        return None


class AsyncBus:
    def __init__(self, core: FakeCore) -> None:
        self.core = core

    async def write(self, addr: int, value: int) -> None:
        await asyncio.sleep(0)
        self.core.write(addr, value)

    async def read(self, addr: int) -> int:
        await asyncio.sleep(0)
        return self.core.read(addr)


def test_example_file_installs_the_models_state(example_path: Path) -> None:
    cfg = load_config(example_path)
    router = cfg.router
    core = FakeCore()
    n = hd.CoreDriver(core).configure(cfg)  # parameters read from CONFIG0..2
    assert n == len(core.log) == len(hd.core_writes(cfg))

    assert core.regs[hd.ROUTER_ID] == router.router_id == 0x0A000001
    assert core.regs[hd.IDLE_TIMEOUT_US] == router.idle_timeout_us
    assert core.regs[hd.MIN_RATE] == router.min_rate
    # forwarding: the TCAM's answer is the model's longest-prefix match for
    # addresses in, around and outside every route
    table = RoutingTable(router.routes, router.next_hops)
    rng = random.Random(1)
    probes = [r.prefix | rng.getrandbits(32 - r.length) for r in router.routes for _ in range(20)]
    probes += [rng.getrandbits(32) for _ in range(200)]
    for dst in probes:
        hop = table.lookup(dst)
        want = None if hop is None else (int.from_bytes(hop.mac, "big"), hop.port)
        assert core.lookup(dst) == want, f"{dst:#010x}"
    assert sum(e is not None for e in core.lpm.values()) == len(router.routes)
    assert len(core.lpm) == hd.CoreParams().lpm_entries  # unused entries invalidated
    # RBCC reciprocals, 1 .. ABT_SLOTS
    assert [core.recip[k] for k in range(1, 1025)] == list(reciprocals(1024)[1:])
    # ports: config port N on hardware port N
    for p in router.ports:
        assert core.port(p.port, hd.P_PORT_ID) == p.port
        mac = core.port(p.port, hd.P_MAC_HI) << 32 | core.port(p.port, hd.P_MAC_LO)
        assert mac.to_bytes(6, "big") == p.mac
        assert core.port(p.port, hd.P_QUEUE_LIMIT) == p.queue_limit
        rate = core.port(p.port, hd.P_RATE_HI) << 32 | core.port(p.port, hd.P_RATE_LO)
        assert rate == p.rate_bps
        assert core.port(p.port, hd.P_CAPACITY) == p.rbcc_capacity
        assert core.port(p.port, hd.P_AQM) == (p.aqm.mode == "red")
    # the RED port (3, redok-hspa, seed 7): installed integers and decay table
    p3 = router.port(3)
    inst = red.install(p3.aqm, p3.rate_bps)
    assert core.port(3, hd.P_WQ16) == inst.wq16
    assert core.port(3, hd.P_TH_MIN16) == inst.th_min16
    assert core.port(3, hd.P_TH_MAX16) == inst.th_max16
    assert core.port(3, hd.P_SLOPE_HI) << 32 | core.port(3, hd.P_SLOPE_LO) == inst.slope
    assert core.port(3, hd.P_S_RECIP_HI) << 32 | core.port(3, hd.P_S_RECIP_LO) == inst.s_recip
    assert core.port(3, hd.P_SEED) == inst.seed == 7
    decay = red.decay_table(p3.aqm.w_q, router.decay_len)
    used = core.port(3, hd.P_DECAY_USED)
    assert 0 < used < len(decay) and decay[used - 1] > 0 and not any(decay[used:])
    assert core.decay[3] == dict(enumerate(decay[:used]))
    # SEED restarts the RED state: it comes after every other RED register
    port3 = [a for a, _ in core.log if hd.port_reg(3, 0) <= a < hd.port_reg(4, 0)]
    assert port3[-1] == hd.port_reg(3, hd.P_SEED)


def test_routes_longest_prefix_first_in_the_tcam() -> None:
    cfg = load_config(
        Path(__file__).parents[1] / "examples" / "router.yaml",
        ["routes.10.0.0.0/8=sender2", "routes.0.0.0.0/0=sender1", "routes.10.0.3.128/25=sender1"],
    )
    core = FakeCore()
    hd.CoreDriver(core).configure(cfg)
    lengths = [bin(e[1]).count("1") for _, e in sorted(core.lpm.items()) if e is not None]
    assert lengths == sorted(lengths, reverse=True) == [25, 24, 24, 24, 8, 0]
    table = RoutingTable(cfg.router.routes, cfg.router.next_hops)
    for dst in (0x0A000381, 0x0A00037F, 0x0A090000, 0x0B000000, 0x0A000101):
        hop = table.lookup(dst)
        assert hop is not None and core.lookup(dst) == (int.from_bytes(hop.mac, "big"), hop.port)


BAD = [
    # (override or core parameter, field path, message fragment)
    ({"PORTS": 3}, "ports.3", "expected a port number below the core's PORTS (3), got 3"),
    ({"LPM_ENTRIES": 2}, "routes", "LPM_ENTRIES (2) routes, got 3"),
    ({"NH_ENTRIES": 2}, "next_hops", "NH_ENTRIES (2) next hops, got 3"),
    ({"PEND_DEPTH": 64}, "ports.3.queue_limit", "PEND_DEPTH (64) packets, got 68"),
    ({"ABT_SLOTS": 512}, "rbcc.abt_slots", "ABT_SLOTS (512), got 1024"),
    ({"DECAY_LEN": 8192}, "decay_len", "DECAY_LEN (8192), got 16384"),
    (
        ["ports.2.rate=2000gbit", "ports.2.rbcc_capacity=1000"],
        "ports.2.rate",
        "expected below 2^40 bit/s, got 2000000000000",
    ),
    (["rbcc.idle_timeout=5000s"], "rbcc.idle_timeout", "expected below 2^32 us"),
]


@pytest.mark.parametrize(("change", "path", "fragment"), BAD)
def test_what_the_core_cannot_hold_fails_before_any_write(
    example_path: Path, change: dict[str, int] | list[str], path: str, fragment: str
) -> None:
    overrides = change if isinstance(change, list) else []
    params = hd.CoreParams().with_verilog(change) if isinstance(change, dict) else hd.CoreParams()
    cfg = load_config(example_path, overrides)
    core = FakeCore(params)
    with pytest.raises(ConfigError) as info:
        hd.CoreDriver(core).configure(cfg)
    assert core.log == []
    msg = str(info.value)
    assert "\n" not in msg and f"error: {path}: " in msg and fragment in msg, msg
    # without the file: the same field path, as CoreFitError
    with pytest.raises(hd.CoreFitError) as bare:
        hd.config_writes(cfg.router, params)
    assert bare.value.path == path and fragment in str(bare.value)


def test_port_map(example_path: Path) -> None:
    router = load_config(example_path).router
    compact = hd.compact_port_map(router)
    assert compact == {1: 0, 2: 1, 3: 2}
    core = FakeCore(hd.CoreParams(ports=3))
    hd.CoreDriver(core).configure(router, port_map=compact)
    assert [core.port(i, hd.P_PORT_ID) for i in range(3)] == [1, 2, 3]
    assert sorted(port for _, port in core.nh.values()) == [0, 1, 2]
    for pmap, fragment in (
        ({1: 0, 2: 1}, "ports.3: expected a hardware port for it in the port map"),
        ({1: 0, 2: 1, 3: 1}, "ports.3: hardware port 1 is already port 2's"),
        ({1: 0, 2: 1, 3: 3}, "ports.3: expected a hardware port index (port map) below"),
    ):
        with pytest.raises(hd.CoreFitError, match=re.escape(fragment)):
            hd.config_writes(router, hd.CoreParams(ports=3), pmap)


def test_async_driver_sends_what_the_sync_one_sends(example_path: Path) -> None:
    cfg = load_config(example_path)
    sync_core, async_core = FakeCore(), FakeCore()
    hd.CoreDriver(sync_core).configure(cfg)
    driver = hd.AsyncCoreDriver(AsyncBus(async_core))

    async def session() -> tuple[hd.CoreParams, int]:
        params = await driver.read_params()
        await driver.control(freeze_time=True)
        await driver.set_time(0x1234_5678_9ABC)
        return params, await driver.configure(cfg)

    params, n = asyncio.run(session())
    assert params == hd.CoreParams()
    assert async_core.log[:3] == [(hd.CTRL, 1), (hd.TIME_LO, 0x5678_9ABC), (hd.TIME_HI, 0x1234)]
    assert async_core.log[3:] == sync_core.log and n == len(sync_core.log)


def test_skip_drops_whole_table_entries(example_path: Path) -> None:
    router = load_config(example_path).router
    core = FakeCore()
    seen: list[tuple[str, int] | None] = []

    def skip(group: list[hd.Write]) -> bool:
        seen.append(group[0].table)
        assert len({w.table for w in group}) == 1
        return group[0].table is not None and group[0].table[0] == "recip"

    hd.CoreDriver(core).configure(router, skip=skip)
    assert core.recip == {} and core.decay[3]  # reciprocals skipped, decay written
    assert seen.count(("recip", 1)) == 1 and len(seen) == 1024 + len(core.decay[3])


def test_read_params_checks_the_core() -> None:
    core = FakeCore(hd.CoreParams(ports=8, data_width=256, lpm_entries=64, pend_depth=512))
    assert hd.CoreDriver(core).read_params() == core.params
    core.version = 0x0001_0000  # no CONFIG2 yet
    with pytest.raises(hd.CoreError, match="version 0x00010000"):
        hd.CoreDriver(core).read_params()
    with pytest.raises(hd.CoreError, match="ID reads 0x00000000"):
        hd.CoreDriver(FakeBlank()).read_params()


class FakeBlank:
    def write(self, addr: int, value: int) -> None:
        raise AssertionError("no write expected")

    def read(self, addr: int) -> int:
        return 0


def test_read_counters_and_wait_ready() -> None:
    core = FakeCore()
    core.counters[(2, "bytes_out")] = 0x1_0000_0005
    core.counters[(2, "drop_rx_error")] = 3
    core.regs[hd.port_reg(2, hd.P_LAST_Q)] = 7
    got = hd.CoreDriver(core).read_counters(2)
    assert list(got) == [*hd.COUNTER_NAMES, "last_q", "last_avg"]
    assert (got["bytes_out"], got["drop_rx_error"], got["last_q"]) == (0x1_0000_0005, 3, 7)
    assert got["packets_in"] == 0
    core.regs[hd.STATUS] = 1  # the ABT never finishes clearing
    with pytest.raises(hd.CoreError, match="still clearing after 5"):
        hd.CoreDriver(core).wait_ready(max_reads=5)


def test_register_names() -> None:
    assert hd.register_name(hd.LPM_WRITE) == "LPM_WRITE"
    assert hd.register_name(hd.port_reg(2, hd.P_QUEUE_LIMIT)) == "P2.QUEUE_LIMIT"
    assert hd.register_name(hd.counter_reg(1, "abt_hits") + 4) == "P1.abt_hits.hi"


def test_cli_hdl_regs(capsys: pytest.CaptureFixture[str], example_path: Path) -> None:
    assert main(["hdl-regs", str(example_path)]) == 0
    out, err = capsys.readouterr()
    pairs = [tuple(int(x, 16) for x in line.split()[:2]) for line in out.splitlines()]
    want = [(w.addr, w.value) for w in hd.core_writes(load_config(example_path))]
    assert (err, pairs) == ("", want)
    assert out.splitlines()[0] == "0x0020 0x0a000001  # ROUTER_ID"

    assert main(["hdl-regs", str(example_path), "--param", "LPM_ENTRIES=2"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        f"{example_path}:44:1: error: routes: "
        "expected at most the core's LPM_ENTRIES (2) routes, got 3\n"
    )
    assert main(["hdl-regs", str(example_path), "--port-map", "1=0,2=1,3=2"]) == 0
    out, _ = capsys.readouterr()
    assert "0x1000 0x00000001  # P0.PORT_ID" in out.splitlines()
    for bad in (["--param", "PORTS"], ["--param", "WIDTH=2"], ["--port-map", "x=1"]):
        assert main(["hdl-regs", str(example_path), *bad]) == 2
        out, err = capsys.readouterr()
        assert out == "" and err.startswith("ratelab-ctl: error: ") and err.count("\n") == 1
