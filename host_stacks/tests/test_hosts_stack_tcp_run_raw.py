"""TcpConnection.run_raw, the live driver's per-frame loop in Rust, without
root: the wire is a datagram socket pair (one frame per datagram, as a
packet socket), a listening connection at the other end runs its own
run_raw in a thread. Checked: it answers frames (handshake, a transfer all
acknowledged, the close), writes for the application up to its budget,
returns at its deadline and not before, on a state change, on its stop
descriptor and on a signal (the Python handler has run by then), and a bad
descriptor is an error, not a hang."""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import pytest
from ratelab_hoststack import TcpConfig, TcpConnection

MS = 1_000_000
A = ("10.0.1.2", 40000)
B = ("10.0.2.1", 5001)
ETH = bytes(range(12)) + b"\x08\x00"
LOWAT = 64 << 10
TRANSFER = 300_000


def now() -> int:
    return time.monotonic_ns()


class Peer(threading.Thread):
    """The listening end, run by run_raw in slices until told to stop; it
    closes its side once the sender's FIN is in."""

    def __init__(self, fd: int) -> None:
        super().__init__(daemon=True)
        self.fd = fd
        self.done = threading.Event()
        self.stats: dict[str, object] = {}
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            conn = TcpConnection.listen(TcpConfig(), B, 7, now())
            conn.set_link_header(ETH)
            while not self.done.is_set():
                conn.run_raw(self.fd, now() + 20 * MS)
                if conn.state == "CLOSE_WAIT":
                    conn.close()
            self.stats = conn.stats()
        except BaseException as exc:  # reported by the test
            self.error = exc


@pytest.fixture
def wire() -> Iterator[tuple[socket.socket, Peer]]:
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    for s in (ours, theirs):
        s.setblocking(False)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
    peer = Peer(theirs.fileno())
    peer.start()
    yield ours, peer
    peer.done.set()
    peer.join(timeout=5)
    ours.close()
    theirs.close()


def connect() -> TcpConnection:
    conn = TcpConnection.connect(TcpConfig(cc="reno"), A, B, 1_000, now())
    conn.set_link_header(ETH)
    return conn


def run_until_state(conn: TcpConnection, fd: int, timeout_ms: int = 2_000) -> str:
    why, written, last = conn.run_raw(fd, now() + timeout_ms * MS)
    assert (written, last) == (0, None)
    return why


def test_answers_frames_writes_its_budget_and_closes(
    wire: tuple[socket.socket, Peer],
) -> None:
    sock, peer = wire
    fd = sock.fileno()
    conn = connect()
    # the SYN goes out, the SYN-ACK comes in and is answered: a state change
    assert run_until_state(conn, fd) == "state" and conn.state == "ESTABLISHED"
    before = now()
    why, written, last = conn.run_raw(
        fd, now() + 5_000 * MS, write_budget=TRANSFER, write_lowat=LOWAT
    )
    assert (why, written) == ("written", TRANSFER)
    assert last is not None and before <= last <= now()
    # never more than the low-water mark unsent: written as it was sent
    assert conn.notsent_bytes <= LOWAT
    deadline = now() + 5_000 * MS
    while conn.stats()["bytes_acked"] < TRANSFER and now() < deadline:
        assert conn.run_raw(fd, now() + 10 * MS)[0] == "deadline"
    s = conn.stats()
    assert s["bytes_acked"] == TRANSFER and s["retransmissions"] == 0
    assert s["segments_received"] > TRANSFER // 1448 // 2  # the peer's ACKs, all handled
    conn.close()
    assert run_until_state(conn, fd) == "state" and conn.state == "FIN_WAIT1"
    assert run_until_state(conn, fd) == "state" and conn.state == "FIN_WAIT2"
    assert run_until_state(conn, fd) == "state" and conn.state == "TIME_WAIT"
    peer.done.set()
    peer.join(timeout=5)
    assert peer.error is None, peer.error
    assert peer.stats["bytes_received"] == TRANSFER and peer.stats["malformed"] == 0
    assert conn.stats()["malformed"] == 0 and conn.local_drops == 0


def test_returns_at_its_deadline_not_before(wire: tuple[socket.socket, Peer]) -> None:
    sock, _peer = wire
    conn = connect()
    assert run_until_state(conn, sock.fileno()) == "state"
    for wait_ms in (0, 30, 200):
        until = now() + wait_ms * MS
        assert conn.run_raw(sock.fileno(), until) == ("deadline", 0, None)
        late = now() - until
        assert 0 <= late < 150 * MS, late  # a loaded machine may wake it late, never early


def test_a_deadline_in_the_past_handles_nothing(wire: tuple[socket.socket, Peer]) -> None:
    sock, _peer = wire
    conn = connect()
    assert conn.run_raw(sock.fileno(), now() - MS) == ("deadline", 0, None)
    assert conn.state == "SYN_SENT" and conn.stats()["segments_sent"] == 0


def test_returns_when_the_stop_descriptor_is_readable(
    wire: tuple[socket.socket, Peer],
) -> None:
    sock, _peer = wire
    conn = connect()
    reader, writer = socket.socketpair()
    with reader, writer:
        assert run_until_state(conn, sock.fileno()) == "state"
        timer = threading.Timer(0.1, writer.send, (b"\0",))
        timer.start()
        start = now()
        why = conn.run_raw(sock.fileno(), now() + 10_000 * MS, stop_fd=reader.fileno())
        timer.join()
        assert why == ("stopped", 0, None)
        assert 50 * MS < now() - start < 5_000 * MS


# A single-threaded process (a signal goes to its one thread, as in the
# driver): a connection that nobody answers waits in run_raw for 20 s while
# the test sends SIGTERM until it exits; run_raw must return "signal" with the
# Python handler already run. SIGINT with Python's default handler raises
# KeyboardInterrupt out of run_raw.
SIGNALLED = """
import json, signal, socket, sys, time
from ratelab_hoststack import TcpConfig, TcpConnection
seen = []
if sys.argv[1] == "handler":
    signal.signal(signal.SIGTERM, lambda *a: seen.append(1))
ours, _theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
conn = TcpConnection.connect(TcpConfig(), ("10.0.1.2", 1), ("10.0.2.1", 2), 0, time.monotonic_ns())
conn.set_link_header(bytes(14))
start = time.monotonic_ns()
try:
    print("ready", flush=True)
    why = conn.run_raw(ours.fileno(), start + 20 * 10**9)[0]
except KeyboardInterrupt:
    why = "KeyboardInterrupt"
signal.signal(signal.SIGINT, signal.SIG_IGN)  # the test's next one must not cut the answer
signal.signal(signal.SIGTERM, signal.SIG_IGN)
print(json.dumps({"why": why, "handled": bool(seen), "s": (time.monotonic_ns() - start) / 1e9}))
"""


@pytest.mark.parametrize(
    ("mode", "signum", "expected"),
    [
        ("handler", signal.SIGTERM, {"why": "signal", "handled": True}),
        ("default", signal.SIGINT, {"why": "KeyboardInterrupt", "handled": False}),
    ],
    ids=["sigterm-handler", "sigint-default"],
)
def test_a_signal_ends_the_wait(mode: str, signum: int, expected: dict[str, object]) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", SIGNALLED, mode],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        # it calls run_raw right after "ready": give it time to be in there; with a
        # handler, one more signal after each 0.5 s without an answer (one that came
        # before run_raw only ran the handler); without, KeyboardInterrupt ends it
        time.sleep(0.5)
        for _ in range(20 if mode == "handler" else 1):
            os.kill(proc.pid, signum)
            if select.select([proc.stdout], [], [], 0.5)[0]:
                break
        out, err = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    got = json.loads(out)
    assert {k: got[k] for k in expected} == expected, err
    assert got["s"] < 10, got


def test_a_bad_descriptor_is_an_error() -> None:
    conn = connect()
    with pytest.raises(ValueError, match="fd and stop_fd must be open file descriptors"):
        conn.run_raw(-1, now() + MS)
    closed = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    fd = closed.fileno()
    closed.close()
    with pytest.raises(OSError, match="cannot receive: Bad file descriptor") as info:
        conn.run_raw(fd, now() + 1_000 * MS)
    assert info.value.errno == 9 and "\n" not in str(info.value)
