"""Full-core testbench: every case in tests/vectors/ against the reference model's
expected frames, per-packet q/avg and counters. The core is configured over
AXI-Lite from each case's control-plane state by the register-map driver (regmap)."""

from __future__ import annotations

import os
import random
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import cocotb
import pytest
from cocotb.triggers import RisingEdge
from cocotbext.axi import (
    AxiLiteBus,
    AxiLiteMaster,
    AxiStreamBus,
    AxiStreamFrame,
    AxiStreamSink,
    AxiStreamSource,
)
from ratelab_model.vectors.schema import VectorCase, load_file

import regmap
from bench_core import run_bench
from hdlsim import HDL_DIR, run_cocotb
from random_case import random_case
from tbutil import random_pause, reset, start_clock

VECTOR_DIR = HDL_DIR.parent / "tests" / "vectors"
PORTS = 4
MODULES = [
    "router_core", "router_parser", "ipv4_check", "lpm_tcam", "egress_admit", "red_admit",
    "rbcc_unit", "pkt_queue", "fifo_fwft", "frame_rewrite", "frame_arbiter", "stat_counters",
    "axil_reg_if",
]  # fmt: skip


class TB:
    def __init__(self, dut) -> None:
        self.dut = dut
        start_clock(dut.clk)
        self.axil = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axil"), dut.clk, dut.rst)
        self.sources = [
            AxiStreamSource(AxiStreamBus.from_prefix(dut, f"s{k:02d}_axis"), dut.clk, dut.rst)
            for k in range(PORTS)
        ]
        self.sinks = [
            AxiStreamSink(AxiStreamBus.from_prefix(dut, f"m{k:02d}_axis"), dut.clk, dut.rst)
            for k in range(PORTS)
        ]
        # table entries known to be in RAM (RAM contents survive a reset)
        self.shadow: dict[tuple[str, int], tuple[int, ...]] = {}
        self.lpm_entries = int(dut.LPM_ENTRIES.value)

    async def write(self, addr: int, value: int) -> None:
        await self.axil.write_dword(addr, value & 0xFFFFFFFF)

    async def read(self, addr: int) -> int:
        return await self.axil.read_dword(addr)

    async def read64(self, addr: int) -> int:
        return await self.read(addr) | (await self.read(addr + 4)) << 32

    async def apply(self, writes: Iterable[regmap.Write]) -> int:
        """Send writes; skip table entries the RAM already holds. Returns writes sent."""
        sent = 0
        group: list[regmap.Write] = []

        async def flush() -> None:
            nonlocal sent
            if not group:
                return
            key = group[0].table
            sig = tuple(w.value for w in group)
            assert key is not None
            if self.shadow.get(key) != sig:
                for w in group:
                    await self.write(w.addr, w.value)
                sent += len(group)
                self.shadow[key] = sig
            group.clear()

        for w in writes:
            if group and w.table != group[0].table:
                await flush()
            if w.table is None:
                await self.write(w.addr, w.value)
                sent += 1
            else:
                group.append(w)
        await flush()
        return sent

    async def reset(self) -> None:
        await reset(self.dut.clk, self.dut.rst)
        assert await self.read(regmap.ID) == regmap.ID_VALUE
        while await self.read(regmap.STATUS) & 1:  # ABT clearing
            pass

    async def set_time(self, t: int) -> None:
        await self.write(regmap.TIME_LO, t & 0xFFFFFFFF)
        await self.write(regmap.TIME_HI, t >> 32)

    async def cycles(self, n: int) -> None:
        for _ in range(n):
            await RisingEdge(self.dut.clk)


async def run_case(tb: TB, path: Path) -> None:
    case, raw = load_file(path)
    await run_vector(tb, path.name, case, raw["expected"])


async def run_vector(tb: TB, name: str, case: VectorCase, expected: dict[str, Any]) -> None:
    """Configure the core for ``case``, send its packets at their times, compare."""
    ports = sorted(p.port for p in case.config.ports)
    assert len(ports) <= PORTS, f"{name}: {len(ports)} ports"
    index = {p: i for i, p in enumerate(ports)}

    await tb.reset()
    await tb.write(regmap.CTRL, 1)  # freeze time: the vector gives it
    n = await tb.apply(regmap.config_writes(case.config, index, tb.lpm_entries))
    tb.dut._log.info("%s: %d register writes", name, n)

    now = None
    for i, (pkt, rec) in enumerate(zip(case.packets, expected["records"], strict=True)):
        if pkt.time_us != now:
            now = pkt.time_us
            await tb.set_time(now)
        await tb.sources[index[pkt.port]].send(AxiStreamFrame(pkt.frame))
        await tb.sources[index[pkt.port]].wait()
        await tb.cycles(80)
        if rec.get("egress_port") is not None:
            e = index[rec["egress_port"]]
            q = await tb.read(regmap.port_reg(e, regmap.P_LAST_Q))
            avg = await tb.read(regmap.port_reg(e, regmap.P_LAST_AVG))
            assert (q, avg) == (rec["q"], rec["avg"]), (
                f"{name} packet {i}: q/avg {(q, avg)} != {(rec['q'], rec['avg'])} "
                f"({rec['decision']})"
            )

    # let every queue drain
    await tb.set_time((now or 0) + 10**9)
    want: dict[int, list[bytes]] = {i: [] for i in range(PORTS)}
    for out in expected["outputs"]:
        want[index[out["port"]]].append(bytes.fromhex(out["frame"]))
    for e, frames in want.items():
        for j, f in enumerate(frames):
            rx = await tb.sinks[e].recv()
            assert bytes(rx.tdata) == f, (
                f"{name}: port {ports[e]} frame {j}\n got {bytes(rx.tdata).hex()}\n exp {f.hex()}"
            )
    await tb.cycles(50)
    for e in range(PORTS):
        assert tb.sinks[e].empty(), f"{name}: extra frames on port {ports[e]}"

    for p, counts in expected["counters"].items():
        e = index[int(p)]
        for cname, value in counts.items():
            if cname == "last_q":
                got = await tb.read(regmap.port_reg(e, regmap.P_LAST_Q))
            elif cname == "last_avg":
                got = await tb.read(regmap.port_reg(e, regmap.P_LAST_AVG))
            else:
                got = await tb.read64(regmap.counter_reg(e, cname))
            assert got == value, f"{name}: port {p} {cname} = {got}, expected {value}"
        assert await tb.read64(regmap.counter_reg(e, "drop_rx_error")) == 0


@cocotb.test()
async def run_test_registers(dut) -> None:
    """Register map: identification, read-back of every RW register, time, clears."""
    if os.environ.get("TB_MODE") != "random":
        return
    tb = TB(dut)
    await tb.reset()
    assert await tb.read(regmap.ID) == regmap.ID_VALUE
    cfg0 = await tb.read(regmap.CONFIG0)
    assert cfg0 & 0xFF == PORTS and (cfg0 >> 8) & 0xFF == len(dut.s00_axis_tkeep)
    assert (cfg0 >> 16) & 0xFF == 10 and (cfg0 >> 24) & 0xFF == 14  # 1024 slots, 16384
    assert await tb.read(regmap.CLK_PER_US) == 250
    # reset values
    assert await tb.read(regmap.IDLE_TIMEOUT_US) == 1_000_000
    assert await tb.read(regmap.MIN_RATE) == 1500
    for k in range(PORTS):
        assert await tb.read(regmap.port_reg(k, regmap.P_PORT_ID)) == k
        assert await tb.read(regmap.port_reg(k, regmap.P_QUEUE_LIMIT)) == 64
    # read-back: (address, mask of implemented bits)
    rw = [(regmap.ROUTER_ID, 0xFFFFFFFF), (regmap.IDLE_TIMEOUT_US, 0xFFFFFFFF)]
    rw += [(regmap.MIN_RATE, 0xFFFFFFFF)]
    widths = {
        regmap.P_PORT_ID: 0xFFFF, regmap.P_MAC_HI: 0xFFFF, regmap.P_MAC_LO: 0xFFFFFFFF,
        regmap.P_AQM: 1, regmap.P_QUEUE_LIMIT: 0xFFFF, regmap.P_RATE_LO: 0xFFFFFFFF,
        regmap.P_RATE_HI: 0xFF, regmap.P_CAPACITY: 0xFFFFFFFF, regmap.P_WQ16: 0x1FFFF,
        regmap.P_TH_MIN16: 0xFFFFFFFF, regmap.P_TH_MAX16: 0xFFFFFFFF,
        regmap.P_SLOPE_LO: 0xFFFFFFFF, regmap.P_SLOPE_HI: 1, regmap.P_S_RECIP_LO: 0xFFFFFFFF,
        regmap.P_S_RECIP_HI: 1, regmap.P_SEED: 0xFFFFFFFF, regmap.P_DECAY_USED: 0x7FFF,
    }  # fmt: skip
    rw += [(regmap.port_reg(k, off), m) for k in range(PORTS) for off, m in widths.items()]
    rng = random.Random(8)
    values = {addr: rng.getrandbits(32) for addr, _ in rw}
    for addr, v in values.items():
        await tb.write(addr, v)
    for addr, mask in rw:
        assert await tb.read(addr) == values[addr] & mask, f"register {addr:#x}"
    # a seed write loads the RED state
    await tb.write(regmap.port_reg(1, regmap.P_SEED), 0x12345678)
    assert await tb.read(regmap.port_reg(1, regmap.P_RED_RNG)) == 0x12345678
    assert await tb.read(regmap.port_reg(1, regmap.P_RED_COUNT)) == 0xFFFFFFFF
    # time: load, freeze, run
    await tb.write(regmap.CTRL, 1)
    await tb.set_time(0x1234_5678_9ABC)
    await tb.cycles(600)
    assert await tb.read(regmap.TIME_LO) == 0x5678_9ABC
    assert await tb.read(regmap.TIME_HI) == 0x1234
    await tb.write(regmap.CTRL, 0)
    await tb.cycles(1000)  # 4 us at 250 cycles per us
    assert 0x5678_9ABC + 4 <= await tb.read(regmap.TIME_LO) <= 0x5678_9ABC + 5
    # counters count, then clear
    await tb.reset()
    await tb.sources[0].send(AxiStreamFrame(bytes(60)))  # not IPv4
    await tb.sources[0].wait()
    await tb.cycles(80)
    assert await tb.read64(regmap.counter_reg(0, "packets_in")) == 1
    assert await tb.read64(regmap.counter_reg(0, "drop_not_ipv4")) == 1
    await tb.write(regmap.CTRL, 2)
    assert await tb.read64(regmap.counter_reg(0, "packets_in")) == 0
    # ABT clear: busy for ABT_SLOTS cycles
    await tb.write(regmap.CTRL, 4)
    assert await tb.read(regmap.STATUS) & 1
    await tb.cycles(1100)
    assert not await tb.read(regmap.STATUS) & 1


@cocotb.test()
async def run_test_random(dut) -> None:
    """Random traffic against the model, with random backpressure on every output."""
    if os.environ.get("TB_MODE") != "random":
        return
    tb = TB(dut)
    for k, sink in enumerate(tb.sinks):
        sink.set_pause_generator(random_pause(100 + k, 0.4))
    for seed in (1, 2):
        case, expected = random_case(seed)
        counts: dict[str, int] = {}
        for rec in expected["records"]:
            counts[rec["decision"]] = counts.get(rec["decision"], 0) + 1
        dut._log.info("random case %d: decisions %s", seed, counts)
        # the mix must reach every kind of outcome
        assert {"forwarded", "no_route", "ttl_expired", "red_early", "queue_full"} <= set(counts)
        await run_vector(tb, case.name, case, expected)


@cocotb.test()
async def run_test_throughput(dut) -> None:
    """Back-to-back minimum-size frames on all ports: no bubbles (bench_core)."""
    if os.environ.get("TB_MODE") != "bench":
        return
    await run_bench(TB(dut))


@cocotb.test()
async def run_test_vectors(dut) -> None:
    if os.environ.get("TB_MODE") != "vectors":
        return
    tb = TB(dut)
    names = os.environ.get("TB_VECTORS", "")
    paths = sorted(VECTOR_DIR.glob("*.json"))
    if names:
        paths = [p for p in paths if p.stem in names.split(",")]
    assert paths, f"no vectors in {VECTOR_DIR}"
    for path in paths:
        await run_case(tb, path)
        dut._log.info("vector %s: ok", path.name)


def _run(data_width: int, vectors: str = "", mode: str = "vectors") -> None:
    env = {"TB_VECTORS": vectors, "TB_MODE": mode}
    if "HDL_BENCH_OUT" in os.environ:
        env["HDL_BENCH_OUT"] = os.environ["HDL_BENCH_OUT"]
    run_cocotb(
        toplevel="test_router_core",
        test_module="test_router_core",
        modules=MODULES,
        extra_sources=[Path(__file__).with_name("test_router_core.v")],
        parameters={"DATA_WIDTH": data_width},
        extra_env=env,
        run_name=f"{mode}{data_width}",
    )


def test_router_core_vectors() -> None:
    """Every vector case, DATA_WIDTH 64."""
    _run(64)


@pytest.mark.parametrize("data_width", [128, 256])
def test_router_core_width_smoke(data_width: int) -> None:
    """Wider buses: the forwarding, options and RBCC cases."""
    _run(data_width, "fwd_ttl_options,rbcc_parse_variants,rbcc_cache")


@pytest.mark.parametrize("data_width", [64, 128, 256])
def test_router_core_throughput(data_width: int) -> None:
    """All ports at once, back-to-back 60-byte frames: no bubbles at DATA_WIDTH 64;
    at 128 and 256 the rate the decision pipeline allows (bench_core.ADMIT_II)."""
    _run(data_width, mode="bench")


def test_router_core_random() -> None:
    """Register map read-back and clears; random traffic vs the model with random
    output backpressure."""
    _run(64, mode="random")
