"""cocotb testbench for xorshift32: the sequence matches the Python recurrence."""

from __future__ import annotations

import random

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

from hdlsim import run_cocotb


def xorshift32(x: int) -> int:
    """One step of the 32-bit xorshift generator (the reference recurrence)."""
    x ^= (x << 13) & 0xFFFFFFFF
    x ^= x >> 17
    x ^= (x << 5) & 0xFFFFFFFF
    return x


class TB:
    def __init__(self, dut) -> None:
        self.dut = dut
        cocotb.start_soon(Clock(dut.clk, 4, unit="ns").start())
        dut.load.value = 0
        dut.load_value.value = 0
        dut.step.value = 0

    async def reset(self) -> None:
        self.dut.rst.value = 1
        for _ in range(2):
            await RisingEdge(self.dut.clk)
        self.dut.rst.value = 0
        await RisingEdge(self.dut.clk)


@cocotb.test()
async def run_test_sequence(dut) -> None:
    tb = TB(dut)
    await tb.reset()
    assert int(dut.state_out.value) == int(dut.RESET_SEED.value)

    rng = random.Random(1)
    for seed in (1, 0xDEADBEEF, rng.getrandbits(32) | 1):
        await FallingEdge(dut.clk)
        dut.load.value = 1
        dut.load_value.value = seed
        dut.step.value = 1  # load wins over step
        await FallingEdge(dut.clk)
        dut.load.value = 0
        assert int(dut.state_out.value) == seed
        expect = seed
        for _ in range(200):
            step = rng.random() < 0.6  # idle cycles in between
            dut.step.value = int(step)
            await RisingEdge(dut.clk)
            await ReadOnly()
            if step:
                expect = xorshift32(expect)
            assert int(dut.state_out.value) == expect
            assert int(dut.next_out.value) == xorshift32(expect)
            await FallingEdge(dut.clk)
        dut.step.value = 0


@pytest.mark.parametrize("seed", [1, pytest.param(0x12345678, marks=pytest.mark.sweep)])
def test_xorshift32(seed: int) -> None:
    run_cocotb(
        toplevel="xorshift32",
        test_module="test_xorshift32",
        modules=["xorshift32"],
        parameters={"RESET_SEED": seed},
    )
