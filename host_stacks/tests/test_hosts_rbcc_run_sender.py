"""run_rbcc_sender, the live RBCC sender's loop in Rust, without root: the
wire is a datagram socket pair, a thread at the other end plays the
receiving host (it answers with RbccReceiver and wraps each ACK in an IPv4
header from the sender's peer, as a raw socket delivers it). Checked: a
whole transfer paced and closed, packets from another source or not IPv4
ignored, the lateness histogram in the summary, a full send queue counted
as soft errors, a send that fails for good kept with its errno, returns at
its deadline, on its stop descriptor and on a signal (the Python handler
has run by then), and bad descriptors or a bad peer are errors, not hangs."""

from __future__ import annotations

import errno
import json
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import pytest
from ratelab_hoststack import RbccReceiver, RbccSender, SenderConfig, run_rbcc_sender
from scheduling_probe import probe

PEER = "10.0.2.2"
FLOW = 7
MS = 1_000


def now_us() -> int:
    return time.monotonic_ns() // 1000


def ipv4(payload: bytes, src: str = PEER) -> bytes:
    """An IPv4 header (protocol 253, no options) and the payload."""
    header = struct.pack(
        "!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), 0, 0, 64, 253, 0,
        socket.inet_aton(src), socket.inet_aton("10.0.1.1"),
    )  # fmt: skip
    return header + payload


class Receiver(threading.Thread):
    """The receiving host: answers every datagram from the sender (until
    `mute` is set), recording arrival times of data packets."""

    def __init__(self, sock: socket.socket, src: str = PEER) -> None:
        super().__init__(daemon=True)
        self.sock = sock
        self.src = src
        self.receiver = RbccReceiver(FLOW)
        self.arrivals: list[int] = []
        self.done = threading.Event()
        self.mute = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            while not self.done.is_set():
                if not select.select([self.sock], [], [], 0.02)[0] or self.mute.is_set():
                    continue
                data = self.sock.recv(65_536)
                if data and not data[0] & 0x07:  # no SYN/FIN/ACK flag: data
                    self.arrivals.append(now_us())
                for ack in self.receiver.on_datagram(now_us(), data):
                    self.sock.send(ipv4(ack, self.src))
        except BaseException as exc:  # reported by the test
            self.error = exc


@pytest.fixture
def wire() -> Iterator[tuple[socket.socket, socket.socket]]:
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    with ours, theirs:
        ours.setblocking(False)
        yield ours, theirs


def sender(rate: int = 250_000, **kw: int) -> RbccSender:
    config = SenderConfig(desired_rate=rate, initial_rate=rate, size=1000, flow_id=FLOW, **kw)
    return RbccSender(config, now_us())


def test_a_transfer_is_paced_acknowledged_and_closed(
    wire: tuple[socket.socket, socket.socket],
) -> None:
    ours, theirs = wire
    peer = Receiver(theirs)
    peer.start()
    s = sender(rate=500_000, segments=200)  # 2 ms apart: 0.4 s
    try:
        why, soft, _ = run_rbcc_sender(s, ours.fileno(), PEER, until_us=now_us() + 20_000 * MS)
    finally:
        peer.done.set()
        peer.join(timeout=5)
    assert peer.error is None, peer.error
    assert (why, soft) == ("done", 0)
    summary = s.summary()
    assert (summary["state"], summary["fin_acked"], summary["segments_acked"]) == (
        "closed",
        True,
        200,
    )
    assert summary["retransmissions"] == 0 and peer.receiver.complete
    # Paced, not burst: the 200 packets arrive over at least the schedule's 398 ms.
    assert peer.arrivals[-1] - peer.arrivals[0] >= 199 * 2_000
    late = summary["pacing_lateness"]
    assert isinstance(late, dict)
    # Every departure after the first has a schedule and is counted once.
    assert late["departures"] == 199 == sum(count for _, count in late["histogram"])
    assert late["max_us"] >= late["p99_us"] >= late["p90_us"] >= late["p50_us"] >= 0


def test_packets_from_another_source_or_not_ipv4_are_ignored(
    wire: tuple[socket.socket, socket.socket],
) -> None:
    ours, theirs = wire
    peer = Receiver(theirs, src="10.0.2.3")  # answers from the wrong address
    peer.start()
    theirs.send(b"\x45\x00")  # too short for IPv4
    theirs.send(b"\x60" + bytes(59))  # IPv6
    s = sender(segments=10)
    try:
        why, _, _ = run_rbcc_sender(s, ours.fileno(), PEER, until_us=now_us() + 300 * MS)
    finally:
        peer.done.set()
        peer.join(timeout=5)
    assert peer.error is None, peer.error
    assert why == "deadline"
    assert s.summary()["state"] == "syn_sent" and s.metrics.acks_received == 0
    assert s.metrics.syn_sent == 1 and s.metrics.malformed == 0


def test_a_full_send_queue_is_counted_as_soft_errors(
    wire: tuple[socket.socket, socket.socket],
) -> None:
    ours, theirs = wire
    peer = Receiver(theirs)
    peer.start()
    s = sender(rate=50_000_000, duration_us=10_000_000)  # 20 us apart
    try:
        assert run_rbcc_sender(s, ours.fileno(), PEER, until_us=now_us() + 200 * MS)[0] == (
            "deadline"
        )
        assert s.summary()["state"] == "established"
        peer.mute.set()  # the receiver stops reading: its queue fills
        why, soft, _ = run_rbcc_sender(s, ours.fileno(), PEER, until_us=now_us() + 300 * MS)
    finally:
        peer.done.set()
        peer.join(timeout=5)
    assert why == "deadline" and soft > 0
    assert s.summary()["state"] == "established"  # lost packets, not a failure


def test_a_send_that_fails_for_good_keeps_its_errno(
    wire: tuple[socket.socket, socket.socket],
) -> None:
    ours, _theirs = wire
    ours.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    config = SenderConfig(desired_rate=10**6, initial_rate=10**6, size=65_535, segments=1)
    s = RbccSender(config, now_us())
    # The SYN is small; a data packet never fits: EMSGSIZE, as above the path MTU.
    synack = _synack_for(s)
    s.on_datagram(now_us(), synack)
    with pytest.raises(OSError, match="cannot send: Message too long") as info:
        run_rbcc_sender(s, ours.fileno(), PEER, until_us=now_us() + 2_000 * MS)
    assert info.value.errno == errno.EMSGSIZE and "\n" not in str(info.value)


def _synack_for(s: RbccSender) -> bytes:
    receiver = RbccReceiver(s.config.flow_id)
    [syn] = s.on_timer(now_us())
    [synack] = receiver.on_datagram(now_us(), syn)
    return synack


def test_returns_at_its_deadline_not_before(wire: tuple[socket.socket, socket.socket]) -> None:
    ours, _theirs = wire
    s = sender(segments=10)
    for wait_ms in (0, 30, 200):
        until = now_us() + wait_ms * MS
        assert run_rbcc_sender(s, ours.fileno(), PEER, until_us=until)[:2] == ("deadline", 0)
        late = now_us() - until
        assert 0 <= late < 150 * MS, late  # a loaded machine may wake it late, never early
    assert s.metrics.syn_sent == 1  # the next SYN is due 1 s after the first


def test_returns_when_the_stop_descriptor_is_readable(
    wire: tuple[socket.socket, socket.socket],
) -> None:
    ours, _theirs = wire
    s = sender(segments=10)
    reader, writer = socket.socketpair()
    with reader, writer:
        timer = threading.Timer(0.1, writer.send, (b"\0",))
        timer.start()
        start = now_us()
        why = run_rbcc_sender(s, ours.fileno(), PEER, stop_fd=reader.fileno())[:2]
        timer.join()
    assert why == ("stopped", 0)
    assert 50 * MS < now_us() - start < 5_000 * MS


# A single-threaded process (a signal goes to its one thread, as in the
# driver): a sender nobody answers waits in run_rbcc_sender (no deadline)
# while the test sends the signal until it exits; the call must return
# "signal" with the Python handler already run. SIGINT with Python's default
# handler raises KeyboardInterrupt out of it.
SIGNALLED = """
import json, signal, socket, sys, time
from ratelab_hoststack import RbccSender, SenderConfig, run_rbcc_sender
seen = []
if sys.argv[1] == "handler":
    signal.signal(signal.SIGTERM, lambda *a: seen.append(1))
ours, _theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
config = SenderConfig(desired_rate=1000, initial_rate=1000, segments=1)
sender = RbccSender(config, time.monotonic_ns() // 1000)
start = time.monotonic_ns()
try:
    print("ready", flush=True)
    why = run_rbcc_sender(sender, ours.fileno(), "10.0.2.2")[0]
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
        # one more signal after each 0.5 s without an answer (one that came before
        # the call only ran the handler); without a handler, KeyboardInterrupt ends it
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


def test_bad_descriptors_and_peers_are_errors() -> None:
    s = sender(segments=1)
    with pytest.raises(ValueError, match="fd and stop_fd must be open file descriptors"):
        run_rbcc_sender(s, -1, PEER)
    with pytest.raises(ValueError, match="fd and stop_fd must be open file descriptors"):
        run_rbcc_sender(s, 0, PEER, stop_fd=-2)
    with pytest.raises(ValueError, match=r'peer "10\.0\.2" is not an IPv4 address'):
        run_rbcc_sender(s, 0, "10.0.2")
    closed = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    fd = closed.fileno()
    closed.close()
    # the SYN is due at once: the send finds the descriptor closed
    with pytest.raises(OSError, match="cannot send: Bad file descriptor") as info:
        run_rbcc_sender(s, fd, PEER, until_us=now_us() + 1_000 * MS)
    assert info.value.errno == errno.EBADF and "\n" not in str(info.value)
    r, w = os.pipe()  # not a socket
    try:
        with pytest.raises(OSError, match="cannot send: Socket operation on non-socket") as info:
            run_rbcc_sender(sender(segments=1), r, PEER, until_us=now_us() + 1_000 * MS)
        assert info.value.errno == errno.ENOTSOCK
    finally:
        os.close(r)
        os.close(w)
    # a closed stop descriptor: the wait says so instead of returning at once
    ours, _theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    with ours, _theirs:
        s = sender(segments=1)
        s.on_timer(now_us())  # the SYN is out: the loop goes straight to its wait
        stop = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        stop_fd = stop.fileno()
        stop.close()
        with pytest.raises(OSError, match="cannot wait for the socket: Bad file descriptor"):
            run_rbcc_sender(s, ours.fileno(), PEER, stop_fd=stop_fd, until_us=now_us() + 1_000 * MS)


SCHEDULING = """
from ratelab_hoststack import RbccSender, SenderConfig, run_rbcc_sender
ours, _theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
config = SenderConfig(desired_rate=1000, initial_rate=1000, segments=1)
sender = RbccSender(config, time.monotonic_ns() // 1000)
before = sched()
watcher = threading.Thread(target=look)
watcher.start()
until = time.monotonic_ns() // 1000 + 300_000
result = run_rbcc_sender(sender, ours.fileno(), "10.0.2.2", until_us=until)
watcher.join()
print(json.dumps({"result": result, "before": before, "during": seen[0], "after": sched()}))
"""


def _scheduling(user: str) -> dict[str, object]:
    return probe(SCHEDULING, user)


def test_the_loop_runs_at_sched_fifo_where_it_may_and_gives_it_back() -> None:
    got = _scheduling("self")
    if os.geteuid() != 0:  # without CAP_SYS_NICE: the next test's case
        assert got["result"][2] == _scheduling("self")["result"][2] != "fifo"
        return
    assert got["result"] == ["deadline", 0, "fifo"]
    assert got["before"]["policy"] == got["after"]["policy"] == 0  # SCHED_OTHER
    assert got["during"]["policy"] == 1  # SCHED_FIFO


def test_without_privilege_the_loop_takes_the_shortest_slice() -> None:
    got = _scheduling("nobody" if os.geteuid() == 0 else "self")
    assert got["result"][:2] == ["deadline", 0]
    assert got["before"]["policy"] == got["during"]["policy"] == got["after"]["policy"] == 0
    if "se.slice" not in got["before"]:  # a kernel before 6.12 has no per-task slice
        assert got["result"][2] == "unchanged"
        return
    assert got["result"][2] == "short-slice"
    assert got["during"]["se.slice"] == 100_000 != got["before"]["se.slice"]
    assert got["after"]["se.slice"] == got["before"]["se.slice"]
