"""cocotb testbench for frame_rewrite: MACs, TTL, checksum and RBCC stamp rewritten,
dropped frames consumed, back-to-back frames under random backpressure."""

from __future__ import annotations

import os
import random
from dataclasses import dataclass

import cocotb
import pytest
from cocotb.triggers import RisingEdge
from cocotbext.axi import AxiStreamBus, AxiStreamFrame, AxiStreamSink, AxiStreamSource

from hdlsim import run_cocotb
from tbutil import no_pause, random_pause, reset, start_clock


@dataclass
class Hdr:
    drop: int
    dest: int
    dst_mac: int
    src_mac: int
    ttl: int
    csum: int
    stamp: int
    rbcc_offset: int
    rate: int
    bottle_node: int

    def apply(self, frame: bytes) -> bytes:
        out = bytearray(frame)
        out[0:6] = self.dst_mac.to_bytes(6, "big")
        out[6:12] = self.src_mac.to_bytes(6, "big")
        out[22] = self.ttl
        out[24:26] = self.csum.to_bytes(2, "big")
        if self.stamp:
            o = self.rbcc_offset
            out[o + 4 : o + 8] = self.rate.to_bytes(4, "big")
            out[o + 8 : o + 12] = self.bottle_node.to_bytes(4, "big")
        return bytes(out)


@cocotb.test()
async def run_test_rewrite(dut) -> None:
    start_clock(dut.clk)
    dut.s_hdr_valid.value = 0
    source = AxiStreamSource(AxiStreamBus.from_prefix(dut, "s_axis"), dut.clk, dut.rst)
    sink = AxiStreamSink(AxiStreamBus.from_prefix(dut, "m_axis"), dut.clk, dut.rst)
    await reset(dut.clk, dut.rst)
    backpressure = os.environ.get("TB_BACKPRESSURE", "0") == "1"
    seed = int(os.environ.get("TB_SEED", "1"))
    rng = random.Random(seed)
    if backpressure:
        source.set_pause_generator(random_pause(seed + 1))
        sink.set_pause_generator(random_pause(seed + 2))
    else:
        source.set_pause_generator(no_pause())
        sink.set_pause_generator(no_pause())

    frames, hdrs = [], []
    for _ in range(200):
        ihl = rng.choice([5, 6, 15])
        off = 14 + 4 * ihl
        n = rng.choice([off + 24, 60, off + 24 + rng.randrange(0, 200)])
        frames.append(bytes(rng.getrandbits(8) for _ in range(max(n, off + 24))))
        hdrs.append(
            Hdr(
                drop=int(rng.random() < 0.2),
                dest=rng.randrange(4),
                dst_mac=rng.getrandbits(48),
                src_mac=rng.getrandbits(48),
                ttl=rng.getrandbits(8),
                csum=rng.getrandbits(16),
                stamp=int(rng.random() < 0.5),
                rbcc_offset=off,
                rate=rng.getrandbits(32),
                bottle_node=rng.getrandbits(32),
            )
        )

    async def drive_headers() -> None:
        for h in hdrs:
            if backpressure:
                for _ in range(rng.choice([0, 0, 1, 4])):
                    await RisingEdge(dut.clk)
            dut.s_hdr_valid.value = 1
            for name, v in vars(h).items():
                getattr(dut, f"s_hdr_{name}").value = v
            while True:
                await RisingEdge(dut.clk)
                if int(dut.s_hdr_ready.value):
                    break
            dut.s_hdr_valid.value = 0

    cocotb.start_soon(drive_headers())
    for f in frames:
        await source.send(AxiStreamFrame(f))
    start = cocotb.utils.get_sim_time("ns")
    kept = [(f, h) for f, h in zip(frames, hdrs, strict=True) if not h.drop]
    for i, (f, h) in enumerate(kept):
        rx = await sink.recv()
        assert bytes(rx.tdata) == h.apply(f), f"frame {i}"
        dest = rx.tdest if isinstance(rx.tdest, int) else rx.tdest[0]
        assert dest == h.dest
    await source.wait()
    assert sink.empty()
    if not backpressure:
        # back to back: one beat per cycle, no bubble between frames
        kw = len(dut.s_axis_tkeep)
        beats = sum(-(-len(f) // kw) for f in frames)
        cycles = (cocotb.utils.get_sim_time("ns") - start) / 4
        dut._log.info("beats %d, cycles %d", beats, cycles)
        assert cycles <= beats + 10


@pytest.mark.parametrize(
    ("data_width", "backpressure"),
    [(64, False), (64, True), pytest.param(256, True, marks=pytest.mark.sweep)],
)
def test_frame_rewrite(data_width: int, backpressure: bool) -> None:
    run_cocotb(
        toplevel="frame_rewrite",
        test_module="test_frame_rewrite",
        modules=["frame_rewrite"],
        parameters={"DATA_WIDTH": data_width},
        extra_env={"TB_BACKPRESSURE": str(int(backpressure)), "TB_SEED": str(data_width)},
        run_name=f"bp{int(backpressure)}",
    )
