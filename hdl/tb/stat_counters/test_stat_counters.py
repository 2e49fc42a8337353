"""cocotb testbench for stat_counters: random simultaneous increments, reads, clear, wrap."""

from __future__ import annotations

import random

import cocotb
import pytest
from cocotb.triggers import FallingEdge, RisingEdge

from hdlsim import run_cocotb
from tbutil import reset, start_clock


@cocotb.test()
async def run_test_counters(dut) -> None:
    start_clock(dut.clk)
    n = int(dut.COUNTERS.value)
    w = int(dut.WIDTH.value)
    iw = int(dut.INC_WIDTH.value)
    dut.inc.value = 0
    dut.clear.value = 0
    dut.rd_en.value = 0
    dut.rd_index.value = 0
    await reset(dut.clk, dut.rst)
    rng = random.Random(5)
    model = [0] * n
    reads = 0
    for cycle in range(3000):
        await FallingEdge(dut.clk)
        incs = [rng.getrandbits(iw) if rng.random() < 0.5 else 0 for _ in range(n)]
        if cycle < 100:
            incs = [(1 << iw) - 1] * n  # drive towards wrap quickly
        dut.inc.value = sum(v << (i * iw) for i, v in enumerate(incs))
        clear = cycle in (1500, 2600)
        dut.clear.value = int(clear)
        rd = rng.random() < 0.5
        idx = rng.randrange(n + 2)  # out-of-range indices read 0
        dut.rd_en.value = int(rd)
        dut.rd_index.value = idx
        before = model[idx] if idx < n else 0
        await RisingEdge(dut.clk)
        model = [0] * n if clear else [(m + v) % (1 << w) for m, v in zip(model, incs, strict=True)]
        await FallingEdge(dut.clk)
        dut.rd_en.value = 0
        dut.inc.value = 0
        dut.clear.value = 0
        if rd:
            assert int(dut.rd_valid.value) == 1
            assert int(dut.rd_data.value) == before, f"cycle {cycle} counter {idx}"
            reads += 1
        else:
            assert int(dut.rd_valid.value) == 0
        await RisingEdge(dut.clk)
    assert reads > 1000


# a small bank that wraps often, and router_core's own bank (18 x 64 bits)
@pytest.mark.parametrize(
    ("counters", "width", "inc_width"),
    [(6, 16, 11), pytest.param(18, 64, 16, marks=pytest.mark.sweep)],
)
def test_stat_counters(counters: int, width: int, inc_width: int) -> None:
    run_cocotb(
        toplevel="stat_counters",
        test_module="test_stat_counters",
        modules=["stat_counters"],
        parameters={"COUNTERS": counters, "WIDTH": width, "INC_WIDTH": inc_width},
    )
