"""cocotb testbench for rbcc_unit: outcomes, stamps, counters and aggregates bit-exact
against the reference model's ABT (ratelab_model.rbcc), packets back to back so that
same-slot and same-port hazards occur."""

from __future__ import annotations

import random

import cocotb
import pytest
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge
from ratelab_model.counters import PortCounters
from ratelab_model.packet import FLAG_FIN, RbccHeader
from ratelab_model.rbcc import Abt, AbtOutcome, reciprocals

from hdlsim import run_cocotb
from tbutil import reset, start_clock

ROUTER_ID = 0x0A000001
OUTCOMES = {0: "hit", 1: "update", 2: "collision"}
COUNTERS = ("rbcc_packets", "abt_hits", "abt_updates", "abt_inserts", "abt_collisions")
SIGNALS = ("cnt_packets", "cnt_hits", "cnt_updates", "cnt_inserts", "cnt_collisions")


@cocotb.test()
async def run_test_rbcc(dut) -> None:
    start_clock(dut.clk)
    ports = int(dut.PORTS.value)
    slots = int(dut.SLOTS.value)
    nw = int(dut.N_WIDTH.value)
    rng = random.Random(slots * 7 + ports)
    idle_timeout = 1000
    min_rate = 1500
    capacity = {p: rng.choice([10_000_000, 1_000_000, 125_000, 2_000]) for p in range(ports)}
    for name in ("cfg_clear", "recip_wr_en", "s_valid"):
        getattr(dut, name).value = 0
    dut.cfg_router_id.value = ROUTER_ID
    dut.cfg_idle_timeout_us.value = idle_timeout
    dut.cfg_min_rate.value = min_rate
    dut.cfg_capacity.value = sum(capacity[p] << (32 * p) for p in range(ports))
    await reset(dut.clk, dut.rst)
    for k, r in enumerate(reciprocals(slots)[1:]):
        dut.recip_wr_en.value = 1
        dut.recip_wr_addr.value = k
        dut.recip_wr_data.value = r
        await RisingEdge(dut.clk)
    dut.recip_wr_en.value = 0
    while not int(dut.s_ready.value):
        await RisingEdge(dut.clk)

    abt = Abt(slots, idle_timeout, ROUTER_ID, min_rate, capacity)
    counters = {p: PortCounters() for p in range(ports)}
    hw_counts = {p: dict.fromkeys((*COUNTERS, "abt_removals"), 0) for p in range(ports)}
    results: list[tuple[int, int, int, int]] = []

    async def monitor() -> None:
        while True:
            await RisingEdge(dut.clk)
            await ReadOnly()
            if int(dut.m_valid.value):
                results.append(
                    (
                        int(dut.m_tag.value),
                        int(dut.m_outcome.value),
                        int(dut.m_stamp.value),
                        int(dut.m_share.value),
                    )
                )
            for p in range(ports):
                for c, s in zip(COUNTERS, SIGNALS, strict=True):
                    hw_counts[p][c] += int(getattr(dut, s).value) >> p & 1
                hw_counts[p]["abt_removals"] += int(dut.cnt_removals.value) >> (2 * p) & 3

    cocotb.start_soon(monitor())

    # flows: (src, dst, port); more flows than slots so that slots collide
    flows = [
        (rng.getrandbits(32), rng.getrandbits(32), rng.randrange(ports)) for _ in range(slots * 2)
    ]
    rates = [100_000, 250_000, 1_000_000, 5_000_000]
    now = 0
    sent: list[tuple[int, int, int, RbccHeader, int]] = []
    for _ in range(3000):
        await FallingEdge(dut.clk)
        if rng.random() < 0.1:
            dut.s_valid.value = 0
            continue
        if rng.random() < 0.4 and sent:
            src, dst, port = sent[-1][:3]  # same flow back to back
        else:
            src, dst, port = rng.choice(flows[: rng.choice([4, len(flows)])])
        now += rng.choice([0, 0, 1, 10, 200]) if rng.random() < 0.98 else 5000
        hdr = RbccHeader(
            flags=FLAG_FIN if rng.random() < 0.05 else 0,
            next_proto=17,
            rate=rng.choice([0xFFFFFFFF, rng.getrandbits(32), rng.choice(rates)]),
            bottle_node=0,
            return_rate=0xFFFFFFFF,
            return_bottle_node=rng.choice([ROUTER_ID, 0, 0x0A000002]),
            current_rate=rng.choice(rates),
        )
        dut.s_valid.value = 1
        dut.s_port.value = port
        dut.s_port_id.value = port
        dut.s_src.value = src
        dut.s_dst.value = dst
        dut.s_fin.value = int(bool(hdr.flags & FLAG_FIN))
        dut.s_rate.value = hdr.rate
        dut.s_return_bottle_node.value = hdr.return_bottle_node
        dut.s_current_rate.value = hdr.current_rate
        dut.s_now_us.value = now
        dut.s_tag.value = len(sent) & 0xFF
        sent.append((src, dst, port, hdr, now))
    await FallingEdge(dut.clk)
    dut.s_valid.value = 0
    for _ in range(10):
        await RisingEdge(dut.clk)

    assert len(results) == len(sent)
    seen: dict[str, int] = {}
    stamps = 0
    amended = 0  # packets whose share_f differs from the port's plain share
    for j, ((src, dst, port, hdr, t), (tag, outcome, stamp, share)) in enumerate(
        zip(sent, results, strict=True)
    ):
        res = abt.process(port, src, dst, hdr, t, counters)
        ctx = f"packet {j} port {port} t={t}"
        assert tag == j & 0xFF
        assert OUTCOMES[outcome] == res.outcome.value, (
            f"{ctx}: {OUTCOMES[outcome]} != {res.outcome}"
        )
        assert share == res.share, f"{ctx}: share {share} != {res.share}"
        assert stamp == int(res.header.rate != hdr.rate), ctx
        seen[res.outcome.value] = seen.get(res.outcome.value, 0) + 1
        stamps += stamp
        # Amendment 1 (RBCC.md step 4): a limited flow's own rate leaves the
        # sum; without a FIN the aggregates are still those it was stamped with
        if res.outcome is not AbtOutcome.COLLISION and not hdr.flags & FLAG_FIN:
            amended += res.share != abt.share(port)
    for p in range(ports):
        exp = counters[p].as_dict()
        for c in (*COUNTERS, "abt_removals"):
            assert hw_counts[p][c] == exp[c], f"port {p} {c}: {hw_counts[p][c]} != {exp[c]}"
        agg = abt.aggregates[p]
        assert int(dut.stat_n.value) >> (nw * p) & ((1 << nw) - 1) == agg.n
        assert int(dut.stat_n_limited.value) >> (nw * p) & ((1 << nw) - 1) == agg.n_limited
        assert int(dut.stat_sum_limited.value) >> (64 * p) & ((1 << 64) - 1) == agg.sum_limited
    dut._log.info(
        "outcomes %s, stamps %d, amended shares %d, counters %s", seen, stamps, amended, hw_counts
    )
    assert len(seen) == 3 and 0 < stamps < len(sent) and amended > 0
    assert all(hw_counts[p]["abt_removals"] > 0 for p in range(ports))


# 16 slots for many collisions and evictions; 2 ports x 64 slots for fewer
@pytest.mark.parametrize(
    ("ports", "slots"), [(4, 16), pytest.param(2, 64, marks=pytest.mark.sweep)]
)
def test_rbcc_unit(ports: int, slots: int) -> None:
    run_cocotb(
        toplevel="rbcc_unit",
        test_module="test_rbcc_unit",
        modules=["rbcc_unit"],
        parameters={"PORTS": ports, "PORT_WIDTH": max(1, (ports - 1).bit_length()), "SLOTS": slots},
    )
