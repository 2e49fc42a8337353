"""Every case of tests/vectors/ on router.p4, run by ratelab's engine with the
vector's own time: output frames with their ports and dequeue times, and every
counter and gauge at the end, bit for bit.

This is the exact check of the `timing: exact` cases (queues building at a
port's drain rate, RED decay over idle periods, ABT timeouts) that a wall-clock
target cannot make; the PTF suite runs the `timing: any` ones on a live switch.
The program is compiled by ratelab-p4c and configured with the entries of
`ratelab_model.p4_entries` (docs/ROUTER_MODEL.md, "P4 program"). Every case
runs twice: with the engine's controls compiled to native code (its default)
and interpreted (the reference).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from engine_router import ROOT, compile_router, install_entries
from ratelab_ctl.counters import COUNTER_OBJECTS, GAUGE_REGISTERS
from ratelab_model.p4_entries import all_entries
from ratelab_model.vectors.schema import VectorCase, load_file

ratelab_engine = pytest.importorskip("ratelab_engine")

VECTORS = sorted((ROOT / "tests" / "vectors").glob("*.json"))
# The engine's own queue, deeper than any queue_limit a vector sets: the
# program's admission decides every drop, as on the switch.
ENGINE_QUEUE_DEPTH = 4096
# Far past the last packet of any case: everything still queued leaves.
DRAIN_US = 1 << 40


@pytest.fixture(scope="module")
def router_json(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    return compile_router(tmp_path_factory.mktemp("router"))


def configured_engine(json: bytes, case: VectorCase, controls: str) -> ratelab_engine.Switch:
    engine = ratelab_engine.Switch(json)
    # Compiled to native code is the default; the interpreter is the reference.
    assert engine.set_compiled(controls == "compiled") == (controls == "compiled"), (
        engine.compile_error()
    )
    install_entries(engine, all_entries(case.config))
    for port in case.config.ports:
        engine.set_queue_depth(port.port, ENGINE_QUEUE_DEPTH)
        if port.rate_bps:
            engine.set_port_rate(port.port, "bps", port.rate_bps)
    return engine


def test_every_vector_file_is_run() -> None:
    assert len(VECTORS) >= 18


@pytest.mark.parametrize("controls", ["compiled", "interpreted"])
@pytest.mark.parametrize("path", VECTORS, ids=[p.stem for p in VECTORS])
def test_vector_on_engine(router_json: bytes, path: Path, controls: str) -> None:
    case, data = load_file(path)
    expected = data["expected"]
    engine = configured_engine(router_json, case, controls)

    frames = []
    for packet in case.packets:
        frames += engine.process([(packet.port, packet.frame)], packet.time_us)
    frames += engine.poll(DRAIN_US)

    # Packets leave one port in the order they were admitted; ports interleave by time.
    got: dict[int, list[tuple[int, str]]] = {}
    for port, data_out, time_us in frames:
        got.setdefault(port, []).append((time_us, bytes(data_out).hex()))
    want: dict[int, list[tuple[int, str]]] = {}
    for out in expected["outputs"]:
        want.setdefault(out["port"], []).append((out["t_deq_us"], out["frame"]))
    assert got == want

    for port_text, counters in expected["counters"].items():
        port = int(port_text)
        actual = {}
        for name, (obj, which) in COUNTER_OBJECTS.items():
            packets, octets = engine.counter_read(obj, port)
            actual[name] = packets if which == "packets" else octets
        for name, register in GAUGE_REGISTERS.items():
            actual[name] = engine.register_read(register, port)
        assert actual == {k: counters[k] for k in actual}, f"port {port}"
