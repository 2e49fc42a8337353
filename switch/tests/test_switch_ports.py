"""The daemon on real interfaces: veth pairs, AF_PACKET ports, pcap capture, queue rates.

Needs root (to create veth pairs) and the ratelab_engine extension; skipped otherwise.
"""

from __future__ import annotations

import io
import itertools
import json
import os
import select
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

pytest.importorskip("ratelab_engine", reason="the ratelab_engine extension is not built")

from finsy.proto.p4.v1.p4runtime_pb2_grpc import P4RuntimeStub
from ratelab_switch.pcap import read_pcap
from switch_basic_program import BASIC_JSON, commit_routed, ipv4_packet
from switch_client import StreamClient
from switch_process import daemon_env
from switch_veths import raw_socket, veth_pairs


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True)


@pytest.fixture
def veths() -> Iterator[list[tuple[str, str]]]:
    yield from veth_pairs(2)


def _receive_matching(s: socket.socket, marker: bytes, count: int, timeout: float) -> list[bytes]:
    got: list[bytes] = []
    deadline = time.monotonic() + timeout
    while len(got) < count and time.monotonic() < deadline:
        ready, _, _ = select.select([s], [], [], max(0.0, deadline - time.monotonic()))
        if ready:
            frame = s.recv(65535)
            if marker in frame:
                got.append(frame)
    return got


def test_daemon_forwards_between_interfaces_with_pcap_and_rate(
    veths: list[tuple[str, str]], tmp_path: Path
) -> None:
    (sw1, host1), (sw2, host2) = veths
    env = daemon_env()
    proc = subprocess.Popen(
        [sys.executable, "-m", "ratelab_switch.daemon", str(BASIC_JSON),
         "-i", f"1@{sw1}", "-i", f"2@{sw2}", "--pcap", str(tmp_path),
         "--", "--grpc-server-addr", "127.0.0.1:0", "--device-id", "1",
         "--queue-rate", "2=100pps"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    tx, rx = raw_socket(host1), raw_socket(host2)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("Server listening on"), line + (
            proc.stderr.read() if proc.stderr else ""
        )
        port = int(line.strip().rsplit(":", 1)[1])
        with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
            stub = P4RuntimeStub(ch)
            ctl = StreamClient(stub)
            try:
                ctl.arbitrate(1)
                ctl.get()
                commit_routed(stub)
                frames = [
                    ipv4_packet(bytes([10, 0, 2, 9]), payload=b"ratelab-%d" % i) for i in range(3)
                ]
                for f in frames:
                    tx.send(f)
                # An 802.1Q-tagged frame: the kernel strips the tag on receive, the port
                # must put it back (checked in the input capture below).
                tagged = bytes.fromhex("020000000001020000000002810020640800") + b"vlan-frame"
                tx.send(tagged)
                got = _receive_matching(rx, b"ratelab-", 3, timeout=5.0)
                stats = json.loads(
                    ch.unary_unary("/ratelab.SwitchTarget/GetPortStats")(b'{"device_id": 1}')
                )["ports"]
                one = json.loads(
                    ch.unary_unary("/ratelab.SwitchTarget/GetPortStats")(
                        b'{"device_id": 1, "port": 2}'
                    )
                )["ports"]
            finally:
                ctl.close()
        assert [g[34:] for g in got] == [f[34:] for f in frames]
        # The ports with interfaces (and port 2's own rate setting), engine and
        # packet-thread counters side by side.
        assert [(p["port"], p["iface"]) for p in stats] == [(1, sw1), (2, sw2)]
        assert stats[0]["rx_packets"] >= 4  # the three frames and the tagged one
        assert (stats[1]["tx_packets"], stats[1]["tx_bytes"]) == (3, sum(len(f) for f in frames))
        assert all(p["rx_drops"] == p["tx_errors"] == p["mtu_drops"] == 0 for p in stats)
        assert one == [stats[1]]
        assert all(g[:6] == bytes.fromhex("000000000222") for g in got)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    finally:
        tx.close()
        rx.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
    captured = [d for _, d in read_pcap(str(tmp_path / f"{sw1}_in.pcap"))]
    ins = [d for d in captured if b"ratelab-" in d]
    outs = read_pcap(str(tmp_path / f"{sw2}_out.pcap"))
    assert ins == frames
    assert tagged in captured
    assert [d[34:] for _, d in outs] == [f[34:] for f in frames]
    # 100 packets/s on port 2: departures at least ~10 ms apart.
    times = [t for t, _ in outs]
    assert all(b - a >= 9_000 for a, b in itertools.pairwise(times)), times


def _sockets() -> int:
    return sum(
        1
        for fd in os.listdir("/proc/self/fd")
        if _readlink(f"/proc/self/fd/{fd}").startswith("socket:")
    )


def _readlink(path: str) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return ""


def test_data_plane_mtu_drops_lost_interface_and_cleanup(veths: list[tuple[str, str]]) -> None:
    """The packet thread on two veth ports: a frame over the egress MTU is dropped and
    counted; a port whose interface is deleted leaves the loop with a warning while
    the other keeps working; stop closes every socket."""
    import ratelab_engine as rust

    (sw1, host1), (sw2, host2) = veths
    _ip("link", "set", sw2, "mtu", "200")
    sw = rust.Switch(BASIC_JSON.read_bytes(), 1)
    sw.table_add(
        "MyIngress.ipv4_lpm", [("lpm", 0x0A000200, 24)], "MyIngress.ipv4_forward", [0x222, 2], 0
    )
    sockets_before = _sockets()
    dp = rust.Dataplane([(1, sw1), (2, sw2)], 64, None)
    # Per port: the socket it reads and the one with its transmit ring.
    assert _sockets() == sockets_before + 4
    tx, rx = raw_socket(host1), raw_socket(host2)
    try:
        dp.set_switch(sw)
        big = ipv4_packet(bytes([10, 0, 2, 9]), payload=b"ratelab-big" + bytes(200))
        small = ipv4_packet(bytes([10, 0, 2, 9]), payload=b"ratelab-small")
        tx.send(big)
        tx.send(small)
        got = _receive_matching(rx, b"ratelab-", 2, timeout=2.0)
        assert [g[34:] for g in got] == [small[34:]]
        port2 = dp.stats()["ports"][2]
        assert (port2["mtu_drops"], port2["tx_packets"]) == (1, 1)
        assert dp.stats()["ports"][1]["rx_packets"] >= 2
        # Nothing overflowed the receive ring (its counting is tested in the
        # dataplane crate, tests/port_veth.rs).
        assert dp.stats()["ports"][1]["rx_drops"] == 0

        _ip("link", "del", sw2)  # host2 goes with it
        deadline = time.monotonic() + 5
        warnings: list[str] = []
        while not warnings and time.monotonic() < deadline:
            warnings = [v for k, v in dp.next_events(0.1) or [] if k == "warning"]
        assert warnings and sw2 in warnings[0]
        # Port 1 is still read: its frames reach the engine (and fail on port 2).
        before = dp.stats()["ports"][1]["rx_packets"]
        tx.send(small)
        deadline = time.monotonic() + 5
        while dp.stats()["ports"][2]["tx_errors"] < 1:
            assert time.monotonic() < deadline, dp.stats()
            time.sleep(0.01)
        assert dp.stats()["ports"][1]["rx_packets"] > before
    finally:
        dp.stop()
        tx.close()
        rx.close()
    assert _sockets() == sockets_before  # the thread's port sockets are closed


def test_data_plane_follows_an_mtu_changed_while_it_runs(
    veths: list[tuple[str, str]],
) -> None:
    """`ip link set IFACE mtu N` on a switch port while the packet thread runs: frames
    over the new MTU are dropped and counted, and forwarded again once it is raised."""
    import ratelab_engine as rust

    (sw1, host1), (sw2, host2) = veths
    sw = rust.Switch(BASIC_JSON.read_bytes(), 1)
    sw.table_add(
        "MyIngress.ipv4_lpm", [("lpm", 0x0A000200, 24)], "MyIngress.ipv4_forward", [0x222, 2], 0
    )
    dp = rust.Dataplane([(1, sw1), (2, sw2)], 64, None)
    tx, rx = raw_socket(host1), raw_socket(host2)

    def through(marker: bytes) -> bool:
        tx.send(ipv4_packet(bytes([10, 0, 2, 9]), payload=marker + bytes(300)))
        return bool(_receive_matching(rx, marker, 1, timeout=1.0))

    def mtu(value: int) -> None:
        _ip("link", "set", sw2, "mtu", str(value))
        time.sleep(0.1)  # the loop reads the MTUs every 10 ms

    try:
        dp.set_switch(sw)
        assert through(b"ratelab-before")
        mtu(200)
        assert not through(b"ratelab-lowered")
        assert dp.stats()["ports"][2]["mtu_drops"] == 1
        mtu(1500)
        assert through(b"ratelab-raised")
        assert dp.stats()["ports"][2]["mtu_drops"] == 1
        assert dp.stats()["ports"][2]["tx_errors"] == 0
    finally:
        dp.stop()
        tx.close()
        rx.close()


def _one_way(tx: socket.socket, rx: socket.socket, marker: bytes) -> float:
    """Seconds from sending a frame to 10.0.2.9 on one host side to its arrival on the other."""
    frame = ipv4_packet(bytes([10, 0, 2, 9]), payload=marker)
    start = time.monotonic()
    tx.send(frame)
    got = _receive_matching(rx, marker, 1, timeout=5.0)
    assert got, f"{marker!r} did not arrive"
    return time.monotonic() - start


def test_daemon_adds_the_link_delay_and_it_changes_at_run_time(
    veths: list[tuple[str, str]], capsys: pytest.CaptureFixture[str]
) -> None:
    from ratelab_switch import cli

    (sw1, host1), (sw2, host2) = veths
    env = daemon_env()
    proc = subprocess.Popen(
        [sys.executable, "-m", "ratelab_switch.daemon", str(BASIC_JSON),
         "-i", f"1@{sw1}", "-i", f"2@{sw2}", "--grpc-server-addr", "127.0.0.1:0",
         "--device-id", "1", "--queue-rate", "2=10mbit", "--link-delay", "2=50ms"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    tx, rx = raw_socket(host1), raw_socket(host2)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("Server listening on"), line
        addr = f"127.0.0.1:{int(line.strip().rsplit(':', 1)[1])}"
        with grpc.insecure_channel(addr) as ch:
            stub = P4RuntimeStub(ch)
            ctl = StreamClient(stub)
            try:
                ctl.arbitrate(1)
                ctl.get()
                commit_routed(stub)
                # 50 ms of link plus ~60 µs of transmission at 10 Mbit/s; the upper bound
                # only leaves room for scheduling on a busy machine.
                delays = [_one_way(tx, rx, b"ratelab-d%d" % i) for i in range(3)]
                assert all(0.050 <= d < 0.080 for d in delays), delays
                cmds = io.StringIO("set_link_delay 2 0\n")
                with pytest.MonkeyPatch.context() as mp:
                    mp.setattr("sys.stdin", cmds)
                    assert cli.main(["--grpc-addr", addr, "--device-id", "1"]) == 0
                assert "link delay of port 2 set to 0 us" in capsys.readouterr().out
                assert _one_way(tx, rx, b"ratelab-nodelay") < 0.040
            finally:
                ctl.close()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    finally:
        tx.close()
        rx.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
