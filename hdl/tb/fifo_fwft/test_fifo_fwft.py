"""cocotb testbench for fifo_fwft: order, full/empty and count under random push/pop."""

from __future__ import annotations

import random
from collections import deque

import cocotb
import pytest
from cocotb.triggers import FallingEdge, RisingEdge

from hdlsim import run_cocotb
from tbutil import reset, start_clock


@cocotb.test()
async def run_test_fifo(dut) -> None:
    start_clock(dut.clk)
    depth = int(dut.DEPTH.value)
    width = len(dut.s_data)
    dut.s_valid.value = 0
    dut.m_ready.value = 0
    await reset(dut.clk, dut.rst)
    rng = random.Random(9)
    model: deque[int] = deque()
    pushed = popped = fulls = 0
    for cycle in range(4000):
        await FallingEdge(dut.clk)
        # phases that fill the FIFO and phases that drain it
        p_push = 0.8 if (cycle // 500) % 2 == 0 else 0.3
        push = rng.random() < p_push
        pop = rng.random() < 1 - p_push
        val = rng.getrandbits(width)
        dut.s_valid.value = int(push)
        dut.s_data.value = val
        dut.m_ready.value = int(pop)
        assert int(dut.count.value) == len(model)
        assert int(dut.s_ready.value) == (len(model) < depth)
        assert int(dut.m_valid.value) == (len(model) > 0)
        if model:
            assert int(dut.m_data.value) == model[0]
        fulls += len(model) == depth
        # both handshakes are decided by the state before the clock edge
        do_push = push and len(model) < depth
        do_pop = pop and len(model) > 0
        await RisingEdge(dut.clk)
        if do_pop:
            model.popleft()
            popped += 1
        if do_push:
            model.append(val)
            pushed += 1
    # traffic flowed both ways and the FIFO filled up (depth 2 fills most often)
    assert pushed > 800 and popped > 800 and fulls > 10


# depth 2: full and empty in consecutive cycles, the tightest pointer wrap
@pytest.mark.parametrize(("width", "depth"), [(16, 8), pytest.param(8, 2, marks=pytest.mark.sweep)])
def test_fifo_fwft(width: int, depth: int) -> None:
    run_cocotb(
        toplevel="fifo_fwft",
        test_module="test_fifo_fwft",
        modules=["fifo_fwft"],
        parameters={"WIDTH": width, "DEPTH": depth},
    )
