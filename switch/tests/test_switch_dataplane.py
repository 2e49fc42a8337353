"""The Rust packet thread (ratelab_engine.Dataplane) without interfaces: PacketOut
injection, PacketIn delivery, traffic-manager wake-ups, a late program, stop.

Interfaces (veth pairs, needing root) are in test_switch_ports.py.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

rust = pytest.importorskip("ratelab_engine", reason="the ratelab_engine extension is not built")

from switch_basic_program import BASIC_JSON, ipv4_packet  # noqa: E402

CPU = 64


def _switch(port: int = CPU) -> object:
    """basic.json with 10.0.2.0/24 routed to `port`."""
    sw = rust.Switch(BASIC_JSON.read_bytes(), 1)
    sw.table_add(
        "MyIngress.ipv4_lpm", [("lpm", 0x0A000200, 24)], "MyIngress.ipv4_forward", [0x222, port], 0
    )
    return sw


def _events(dp: object, count: int, timeout: float = 5.0) -> list[tuple[str, object]]:
    got: list[tuple[str, object]] = []
    deadline = time.monotonic() + timeout
    while len(got) < count and time.monotonic() < deadline:
        got.extend(dp.next_events(0.05) or [])  # type: ignore[attr-defined]
    return got


@pytest.fixture
def dp() -> Iterator[object]:
    d = rust.Dataplane([], CPU, None)
    try:
        yield d
    finally:
        d.stop()


def test_an_injected_packet_routed_to_the_cpu_port_comes_back_as_a_packet_in(
    dp: object,
) -> None:
    dp.set_switch(_switch())  # type: ignore[attr-defined]
    dp.inject(1, ipv4_packet(bytes([10, 0, 2, 9]), ttl=9))  # type: ignore[attr-defined]
    [(kind, data)] = _events(dp, 1)
    assert kind == "packet_in"
    assert isinstance(data, bytes)
    assert data[:6] == bytes.fromhex("000000000222") and data[22] == 8  # forwarded: TTL - 1


def test_frames_to_a_port_without_an_interface_are_counted(dp: object) -> None:
    dp.set_switch(_switch(port=7))  # type: ignore[attr-defined]
    for _ in range(3):
        dp.inject(1, ipv4_packet(bytes([10, 0, 2, 9])))  # type: ignore[attr-defined]
    deadline = time.monotonic() + 5
    while dp.stats()["unknown_port_drops"] < 3:  # type: ignore[attr-defined]
        assert time.monotonic() < deadline, dp.stats()  # type: ignore[attr-defined]
        time.sleep(0.01)


def test_the_loop_wakes_for_the_traffic_managers_next_departure(dp: object) -> None:
    sw = _switch()
    sw.set_port_rate(CPU, "pps", 10)  # type: ignore[attr-defined]
    dp.set_switch(sw)  # type: ignore[attr-defined]
    dp.inject(1, ipv4_packet(bytes([10, 0, 2, 9]), payload=b"first"))  # type: ignore[attr-defined]
    dp.inject(1, ipv4_packet(bytes([10, 0, 2, 9]), payload=b"second"))  # type: ignore[attr-defined]
    [first] = _events(dp, 1)
    t0 = time.monotonic()
    # Nothing else arrives: only the engine's next departure time can wake the loop.
    [second] = _events(dp, 1)
    waited = time.monotonic() - t0
    assert first[1].endswith(b"first") and second[1].endswith(b"second")  # type: ignore[union-attr]
    assert 0.05 <= waited < 1.0, waited


def test_without_a_program_frames_are_dropped_until_one_is_set(dp: object) -> None:
    dp.inject(1, ipv4_packet(bytes([10, 0, 2, 9])))  # type: ignore[attr-defined]
    assert _events(dp, 1, timeout=0.2) == []
    dp.set_switch(_switch())  # type: ignore[attr-defined]
    dp.inject(1, ipv4_packet(bytes([10, 0, 2, 9])))  # type: ignore[attr-defined]
    assert [k for k, _ in _events(dp, 1)] == ["packet_in"]


def test_stop_ends_the_thread_and_the_event_stream() -> None:
    d = rust.Dataplane([], CPU, None)
    assert d.is_running()
    d.stop()
    assert not d.is_running()
    assert d.next_events(0.01) is None
    d.stop()  # idempotent
    d.inject(1, b"x")  # harmless once stopped


def test_an_interface_that_cannot_be_opened_is_named() -> None:
    with pytest.raises(OSError, match="no-such-if0"):
        rust.Dataplane([(1, "no-such-if0")], None, None)
