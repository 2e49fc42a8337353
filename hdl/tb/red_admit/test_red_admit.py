"""cocotb testbench for red_admit: decisions and avg bit-exact against the reference
model (ratelab_model.red) for random queue-length sequences and parameter sets."""

from __future__ import annotations

import random
from decimal import Decimal

import cocotb
import pytest
from cocotb.triggers import ReadOnly, RisingEdge
from ratelab_model import red
from ratelab_model.config import AqmConfig

from hdlsim import run_cocotb
from tbutil import reset, start_clock

# RED rules exercised (the model's RedBranch values), summed over the run
branches: dict[str, int] = {}

CAUSES = {0: "admit", 1: "queue_full", 2: "red_early", 3: "red_forced"}

# (w_q, max_p, th_min, th_max, queue_limit, s_us): the AQM.md presets and some extremes
PARAMS = [
    ("0.2", "0.65", 3, 40, 50, 75),  # redok-edge
    ("0.02", "0.65", 3, 50, 100, 6),  # redok-hspa
    ("0.002", "0.1", 5, 20, 48, 12),  # red-hspa
    ("0.5", "1", 2, 6, 8, 1),  # steep, forced drops
    ("0.001", "0.1", 5, 125, 400, 1),  # redok-lte: the decay table runs out
    ("0.3", "1", 4, 5, 10, 3),  # slope = 2^32 (33 bits)
]


def model_decide(
    st: red.RedState, inst: red.RedInstalled, decay: tuple[int, ...], q: int, idle: int, lim: int
) -> str:
    red.update_avg(st, inst, decay, q, idle)
    branch = red.decide(st, inst)
    branches[branch.value] = branches.get(branch.value, 0) + 1
    verdict = branch.decision
    if verdict is not red.RedDecision.ADMIT:
        return verdict.value
    return "queue_full" if q >= lim else "admit"


class TB:
    def __init__(self, dut) -> None:
        self.dut = dut
        start_clock(dut.clk)
        for name in (
            "cfg_red_enable", "cfg_wq16", "cfg_th_min16", "cfg_th_max16", "cfg_slope",
            "cfg_s_recip", "cfg_queue_limit", "cfg_load", "cfg_seed", "cfg_decay_used",
            "decay_wr_en", "decay_wr_addr", "decay_wr_data", "s_valid", "s_qlen", "s_idle_us",
            "s_tag",
        ):  # fmt: skip
            getattr(dut, name).value = 0
        self.responses: list[tuple[int, int, int, int, int]] = []
        self.cycle = 0
        self.accept_cycles: list[int] = []
        self.response_cycles: list[int] = []
        cocotb.start_soon(self._monitor())

    async def _monitor(self) -> None:
        dut = self.dut
        while True:
            await RisingEdge(dut.clk)
            await ReadOnly()
            self.cycle += 1
            if int(dut.m_valid.value):
                self.response_cycles.append(self.cycle)
                self.responses.append(
                    (
                        int(dut.m_tag.value),
                        int(dut.m_drop.value),
                        int(dut.m_cause.value),
                        int(dut.m_avg.value),
                        int(dut.m_qlen.value),
                    )
                )

    async def configure(
        self, inst: red.RedInstalled, decay: tuple[int, ...], limit: int, enable: bool
    ) -> None:
        dut = self.dut
        dut.cfg_red_enable.value = int(enable)
        dut.cfg_wq16.value = inst.wq16
        dut.cfg_th_min16.value = inst.th_min16
        dut.cfg_th_max16.value = inst.th_max16
        dut.cfg_slope.value = inst.slope
        dut.cfg_s_recip.value = inst.s_recip
        dut.cfg_queue_limit.value = limit
        # only the nonzero prefix is written; the rest must read as 0
        used = sum(1 for v in decay if v)
        assert all(v == 0 for v in decay[used:])
        dut.cfg_decay_used.value = used
        for i, v in enumerate(decay[:used]):
            dut.decay_wr_en.value = 1
            dut.decay_wr_addr.value = i
            dut.decay_wr_data.value = v
            await RisingEdge(dut.clk)
        dut.decay_wr_en.value = 0
        dut.cfg_seed.value = inst.seed
        dut.cfg_load.value = 1
        await RisingEdge(dut.clk)
        dut.cfg_load.value = 0

    async def request(self, q: int, idle: int, tag: int) -> None:
        dut = self.dut
        dut.s_valid.value = 1
        dut.s_qlen.value = q
        dut.s_idle_us.value = idle
        dut.s_tag.value = tag
        while True:
            await RisingEdge(dut.clk)
            if int(dut.s_ready.value):
                self.accept_cycles.append(self.cycle + 1)
                break
        dut.s_valid.value = 0


def arrivals(rng: random.Random, n: int, th_max: int, limit: int) -> list[tuple[int, int]]:
    """(q, idle_us) pairs: a random walk over the thresholds, with idle periods."""
    out = []
    q = 0
    top = max(limit, th_max) + 5
    for _ in range(n):
        step = rng.choice([-2, -1, 0, 1, 1, 2, 3])
        q = 0 if rng.random() < 0.03 else min(top, max(0, q + step))
        idle = 0
        if q == 0:
            idle = rng.choice(
                [0, 1, rng.randrange(0, 100), rng.randrange(0, 5000), rng.getrandbits(32),
                 0xFFFFFFFF]
            )  # fmt: skip
        out.append((q, idle))
    return out


@cocotb.test()
async def run_test_red(dut) -> None:
    tb = TB(dut)
    await reset(dut.clk, dut.rst)
    decay_len = int(dut.DECAY_LEN.value)
    rng = random.Random(2024)
    totals = dict.fromkeys(CAUSES.values(), 0)
    for phase, (w_q, max_p, th_min, th_max, limit, s_us) in enumerate(PARAMS * 2):
        enable = phase != len(PARAMS)  # one FIFO phase
        aqm = AqmConfig(
            mode="red",
            w_q=Decimal(w_q),
            max_p=Decimal(max_p),
            th_min=th_min,
            th_max=th_max,
            seed=rng.getrandbits(32),
        )
        inst = red.install(aqm, 12_000_000_000 // s_us)
        decay = red.decay_table(Decimal(w_q), decay_len)
        if phase == len(PARAMS) - 1:
            # stale nonzero entries past the used prefix must not be read
            for i in range(decay_len):
                dut.decay_wr_en.value = 1
                dut.decay_wr_addr.value = i
                dut.decay_wr_data.value = 0x1FFFF
                await RisingEdge(dut.clk)
            dut.decay_wr_en.value = 0
        await tb.configure(inst, decay, limit, enable)
        st = red.RedState(rng=inst.seed)
        seq = arrivals(rng, 400, th_max, limit)
        tb.responses.clear()
        tb.accept_cycles.clear()
        tb.response_cycles.clear()
        for i, (q, idle) in enumerate(seq):
            await tb.request(q, idle, i & 0xF)
            for _ in range(rng.choice([0, 0, 0, 1, 5])):
                await RisingEdge(dut.clk)
        for _ in range(8):
            await RisingEdge(dut.clk)
        assert len(tb.responses) == len(seq)
        # fixed latency on RED and FIFO ports: the core's pipeline relies on it
        lat = {r - a for a, r in zip(tb.accept_cycles, tb.response_cycles, strict=True)}
        assert len(lat) == 1, lat
        for i, ((q, idle), (tag, drop, cause, avg, qlen)) in enumerate(
            zip(seq, tb.responses, strict=True)
        ):
            if enable:
                exp = model_decide(st, inst, decay, q, idle, limit)
            else:
                exp = "queue_full" if q >= limit else "admit"
            ctx = f"phase {phase} arrival {i} q={q} idle={idle}"
            assert tag == i & 0xF and qlen == q, ctx
            assert CAUSES[cause] == exp, f"{ctx}: {CAUSES[cause]} != {exp}"
            assert drop == (exp != "admit"), ctx
            if enable:
                assert avg == st.avg, f"{ctx}: avg {avg:#x} != {st.avg:#x}"
            totals[exp] += 1
        if enable:
            assert int(dut.stat_count.value) == st.count
            assert int(dut.stat_rng.value) == st.rng
    dut._log.info("decisions: %s, RED rules: %s", totals, branches)
    assert min(totals.values()) > 0, totals
    assert len(branches) == len(red.RedBranch), branches


# the index clamps at DECAY_LEN - 1: a short table reaches it, a longer one rarely
@pytest.mark.parametrize("decay_len", [256, pytest.param(1024, marks=pytest.mark.sweep)])
def test_red_admit(decay_len: int) -> None:
    run_cocotb(
        toplevel="red_admit",
        test_module="test_red_admit",
        modules=["red_admit"],
        parameters={"DECAY_LEN": decay_len, "TAG_WIDTH": 4},
    )
