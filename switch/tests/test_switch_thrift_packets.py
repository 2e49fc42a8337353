"""Entries made with BMv2's own simple_switch_CLI over ratelab-switch's Thrift
server forward frames: veth pairs, so root is needed."""

from __future__ import annotations

import select
import socket
import time
from collections.abc import Iterator

import pytest

pytest.importorskip("ratelab_engine", reason="the ratelab_engine extension is not built")

from switch_basic_program import BASIC_JSON, ipv4_packet
from switch_thrift import CLI, Switch
from switch_veths import raw_socket, veth_pairs


@pytest.fixture
def veths() -> Iterator[list[tuple[str, str]]]:
    yield from veth_pairs(3)


def _frames(s: socket.socket, marker: bytes, timeout: float) -> list[bytes]:
    got = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([s], [], [], max(0.0, deadline - time.monotonic()))
        if ready and marker in (data := s.recv(65535)):
            got.append(data)
    return got


def test_entries_added_with_simple_switch_cli_forward_frames(
    veths: list[tuple[str, str]],
) -> None:
    assert CLI is not None
    (sw1, host1), (sw2, host2), (sw3, host3) = veths
    sw = Switch(BASIC_JSON, "-i", f"1@{sw1}", "-i", f"2@{sw2}", "-i", f"3@{sw3}")
    tx, rx2, rx3 = raw_socket(host1), raw_socket(host2), raw_socket(host3)
    try:
        out = sw.cli(
            "table_add MyIngress.ipv4_lpm MyIngress.ipv4_forward 10.0.2.0/24 => "
            "00:00:00:00:02:22 2",
            "table_add MyIngress.ipv4_lpm MyIngress.ipv4_forward 10.0.3.0/24 => "
            "00:00:00:00:03:33 3",
            "table_set_default MyIngress.ipv4_lpm MyIngress.drop",
        )
        assert all("Invalid" not in o and "Error" not in o for o in out), out
        tx.send(ipv4_packet(bytes([10, 0, 2, 9]), payload=b"thrift-to-2"))
        tx.send(ipv4_packet(bytes([10, 0, 3, 9]), payload=b"thrift-to-3"))
        tx.send(ipv4_packet(bytes([10, 0, 4, 9]), payload=b"thrift-to-none"))
        to2 = _frames(rx2, b"thrift-", 1.5)
        to3 = _frames(rx3, b"thrift-", 0.5)
        assert [f[-11:] for f in to2] == [b"thrift-to-2"]
        assert to2[0][:6] == bytes.fromhex("000000000222") and to2[0][22] == 63
        assert [f[-11:] for f in to3] == [b"thrift-to-3"]
        # Deleting the entry stops the forwarding.
        assert sw.cli("table_delete MyIngress.ipv4_lpm 0")[0].endswith("from MyIngress.ipv4_lpm")
        tx.send(ipv4_packet(bytes([10, 0, 2, 9]), payload=b"thrift-to-2"))
        assert _frames(rx2, b"thrift-", 0.5) == []
    finally:
        for s in (tx, rx2, rx3):
            s.close()
        sw.stop()


def _cmd_frame(op: int, marker: bytes) -> bytes:
    """features.json's command frame: Ethernet (0x88b5) + cmd(op, arg 0, val 0)."""
    eth = bytes.fromhex("020000000001") + bytes.fromhex("020000000002") + b"\x88\xb5"
    return eth + bytes([op]) + bytes(6) + marker


def test_multicast_and_mirroring_set_with_simple_switch_cli_replicate_frames(
    veths: list[tuple[str, str]],
) -> None:
    from switch_basic_program import FEATURES_JSON

    (sw1, host1), (sw2, host2), (sw3, host3) = veths
    sw = Switch(FEATURES_JSON, "-i", f"1@{sw1}", "-i", f"2@{sw2}", "-i", f"3@{sw3}")
    tx, rx2, rx3 = raw_socket(host1), raw_socket(host2), raw_socket(host3)
    try:
        out = sw.cli(
            "table_add MyIngress.ctl MyIngress.do_mcast 2 => 1",
            "table_add MyIngress.ctl MyIngress.do_clone 3 => 5 2",
            "mc_mgrp_create 1",
            "mc_node_create 0 2 3",
            "mc_node_associate 1 0",
            "mirroring_add 5 3",
        )
        assert all("Invalid" not in o and "Error" not in o for o in out), out
        tx.send(_cmd_frame(2, b"mcast-frame"))
        assert len(_frames(rx2, b"mcast-frame", 1.0)) == 1
        assert len(_frames(rx3, b"mcast-frame", 0.3)) == 1
        # do_clone: the original to port 2, the clone of session 5 to port 3.
        tx.send(_cmd_frame(3, b"clone-frame"))
        assert len(_frames(rx2, b"clone-frame", 1.0)) == 1
        assert len(_frames(rx3, b"clone-frame", 0.3)) == 1
        # Node dissociated: the group is empty, nothing comes out.
        sw.cli("mc_node_dissociate 1 0", "mirroring_delete 5")
        tx.send(_cmd_frame(2, b"mcast-again"))
        tx.send(_cmd_frame(3, b"clone-again"))
        assert _frames(rx2, b"mcast-again", 0.5) == _frames(rx3, b"-again", 0.3) == []
    finally:
        for s in (tx, rx2, rx3):
            s.close()
        sw.stop()
