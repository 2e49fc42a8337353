"""cocotb testbench for router_parser: header fields and status of random frames."""

from __future__ import annotations

import os
import random
import struct

import cocotb
import pytest
from cocotb.triggers import RisingEdge
from cocotbext.axi import AxiStreamBus, AxiStreamFrame, AxiStreamSource
from ratelab_model.forwarding import ForwardDrop, parse_ipv4

from frames import random_frame
from hdlsim import run_cocotb
from tbutil import drive_ready, no_pause, random_pause, reset, start_clock


def expected(frame: bytes) -> dict[str, int]:
    """What the parser must report for ``frame`` (status from the reference model)."""
    res = parse_ipv4(frame)
    status = {ForwardDrop.NOT_IPV4: 1, ForwardDrop.MALFORMED: 2}.get(res, 0)  # type: ignore[call-overload]
    exp: dict[str, int] = {"frame_len": len(frame), "status": status}
    if len(frame) >= 14:
        exp["eth_dst"] = int.from_bytes(frame[0:6], "big")
        exp["eth_src"] = int.from_bytes(frame[6:12], "big")
        exp["eth_type"] = int.from_bytes(frame[12:14], "big")
    exp["rbcc_valid"] = 0
    if status == 0:
        ip = frame[14:]
        ihl = ip[0] & 0xF
        exp.update(
            ip_ihl=ihl,
            ip_total_len=int.from_bytes(ip[2:4], "big"),
            ip_ttl=ip[8],
            ip_proto=ip[9],
            ip_csum=int.from_bytes(ip[10:12], "big"),
            ip_src=int.from_bytes(ip[12:16], "big"),
            ip_dst=int.from_bytes(ip[16:20], "big"),
        )
        frag = int.from_bytes(ip[6:8], "big") & 0x1FFF
        off = ihl * 4
        if ip[9] == 253 and frag == 0 and ip[off] >> 4 == 1:
            _vf, nxt, _res, rate, bn, rr, rbn, cr = struct.unpack("!BBHIIIII", ip[off : off + 24])
            exp.update(
                rbcc_valid=1,
                rbcc_offset=14 + off,
                rbcc_flags=ip[off] & 0xF,
                rbcc_next_proto=nxt,
                rbcc_rate=rate,
                rbcc_bottle_node=bn,
                rbcc_return_rate=rr,
                rbcc_return_bottle_node=rbn,
                rbcc_current_rate=cr,
            )
    return exp


class TB:
    def __init__(self, dut) -> None:
        self.dut = dut
        start_clock(dut.clk)
        dut.s_axis_tready.value = 1
        self.source = AxiStreamSource(AxiStreamBus.from_prefix(dut, "s_axis"), dut.clk, dut.rst)
        self.headers: list[dict[str, int]] = []
        cocotb.start_soon(self._monitor())

    async def _monitor(self) -> None:
        dut = self.dut
        names = [
            "frame_len", "frame_error", "status", "eth_dst", "eth_src", "eth_type", "ip_ihl",
            "ip_total_len", "ip_ttl", "ip_proto", "ip_csum", "ip_src", "ip_dst", "ip_hdr",
            "rbcc_valid", "rbcc_offset", "rbcc_flags", "rbcc_next_proto", "rbcc_rate",
            "rbcc_bottle_node", "rbcc_return_rate", "rbcc_return_bottle_node",
            "rbcc_current_rate",
        ]  # fmt: skip
        while True:
            await RisingEdge(dut.clk)
            if int(dut.m_hdr_valid.value):
                h = {}
                for n in names:
                    v = getattr(dut, f"m_{n}").value
                    h[n] = int(v) if v.is_resolvable else -1
                self.headers.append(h)


@cocotb.test()
async def run_test_frames(dut) -> None:
    tb = TB(dut)
    seed = int(os.environ.get("TB_SEED", "1"))
    backpressure = os.environ.get("TB_BACKPRESSURE", "0") == "1"
    rng = random.Random(seed)
    await reset(dut.clk, dut.rst)
    if backpressure:
        tb.source.set_pause_generator(random_pause(seed + 1))
        cocotb.start_soon(drive_ready(dut.clk, dut.s_axis_tready, random_pause(seed + 2, 0.2)))
    else:
        tb.source.set_pause_generator(no_pause())

    frames = [random_frame(rng) for _ in range(int(os.environ.get("TB_FRAMES", "300")))]
    errors = [int(rng.random() < 0.05) for _ in frames]
    for f, e in zip(frames, errors, strict=True):
        await tb.source.send(AxiStreamFrame(f, tuser=e))
    await tb.source.wait()
    for _ in range(5):
        await RisingEdge(dut.clk)

    assert len(tb.headers) == len(frames)
    counts = {0: 0, 1: 0, 2: 0}
    rbcc = 0
    for i, (f, e, got) in enumerate(zip(frames, errors, tb.headers, strict=True)):
        exp = expected(f)
        exp["frame_error"] = e
        counts[exp["status"]] += 1
        rbcc += exp["rbcc_valid"]
        for k, v in exp.items():
            assert got[k] == v, f"frame {i} ({f.hex()}): {k} = {got[k]:#x}, expected {v:#x}"
        if exp["status"] == 0:
            hl = exp["ip_ihl"] * 4
            assert got["ip_hdr"].to_bytes(60, "little")[:hl] == f[14 : 14 + hl]
    # the random mix must exercise every outcome
    assert min(counts.values()) > 0 and rbcc > 0, counts
    dut._log.info("frames %d, status counts %s, rbcc %d", len(frames), counts, rbcc)


@pytest.mark.parametrize(
    ("data_width", "backpressure"),
    [
        (64, True),
        (64, False),
        pytest.param(128, True, marks=pytest.mark.sweep),
        pytest.param(256, True, marks=pytest.mark.sweep),
    ],
)
def test_router_parser(data_width: int, backpressure: bool) -> None:
    run_cocotb(
        toplevel="router_parser",
        test_module="test_router_parser",
        modules=["router_parser"],
        parameters={"DATA_WIDTH": data_width},
        extra_env={"TB_BACKPRESSURE": str(int(backpressure)), "TB_SEED": str(data_width)},
        run_name=f"bp{int(backpressure)}",
    )
