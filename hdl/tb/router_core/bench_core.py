"""Throughput and latency of router_core: back-to-back minimum-size frames on all
ports at once (each ingress port to a different egress port), plain UDP and RBCC.

Used by test_router_core.py (asserts no bubbles) and by `make bench`
(HDL_BENCH_OUT names a JSON file for the figures).
"""

from __future__ import annotations

import json
import os
from typing import Any

import cocotb
from cocotb.triggers import FallingEdge, RisingEdge
from cocotbext.axi import AxiStreamFrame
from ratelab_ctl import hdl_driver as regmap
from ratelab_model.config import AqmConfig, NextHop, PortConfig, Route, RouterConfig

from frames import IPPROTO_RBCC, RbccFields, ipv4_frame

PORTS = 4
CLK_MHZ = 250
ROUTER_ID = 0x0A0000FE


def bench_config() -> RouterConfig:
    ports = tuple(
        # unlimited rate: q stays 0, so the limit (the core's PEND_DEPTH) never drops
        PortConfig(p, bytes([2, 0, 0, 0, 0, p]), 0, 256, 10**9, AqmConfig("fifo"))
        for p in range(PORTS)
    )
    hops = tuple(NextHop(p, p, bytes([2, 0, 0, 0, 1, p])) for p in range(PORTS))
    routes = tuple(Route((10 << 24) | (p << 16), 16, p) for p in range(PORTS))
    return RouterConfig(ROUTER_ID, ports, hops, routes)


def bench_frame(ingress: int, seq: int, rbcc: bool) -> bytes:
    egress = (ingress + 1) % PORTS
    src = (10 << 24) | (ingress << 16) | seq
    dst = (10 << 24) | (egress << 16) | 1
    if rbcc:
        payload = RbccFields(rate=10**8, current_rate=10**6, return_bottle_node=0).encode()
        return ipv4_frame(src, dst, IPPROTO_RBCC, payload)  # 58 bytes, padded to 60
    return ipv4_frame(src, dst, 17, bytes(8))  # UDP, 42 bytes, padded to 60


async def measure(tb: Any, frames_per_port: int, rbcc: bool) -> dict[str, Any]:
    """Send frames_per_port minimum-size frames on every port at once; return figures."""
    dut = tb.dut
    await tb.reset()
    await tb.configure(bench_config(), {p: p for p in range(PORTS)})
    kw = len(dut.s00_axis_tkeep)
    beats_per_frame = -(-60 // kw)

    # single packet on an idle router: latency
    t = {"cycle": 0}
    first_in: dict[int, int] = {}
    first_out: dict[int, int] = {}
    last_in: dict[int, int] = {}
    last_out: dict[int, int] = {}
    # start of the last frame, for cycles per packet (start to start)
    last_sof_in: dict[int, int] = {}
    last_sof_out: dict[int, int] = {}
    stalls = [0] * PORTS
    out_frames = [0] * PORTS

    async def monitor() -> None:
        mid_in = [False] * PORTS
        mid_out = [False] * PORTS
        while True:
            await FallingEdge(dut.clk)
            t["cycle"] += 1
            for k in range(PORTS):
                s = f"s{k:02d}_axis"
                m = f"m{k:02d}_axis"
                sv = int(getattr(dut, f"{s}_tvalid").value)
                sr = int(getattr(dut, f"{s}_tready").value)
                if sv and not sr:
                    stalls[k] += 1
                if sv and sr:
                    if not mid_in[k]:
                        first_in.setdefault(k, t["cycle"])
                        last_sof_in[k] = t["cycle"]
                    mid_in[k] = not int(getattr(dut, f"{s}_tlast").value)
                    if not mid_in[k]:
                        last_in[k] = t["cycle"]
                mv = int(getattr(dut, f"{m}_tvalid").value)
                if mv and int(getattr(dut, f"{m}_tready").value):
                    if not mid_out[k]:
                        first_out.setdefault(k, t["cycle"])
                        last_sof_out[k] = t["cycle"]
                    mid_out[k] = not int(getattr(dut, f"{m}_tlast").value)
                    if not mid_out[k]:
                        last_out[k] = t["cycle"]
                        out_frames[k] += 1

    task = cocotb.start_soon(monitor())
    await tb.sources[0].send(AxiStreamFrame(bench_frame(0, 0, rbcc)))
    for _ in range(200):
        await RisingEdge(dut.clk)
    lat_first = first_out[1] - first_in[0]
    lat_last = first_out[1] - last_in[0]
    rx = await tb.sinks[1].recv()
    assert len(rx.tdata) == 60

    # all ports at once, back to back
    for d in (first_in, first_out, last_in, last_out, last_sof_in, last_sof_out):
        d.clear()
    stalls[:] = [0] * PORTS
    out_frames[:] = [0] * PORTS
    for k in range(PORTS):
        for n in range(frames_per_port):
            await tb.sources[k].send(AxiStreamFrame(bench_frame(k, n + 1, rbcc)))
    for k in range(PORTS):
        await tb.sources[k].wait()
    for _ in range(400):
        await RisingEdge(dut.clk)
    task.cancel()
    for k in range(PORTS):
        tb.sinks[k].clear()

    in_cpp = max((last_sof_in[k] - first_in[k]) / (frames_per_port - 1) for k in range(PORTS))
    out_cpp = max((last_sof_out[k] - first_out[k]) / (frames_per_port - 1) for k in range(PORTS))
    assert out_frames == [frames_per_port] * PORTS, out_frames
    if rbcc:
        hits = sum([await tb.read64(regmap.counter_reg(k, "rbcc_packets")) for k in range(PORTS)])
        assert hits == PORTS * (frames_per_port + 1) - (PORTS - 1), hits
    gbps = 60 * 8 * CLK_MHZ / 1000 / out_cpp
    return {
        "data_width": kw * 8,
        "ports": PORTS,
        "traffic": "rbcc" if rbcc else "udp",
        "frame_bytes": 60,
        "beats_per_frame": beats_per_frame,
        "frames_per_port": frames_per_port,
        "cycles_per_packet_in": in_cpp,
        "cycles_per_packet_out": out_cpp,
        "ingress_stall_cycles": sum(stalls),
        "latency_first_in_to_first_out_cycles": lat_first,
        "latency_last_in_to_first_out_cycles": lat_last,
        "packets_per_s_per_port_at_250MHz": CLK_MHZ * 1e6 / out_cpp,
        "gbit_per_s_per_port_at_250MHz_60B_frames": gbps,
        "gbit_per_s_per_port_at_250MHz_wire_84B": 84 * 8 * CLK_MHZ / 1000 / out_cpp,
    }


# Decision rate limits of the core: one descriptor per cycle over all ports
# (shared pipeline) and one admission per 6 cycles per egress port (red_admit).
ADMIT_II = 6


async def run_bench(tb: Any) -> list[dict[str, Any]]:
    results = [await measure(tb, 64, rbcc=False), await measure(tb, 64, rbcc=True)]
    for r in results:
        tb.dut._log.info("bench %s", r)
        if r["beats_per_frame"] >= max(ADMIT_II, PORTS):
            # line rate: one frame per frame time on every port, nothing stalled
            assert r["cycles_per_packet_out"] == r["beats_per_frame"], r
            assert r["cycles_per_packet_in"] == r["beats_per_frame"], r
            assert r["ingress_stall_cycles"] == 0, r
        else:
            # wider buses: limited by the decision rates (plus head-of-line waits)
            assert r["cycles_per_packet_out"] <= max(ADMIT_II, PORTS) + 1, r
    out = os.environ.get("HDL_BENCH_OUT")
    if out:
        with open(out, "a") as f:
            for r in results:
                f.write(json.dumps(r) + "\n")
    return results
