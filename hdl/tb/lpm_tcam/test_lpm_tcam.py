"""cocotb testbench for lpm_tcam: random route sets against the reference model's LPM."""

from __future__ import annotations

import random

import cocotb
import pytest
from cocotb.triggers import ReadOnly, RisingEdge
from ratelab_model.config import NextHop, Route, prefix_mask
from ratelab_model.forwarding import RoutingTable

from hdlsim import run_cocotb
from tbutil import reset, start_clock


def random_routes(rng: random.Random, n: int, n_hops: int) -> list[Route]:
    seen: set[tuple[int, int]] = set()
    routes = []
    while len(routes) < n:
        length = rng.choice([4, 8, 16, 24, 32, rng.randrange(1, 33)])
        # few distinct high bits so that prefixes nest
        prefix = (rng.choice([0x0A000000, 0xC0A80000, rng.getrandbits(32)])
                  | rng.getrandbits(16)) & prefix_mask(length)  # fmt: skip
        if (prefix, length) in seen:
            continue
        seen.add((prefix, length))
        routes.append(Route(prefix=prefix, length=length, next_hop=rng.randrange(n_hops)))
    return routes


async def install(dut, routes: list[Route], entries: int) -> None:
    """Write routes longest prefix first (the driver's order), clear the rest."""
    ordered = sorted(routes, key=lambda r: -r.length)
    for i in range(entries):
        dut.wr_en.value = 1
        dut.wr_addr.value = i
        if i < len(ordered):
            r = ordered[i]
            dut.wr_valid.value = 1
            # host bits set on purpose: the TCAM must mask them
            dut.wr_prefix.value = r.prefix | (~prefix_mask(r.length) & 0xFFFFFFFF & 0x5A5A5A5A)
            dut.wr_mask.value = prefix_mask(r.length)
            dut.wr_data.value = r.next_hop
        else:
            dut.wr_valid.value = 0
        await RisingEdge(dut.clk)
    dut.wr_en.value = 0


@cocotb.test()
async def run_test_lookups(dut) -> None:
    start_clock(dut.clk)
    entries = int(dut.ENTRIES.value)
    dut.s_valid.value = 0
    dut.wr_en.value = 0
    await reset(dut.clk, dut.rst)
    rng = random.Random(entries)
    n_hops = 1 << int(dut.DATA_WIDTH.value)
    hops = tuple(NextHop(id=i, port=i % 4, mac=bytes(6)) for i in range(n_hops))

    results: list[tuple[int, int, int]] = []

    async def monitor() -> None:
        while True:
            await RisingEdge(dut.clk)
            await ReadOnly()
            if int(dut.m_valid.value):
                results.append((int(dut.m_tag.value), int(dut.m_hit.value), int(dut.m_data.value)))

    cocotb.start_soon(monitor())
    hits = misses = 0
    for n_routes in (entries, entries // 2, 1):
        routes = random_routes(rng, n_routes, n_hops)
        if n_routes == 1:
            routes = [Route(prefix=0, length=0, next_hop=3)]  # default route only
        await install(dut, routes, entries)
        table = RoutingTable(tuple(routes), hops)
        keys = [
            (rng.choice(routes).prefix | rng.getrandbits(8)) if rng.random() < 0.7
            else rng.getrandbits(32)
            for _ in range(400)
        ]  # fmt: skip
        results.clear()
        tag_width = int(dut.TAG_WIDTH.value)
        for i, k in enumerate(keys):
            while rng.random() < 0.2:
                dut.s_valid.value = 0
                await RisingEdge(dut.clk)
            dut.s_valid.value = 1
            dut.s_key.value = k
            dut.s_tag.value = i % (1 << tag_width)
            await RisingEdge(dut.clk)
        dut.s_valid.value = 0
        for _ in range(4):
            await RisingEdge(dut.clk)
        assert len(results) == len(keys)
        for i, (k, (tag, hit, data)) in enumerate(zip(keys, results, strict=True)):
            assert tag == i % (1 << tag_width)
            hop = table.lookup(k)
            assert hit == (hop is not None), f"key {k:#010x}"
            if hop is not None:
                assert data == hop.id, f"key {k:#010x}: {data} != {hop.id}"
                hits += 1
            else:
                misses += 1
    assert hits > 0 and misses > 0


@pytest.mark.parametrize("entries", [16, pytest.param(64, marks=pytest.mark.sweep)])
def test_lpm_tcam(entries: int) -> None:
    run_cocotb(
        toplevel="lpm_tcam",
        test_module="test_lpm_tcam",
        modules=["lpm_tcam"],
        parameters={"ENTRIES": entries, "DATA_WIDTH": 4},
    )
