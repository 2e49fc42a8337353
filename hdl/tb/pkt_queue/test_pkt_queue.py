"""cocotb testbench for pkt_queue: frames in = frames out under random backpressure,
and the packet count (qlen, m_sop, went_empty) follows admissions and dequeues."""

from __future__ import annotations

import os
import random

import cocotb
import pytest
from cocotb.triggers import FallingEdge, RisingEdge
from cocotbext.axi import AxiStreamBus, AxiStreamFrame, AxiStreamSink, AxiStreamSource

from hdlsim import run_cocotb
from tbutil import no_pause, random_pause, reset, start_clock


@cocotb.test()
async def run_test_queue(dut) -> None:
    start_clock(dut.clk)
    dut.admit.value = 0
    source = AxiStreamSource(AxiStreamBus.from_prefix(dut, "s_axis"), dut.clk, dut.rst)
    sink = AxiStreamSink(AxiStreamBus.from_prefix(dut, "m_axis"), dut.clk, dut.rst)
    await reset(dut.clk, dut.rst)
    seed = int(os.environ.get("TB_SEED", "1"))
    rng = random.Random(seed)
    kw = len(dut.s_axis_tkeep)

    state = {"q": 0, "first": True, "sops": 0, "empties": 0, "max_q": 0}

    async def check_qlen() -> None:
        # every cycle, mid-cycle (inputs stable): expected q from admit pulses and
        # first beats taken on m_axis up to the previous clock edge
        while True:
            await FallingEdge(dut.clk)
            assert int(dut.qlen.value) == state["q"], "qlen"
            sop = 0
            if int(dut.m_axis_tvalid.value) and int(dut.m_axis_tready.value):
                sop = int(state["first"])
                state["first"] = bool(int(dut.m_axis_tlast.value))
            admit = int(dut.admit.value)
            assert int(dut.m_sop.value) == sop
            assert int(dut.went_empty.value) == int(sop and not admit and state["q"] == 1)
            state["sops"] += sop
            state["empties"] += int(dut.went_empty.value)
            state["q"] += admit - sop
            state["max_q"] = max(state["max_q"], state["q"])

    cocotb.start_soon(check_qlen())

    for phase in range(3):
        # phase 0: no pauses; 1: random both sides; 2: sink stalled first (fills the RAM)
        source.set_pause_generator(random_pause(seed + phase) if phase else no_pause())
        sink.set_pause_generator(random_pause(seed + 10 + phase, 0.5) if phase else no_pause())
        if phase == 2:
            sink.pause = True
        frames = []
        for _ in range(60):
            n = rng.choice([1, kw - 1, kw, kw + 1, 60, 64, rng.randrange(1, 300)])
            frames.append(bytes(rng.getrandbits(8) for _ in range(max(1, n))))
        for i, f in enumerate(frames):
            dut.admit.value = 1
            await RisingEdge(dut.clk)
            dut.admit.value = 0
            await source.send(AxiStreamFrame(f, tuser=i & 1))
            if phase == 2 and i == 30:
                await source.wait()
                for _ in range(50):
                    await RisingEdge(dut.clk)
                sink.pause = False
        for i, f in enumerate(frames):
            rx = await sink.recv()
            assert bytes(rx.tdata) == f, f"phase {phase} frame {i}"
            assert rx.tuser == (i & 1) or (isinstance(rx.tuser, list) and rx.tuser[-1] == (i & 1))
        for _ in range(5):
            await RisingEdge(dut.clk)
        assert sink.empty()
        assert state["q"] == 0
    assert state["sops"] == 180 and state["empties"] > 0 and state["max_q"] > 10


@pytest.mark.parametrize(
    ("data_width", "depth"), [(64, 64), pytest.param(256, 16, marks=pytest.mark.sweep)]
)
def test_pkt_queue(data_width: int, depth: int) -> None:
    run_cocotb(
        toplevel="pkt_queue",
        test_module="test_pkt_queue",
        modules=["pkt_queue"],
        parameters={"DATA_WIDTH": data_width, "DEPTH": depth},
        extra_env={"TB_SEED": str(data_width)},
    )
