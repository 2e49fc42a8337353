"""cocotb testbench for fifo_fwft: order, full/empty and count under random push/pop."""

from __future__ import annotations

import random
from collections import deque

import cocotb
from cocotb.triggers import FallingEdge, RisingEdge

from hdlsim import run_cocotb
from tbutil import reset, start_clock


@cocotb.test()
async def run_test_fifo(dut) -> None:
    start_clock(dut.clk)
    depth = int(dut.DEPTH.value)
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
        val = rng.getrandbits(16)
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
    assert pushed > 1000 and popped > 1000 and fulls > 10


def test_fifo_fwft() -> None:
    run_cocotb(
        toplevel="fifo_fwft",
        test_module="test_fifo_fwft",
        modules=["fifo_fwft"],
        parameters={"WIDTH": 16, "DEPTH": 8},
    )
