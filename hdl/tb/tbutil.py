"""Helpers shared by the cocotb testbenches: clock/reset, backpressure and idle patterns."""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator

from cocotb.clock import Clock
from cocotb.triggers import RisingEdge

CLK_PERIOD_NS = 4  # 250 MHz


def start_clock(clk) -> None:
    """Start a 250 MHz clock on ``clk``."""
    import cocotb

    cocotb.start_soon(Clock(clk, CLK_PERIOD_NS, unit="ns").start())


async def reset(clk, rst, cycles: int = 4) -> None:
    """Synchronous active-high reset for ``cycles`` clock cycles."""
    rst.value = 1
    for _ in range(cycles):
        await RisingEdge(clk)
    rst.value = 0
    await RisingEdge(clk)


def random_pause(seed: int, p: float = 0.3) -> Iterator[int]:
    """Endless pause pattern for cocotbext-axi (1 = pause this cycle), probability ``p``."""
    rng = random.Random(seed)
    while True:
        yield int(rng.random() < p)


def no_pause() -> Iterator[int]:
    return itertools.repeat(0)


async def drive_ready(clk, ready, pattern: Iterator[int]) -> None:
    """Drive a ready input from a pause pattern (1 = not ready) every clock."""
    while True:
        ready.value = 1 - next(pattern)
        await RisingEdge(clk)
