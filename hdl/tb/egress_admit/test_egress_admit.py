"""cocotb testbench for egress_admit: decisions, q, avg and the release (dequeue)
schedule against the reference model's egress port (drain schedule + RED)."""

from __future__ import annotations

import random
from decimal import Decimal

import cocotb
import pytest
from cocotb.triggers import FallingEdge, RisingEdge
from ratelab_model.config import AqmConfig, NextHop, PortConfig, RouterConfig
from ratelab_model.router import _EgressPort

from hdlsim import run_cocotb
from tbutil import reset, start_clock

CAUSES = {0: "forwarded", 1: "queue_full", 2: "red_early", 3: "red_forced"}

# (rate_bps, aqm, queue_limit)
CASES = [
    (1_000_000, AqmConfig("red", Decimal("0.2"), Decimal("0.5"), 2, 12, seed=7), 20),
    (160_000, AqmConfig("fifo"), 6),
    (0, AqmConfig("red", Decimal("0.02"), Decimal("0.65"), 3, 50, seed=0), 100),
    (0, AqmConfig("fifo"), 3),
    (50_000_000, AqmConfig("red", Decimal("0.002"), Decimal("0.1"), 1, 4, seed=99), 300),
]


@cocotb.test()
async def run_test_egress(dut) -> None:
    start_clock(dut.clk)
    decay_len = int(dut.DECAY_LEN.value)
    for name in ("cfg_load", "decay_wr_en", "s_valid", "now_us"):
        getattr(dut, name).value = 0
    await reset(dut.clk, dut.rst)
    rng = random.Random(11)
    releases = {"n": 0}

    async def count_releases() -> None:
        while True:
            await RisingEdge(dut.clk)
            releases["n"] += int(dut.release_pkt.value)

    cocotb.start_soon(count_releases())
    totals: dict[str, int] = {}
    for case, (rate, aqm, limit) in enumerate(CASES):
        await reset(dut.clk, dut.rst)
        releases["n"] = 0
        port = PortConfig(1, bytes(6), rate, limit, 1000, aqm)
        config = RouterConfig(1, (port,), (NextHop(1, 1, bytes(6)),), (), decay_len=decay_len)
        eg = _EgressPort(config, 1)
        dut.cfg_rate_bps.value = rate
        dut.cfg_queue_limit.value = limit
        dut.cfg_red_enable.value = int(eg.red is not None)
        if eg.red is not None:
            dut.cfg_wq16.value = eg.red.wq16
            dut.cfg_th_min16.value = eg.red.th_min16
            dut.cfg_th_max16.value = eg.red.th_max16
            dut.cfg_slope.value = eg.red.slope
            dut.cfg_s_recip.value = eg.red.s_recip
            dut.cfg_seed.value = eg.red.seed
            used = sum(1 for v in eg.decay if v)
            dut.cfg_decay_used.value = used
            for i, v in enumerate(eg.decay[:used]):
                dut.decay_wr_en.value = 1
                dut.decay_wr_addr.value = i
                dut.decay_wr_data.value = v
                await RisingEdge(dut.clk)
            dut.decay_wr_en.value = 0
            dut.cfg_load.value = 1
            await RisingEdge(dut.clk)
            dut.cfg_load.value = 0
        now = 0
        t_deqs: list[int] = []
        for i in range(250):
            # bursts (same microsecond), short and long gaps
            now += rng.choice([0, 0, 0, 1, 3, 20, 100, 500, 2000, 10**6])
            length = rng.choice([60, 64, 100, 1500, rng.randrange(60, 1515)])
            await FallingEdge(dut.clk)
            dut.now_us.value = now
            dut.s_valid.value = 1
            dut.s_len.value = length
            dut.s_tag.value = i & 1
            while True:
                await RisingEdge(dut.clk)
                if int(dut.s_ready.value):
                    break
            await FallingEdge(dut.clk)
            dut.s_valid.value = 0
            # the model: admission, then the drain schedule for admitted packets
            adm = eg.admission(now)  # (q, decision, ...)
            q, decision = adm[0], adm[1]
            exp_avg = eg.red_state.avg
            if decision == "forwarded":
                t_deqs.append(eg.drain.admit(now, length))
            while not int(dut.m_valid.value):
                await FallingEdge(dut.clk)
            ctx = f"case {case} packet {i} t={now} len={length}"
            assert CAUSES[int(dut.m_cause.value)] == decision, (
                f"{ctx}: {CAUSES[int(dut.m_cause.value)]} != {decision} (q={q})"
            )
            assert int(dut.m_qlen.value) == q, f"{ctx}: q {int(dut.m_qlen.value)} != {q}"
            assert int(dut.m_avg.value) == exp_avg, ctx
            assert int(dut.m_tag.value) == i & 1
            totals[decision] = totals.get(decision, 0) + 1
            await RisingEdge(dut.clk)
            await FallingEdge(dut.clk)
            assert releases["n"] == sum(1 for t in t_deqs if t <= now), f"{ctx}: releases"
        # let everything drain
        await FallingEdge(dut.clk)
        dut.now_us.value = now + 10**9
        for _ in range(len(t_deqs) + 60):
            await RisingEdge(dut.clk)
        assert releases["n"] == len(t_deqs)
        assert int(dut.stat_qlen.value) == 0
    dut._log.info("decisions %s", totals)
    assert len(totals) == 4, totals


# DECAY_LEN 256: more idle periods clamp at the table's last (nonzero) entry;
# PEND_DEPTH 64: a shallow pending FIFO (the queues of CASES stay below it)
@pytest.mark.parametrize(
    ("decay_len", "pend_depth"), [(1024, 256), pytest.param(256, 64, marks=pytest.mark.sweep)]
)
def test_egress_admit(decay_len: int, pend_depth: int) -> None:
    run_cocotb(
        toplevel="egress_admit",
        test_module="test_egress_admit",
        modules=["egress_admit", "red_admit"],
        parameters={"DECAY_LEN": decay_len, "PEND_DEPTH": pend_depth},
    )
