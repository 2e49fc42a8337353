"""Readiness: once a control port accepts connections, the switch forwards.

Scripts (Mininet's P4 switch classes, p4c's test drivers) start the switch,
poll its control port until it accepts and send at once. The daemon must have
loaded the program of its command line and opened every port by then. Needs
root (veth pairs) and the ratelab_engine extension.
"""

from __future__ import annotations

import json
import select
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("ratelab_engine", reason="the ratelab_engine extension is not built")

from switch_basic_program import BASIC_JSON, ipv4_packet
from switch_process import daemon_env, stop_daemon
from switch_thrift import free_port
from switch_veths import raw_socket, veth_pairs


@pytest.fixture
def veths() -> Iterator[list[tuple[str, str]]]:
    yield from veth_pairs(2)


def _forward_everything_json(tmp_path: Path) -> Path:
    """basic.json whose ipv4_lpm misses forward to port 2: no entry needed to forward."""
    program = json.loads(BASIC_JSON.read_text())
    [table] = program["pipelines"][0]["tables"]
    table["default_entry"] = {
        "action_id": 2,  # MyIngress.ipv4_forward(dstAddr, port)
        "action_const": False,
        "action_data": ["0x000000000222", "0x2"],
        "action_entry_const": False,
    }
    path = tmp_path / "forward_all.json"
    path.write_text(json.dumps(program))
    return path


def _wait_until_accepting(port: int, proc: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        assert proc.poll() is None, "the switch exited"
        time.sleep(0.001)
    raise AssertionError(f"port {port} never accepted")


@pytest.mark.parametrize("control", ["grpc", "thrift"])
def test_a_frame_sent_the_instant_a_control_port_accepts_comes_out(
    control: str, veths: list[tuple[str, str]], tmp_path: Path
) -> None:
    (sw1, host1), (sw2, host2) = veths
    grpc_port, thrift_port = free_port(), free_port()
    env = daemon_env()
    tx, rx = raw_socket(host1), raw_socket(host2)
    frame = ipv4_packet(bytes([10, 0, 2, 9]), payload=b"ratelab-first-frame")
    proc = subprocess.Popen(
        [sys.executable, "-m", "ratelab_switch.daemon", str(_forward_everything_json(tmp_path)),
         "-i", f"1@{sw1}", "-i", f"2@{sw2}",
         "--grpc-server-addr", f"127.0.0.1:{grpc_port}", "--thrift-port", str(thrift_port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
    )  # fmt: skip
    try:
        _wait_until_accepting(grpc_port if control == "grpc" else thrift_port, proc, 60)
        tx.send(frame)
        got = None
        deadline = time.monotonic() + 5
        while got is None and time.monotonic() < deadline:
            ready, _, _ = select.select([rx], [], [], max(0.0, deadline - time.monotonic()))
            if ready and b"ratelab-first-frame" in (data := rx.recv(65535)):
                got = data
        assert got is not None, "the first frame did not come out"
        assert got[:6] == bytes.fromhex("000000000222") and got[34:] == frame[34:]
    finally:
        tx.close()
        rx.close()
        stop_daemon(proc)
