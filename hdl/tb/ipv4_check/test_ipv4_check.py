"""cocotb testbench for ipv4_check: checksum/TTL checks and the RFC 1624 update
against the reference model's full checksum recomputation."""

from __future__ import annotations

import random
import struct

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge
from ratelab_model.forwarding import rewrite
from ratelab_model.packet import ones_complement_checksum

from frames import csum16
from hdlsim import run_cocotb
from tbutil import reset, start_clock


def random_header(rng: random.Random) -> bytes:
    """A random IPv4 header (options included); mostly with a correct checksum."""
    ihl = rng.choice([5, 5, 6, 8, 15, rng.randrange(5, 16)])
    hdr = bytearray(rng.getrandbits(8) for _ in range(ihl * 4))
    hdr[0] = 0x40 | ihl
    hdr[8] = rng.choice([0, 1, 2, 3, 64, 255, rng.getrandbits(8)])
    hdr[10:12] = b"\x00\x00"
    mode = rng.random()
    if mode < 0.15:
        # make the sum of the other words 0xffff: both 0x0000 and 0xffff are correct checksums
        s = (~csum16(bytes(hdr))) & 0xFFFF
        ident = int.from_bytes(hdr[4:6], "big")
        # add (0xffff - s) in ones' complement to the identification word
        t = ident + ((0xFFFF - s) % 0xFFFF)
        t = (t & 0xFFFF) + (t >> 16)
        hdr[4:6] = struct.pack("!H", t & 0xFFFF)
        assert (~csum16(bytes(hdr))) & 0xFFFF in (0xFFFF, 0)
        hdr[10:12] = rng.choice([b"\x00\x00", b"\xff\xff"])
    else:
        hdr[10:12] = struct.pack("!H", csum16(bytes(hdr)))
        if mode > 0.85:
            hdr[rng.randrange(0, ihl * 4)] ^= 1 << rng.randrange(8)
    return bytes(hdr)


@cocotb.test()
async def run_test_headers(dut) -> None:
    start_clock(dut.clk)
    dut.s_valid.value = 0
    dut.s_hdr.value = 0
    dut.s_ihl.value = 0
    await reset(dut.clk, dut.rst)
    rng = random.Random(7)
    headers = [random_header(rng) for _ in range(2000)]
    got: list[tuple[int, int, int, int]] = []

    async def monitor() -> None:
        while True:
            await RisingEdge(dut.clk)
            await ReadOnly()
            if int(dut.m_valid.value):
                got.append(
                    (
                        int(dut.m_csum_ok.value),
                        int(dut.m_ttl_ok.value),
                        int(dut.m_ttl_new.value),
                        int(dut.m_csum_new.value),
                    )
                )

    cocotb.start_soon(monitor())
    for h in headers:
        while rng.random() < 0.2:  # idle cycles
            dut.s_valid.value = 0
            await RisingEdge(dut.clk)
        dut.s_valid.value = 1
        dut.s_hdr.value = int.from_bytes(h + bytes(60 - len(h)), "little")
        dut.s_ihl.value = h[0] & 0xF
        await RisingEdge(dut.clk)
    dut.s_valid.value = 0
    for _ in range(4):
        await RisingEdge(dut.clk)

    assert len(got) == len(headers)
    n_ok = n_fwd = 0
    for h, (csum_ok, ttl_ok, ttl_new, csum_new) in zip(headers, got, strict=True):
        exp_ok = ones_complement_checksum(h) == 0
        assert csum_ok == exp_ok, h.hex()
        assert ttl_ok == (h[8] > 1), h.hex()
        n_ok += exp_ok
        if exp_ok and h[8] > 1:
            n_fwd += 1
            frame = bytes(14) + h
            out = rewrite(frame, len(h), bytes(6), bytes(6))
            assert ttl_new == out[14 + 8]
            assert csum_new == int.from_bytes(out[24:26], "big"), h.hex()
    assert 0 < n_fwd < n_ok < len(headers)


def test_ipv4_check() -> None:
    run_cocotb(toplevel="ipv4_check", test_module="test_ipv4_check", modules=["ipv4_check"])
