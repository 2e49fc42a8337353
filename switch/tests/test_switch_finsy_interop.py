"""Interoperability: finsy, an independent P4Runtime client, drives the server."""

from __future__ import annotations

import asyncio

import finsy as fy
from ratelab_switch.server import P4RuntimeServer
from switch_fake_engine import FakeEngine
from switch_program import bmv2_json, p4info


def test_finsy_pushes_pipeline_writes_and_reads(
    server: P4RuntimeServer, engine: FakeEngine
) -> None:
    async def session() -> tuple[list[fy.P4TableEntry], list[fy.P4TableEntry]]:
        opts = fy.SwitchOptions(p4info=p4info(), p4blob=bmv2_json(), device_id=1)
        async with fy.Switch("sw1", f"127.0.0.1:{server.port}", opts) as sw:
            entry = fy.P4TableEntry(
                "ipv4_lpm",
                match=fy.P4TableMatch(dstAddr="10.1.0.0/16"),
                action=fy.P4TableAction("set_nhop", port=3, dmac=0x0A0B0C0D0E0F),
            )
            await sw.write([+entry])
            entries = [e async for e in sw.read(fy.P4TableEntry("ipv4_lpm"))]
            default = [
                e async for e in sw.read(fy.P4TableEntry("ipv4_lpm", is_default_action=True))
            ]
            return entries, default

    entries, default = asyncio.run(asyncio.wait_for(session(), 20))
    assert engine.load_count == 1
    [e] = entries
    assert e.match is not None and e.match["dstAddr"] == (0x0A010000, 16)
    assert e.action is not None and e.action.args == {"port": 3, "dmac": 0x0A0B0C0D0E0F}
    [d] = default
    assert d.action is not None and d.action.name == "drop"
