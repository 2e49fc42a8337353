"""The state machines over Linux sockets.

RBCC runs over a raw IPv4 socket for protocol 253. The kernel writes the IPv4
header (no IP_HDRINCL): it picks the source address and the route, fills in
identification, TTL 64 and the checksum, and the datagram handed to it is
exactly what the state machines produce (RBCC header, TRUMP header, payload).
Received packets come with their IPv4 header, which is parsed for the source
address and stripped. Every raw socket for protocol 253 in a namespace sees
every such packet; the sender's socket is connected to the receiver, so it
sees only that host's packets, and the flow id picks its flow.

UDP sources and sinks use ordinary UDP sockets.

Local send failures (a full device queue: ENOBUFS, EAGAIN) are counted as
``send_errors`` and the datagram is treated as lost by the network; RBCC's loss
recovery then resends it.
"""

from __future__ import annotations

import errno
import random
import socket
import struct
from collections.abc import Callable
from dataclasses import dataclass

from ratelab_hoststack import run_rbcc_sender
from ratelab_model.packet import FLAG_ACK, FLAG_FIN, FLAG_SYN, IPPROTO_RBCC

from ratelab_hosts.loop import StopSignal, now_us, run_loop
from ratelab_hosts.rbcc_receiver import RbccListener
from ratelab_hosts.rbcc_sender import RbccSender, SenderConfig
from ratelab_hosts.udp import UdpSink, UdpSource, UdpSourceConfig
from ratelab_hosts.wire import IPV4_HEADER_LEN

SOCKET_BUFFER = 4 << 20
# Linux <linux/in.h>: never fragment RBCC packets (a router reads the RBCC
# header in the first fragment only); too large a packet fails with EMSGSIZE.
IP_MTU_DISCOVER = getattr(socket, "IP_MTU_DISCOVER", 10)
IP_PMTUDISC_DO = getattr(socket, "IP_PMTUDISC_DO", 2)
_SOFT_SEND_ERRORS = {errno.ENOBUFS, errno.EAGAIN, errno.EHOSTUNREACH, errno.ECONNREFUSED}


class DriverError(Exception):
    """A failure to report to the user in one line."""


def _os_error(what: str, exc: OSError) -> DriverError:
    if exc.errno == errno.EPERM or isinstance(exc, PermissionError):
        return DriverError(f"{what}: permission denied (raw sockets need root or CAP_NET_RAW)")
    if exc.errno == errno.EADDRNOTAVAIL:
        return DriverError(f"{what}: address not available on this host")
    if exc.errno == errno.EMSGSIZE:
        return DriverError(f"{what}: packet larger than the path MTU (lower --size)")
    return DriverError(f"{what}: {exc.strerror or exc}")


def open_raw_rbcc(bind_ip: str | None = None, peer_ip: str | None = None) -> socket.socket:
    try:
        sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, IPPROTO_RBCC)
    except OSError as exc:
        raise _os_error("cannot open a raw IPv4 socket for protocol 253", exc) from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, SOCKET_BUFFER)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SOCKET_BUFFER)
        sock.setsockopt(socket.IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DO)
        if bind_ip is not None:
            sock.bind((bind_ip, 0))
        if peer_ip is not None:
            sock.connect((peer_ip, 0))
        sock.setblocking(False)
    except OSError as exc:
        sock.close()
        raise _os_error(f"cannot use address {bind_ip or peer_ip}", exc) from None
    return sock


def split_ipv4(packet: bytes) -> tuple[str, bytes] | None:
    """(source address, payload) of a packet from a raw socket; None if mangled."""
    if len(packet) < IPV4_HEADER_LEN or packet[0] >> 4 != 4:
        return None
    ihl = (packet[0] & 0xF) * 4
    total = struct.unpack_from("!H", packet, 2)[0]
    if ihl < IPV4_HEADER_LEN or total < ihl or len(packet) < total:
        return None
    return socket.inet_ntoa(packet[12:16]), packet[ihl:total]


def _read_all(sock: socket.socket, handle: Callable[[bytes, str], None]) -> None:
    """Read until the socket would block; handle(data, source address)."""
    for _ in range(1024):  # bounded, so timers still run under a flood
        try:
            data, addr = sock.recvfrom(65535)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            return  # an asynchronous ICMP error (e.g. port unreachable): nothing to read
        handle(data, addr[0])


@dataclass
class SendCounters:
    send_errors: int = 0


def _send(sock: socket.socket, data: bytes, counters: SendCounters, dst: tuple[str, int]) -> None:
    try:
        sock.sendto(data, dst)
    except OSError as exc:
        if exc.errno in _SOFT_SEND_ERRORS:
            counters.send_errors += 1
            return
        raise _os_error(f"cannot send to {dst[0]}", exc) from None


# ---------------------------------------------------------------- RBCC
def rbcc_send(
    dst: str, config: SenderConfig, stop: StopSignal, src: str | None = None
) -> dict[str, object]:
    """One RBCC connection to `dst`, until it closes or fails (or a signal).
    The per-packet loop is Rust (`run_rbcc_sender`, GIL released): Python
    runs again only when it returns, done or interrupted."""
    counters = SendCounters()
    scheduling = "unchanged"
    with open_raw_rbcc(src, dst) as sock:
        sender = RbccSender(config, now_us())
        while not sender.done and not stop.stopped:
            try:
                _why, soft_errors, scheduling = run_rbcc_sender(
                    sender, sock.fileno(), dst, stop_fd=stop.reader.fileno()
                )
            except OSError as exc:
                raise _os_error(f"RBCC to {dst}", exc) from None
            counters.send_errors += soft_errors
    summary = sender.summary()
    if stop.stopped and not sender.done:
        summary["error"] = "interrupted"
    summary.update(dst=dst, send_errors=counters.send_errors, scheduling=scheduling)
    return summary


def rbcc_recv(
    listen: str,
    stop: StopSignal,
    *,
    duration_us: int | None = None,
    flows: int = 0,
    linger_us: int = 200_000,
    emulate_loss: float = 0.0,
    loss_seed: int = 1,
    on_ready: Callable[[], None] = lambda: None,
) -> dict[str, object]:
    """Answer RBCC connections to `listen` until `duration_us` has passed or
    `flows` connections are complete (0: no limit), then `linger_us` more to
    answer repeated FINs. `emulate_loss` drops that fraction of arriving data
    packets (seeded) before the stack sees them, as a lossy path would."""
    listener = RbccListener()
    counters = SendCounters()
    rng = random.Random(loss_seed)
    emulated_drops = 0
    start = now_us()
    deadline = None if duration_us is None else start + duration_us
    with open_raw_rbcc(listen) as sock:
        on_ready()

        def complete() -> int:
            return sum(1 for r in listener.flows.values() if r.complete)

        def on_packet(packet: bytes, _addr: str) -> None:
            nonlocal emulated_drops
            parts = split_ipv4(packet)
            if parts is None:
                return
            src, data = parts
            is_data = bool(data) and not data[0] & (FLAG_SYN | FLAG_FIN | FLAG_ACK)
            if emulate_loss and is_data and rng.random() < emulate_loss:
                emulated_drops += 1
                return
            for reply in listener.on_datagram(now_us(), src, data):
                _send(sock, reply, counters, (src, 0))
            listener.take_delivered()  # the application reads and discards

        run_loop(
            [sock],
            poll_at=lambda: None,
            on_timer=lambda now: None,
            on_readable=lambda s: _read_all(s, on_packet),
            done=lambda: flows > 0 and complete() >= flows,
            stop=stop,
            deadline_us=deadline,
        )
        if flows > 0 and complete() >= flows and linger_us > 0 and not stop.stopped:
            linger_end = now_us() + linger_us
            if deadline is not None:
                linger_end = min(linger_end, deadline)
            run_loop(
                [sock],
                poll_at=lambda: None,
                on_timer=lambda now: None,
                on_readable=lambda s: _read_all(s, on_packet),
                done=lambda: False,
                stop=stop,
                deadline_us=linger_end,
            )
    results = []
    for (src, _flow), receiver in listener.flows.items():
        summary = receiver.summary()
        summary["src"] = src
        results.append(summary)
    return {
        "listen": listen,
        "elapsed_s": (now_us() - start) / 1e6,
        "emulated_drops": emulated_drops,
        "malformed": listener.malformed,
        "send_errors": counters.send_errors,
        "flows": results,
    }


# ---------------------------------------------------------------- UDP
def _udp_socket(what: str) -> socket.socket:
    try:
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, SOCKET_BUFFER)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SOCKET_BUFFER)
    except OSError as exc:
        raise _os_error(what, exc) from None
    sock.setblocking(False)
    return sock


def udp_send(dst: tuple[str, int], config: UdpSourceConfig, stop: StopSignal) -> dict[str, object]:
    counters = SendCounters()
    with _udp_socket("cannot open a UDP socket") as sock:
        try:
            sock.connect(dst)
        except OSError as exc:
            raise _os_error(f"cannot reach {dst[0]}", exc) from None
        source = UdpSource(config, now_us())

        def on_timer(now: int) -> None:
            for payload in source.on_timer(now):
                _send(sock, payload, counters, dst)

        run_loop(
            [sock],
            poll_at=source.poll_at,
            on_timer=on_timer,
            on_readable=lambda s: _read_all(s, lambda data, addr: None),
            done=lambda: source.done,
            stop=stop,
        )
    summary = source.summary()
    summary.update(dst=f"{dst[0]}:{dst[1]}", send_errors=counters.send_errors)
    return summary


def udp_sink(
    listen: tuple[str, int],
    stop: StopSignal,
    *,
    duration_us: int | None = None,
    idle_us: int | None = None,
    on_ready: Callable[[], None] = lambda: None,
) -> dict[str, object]:
    """Count probe datagrams arriving at `listen` until `duration_us` has
    passed, or `idle_us` without datagrams after the first, or a signal."""
    start = now_us()
    sink = UdpSink(start)
    deadline = None if duration_us is None else start + duration_us
    last_arrival: list[int] = []
    with _udp_socket("cannot open a UDP socket") as sock:
        try:
            sock.bind(listen)
        except OSError as exc:
            raise _os_error(f"cannot listen on {listen[0]}:{listen[1]}", exc) from None
        on_ready()

        def on_datagram(data: bytes, addr: str) -> None:
            now = now_us()
            sink.on_datagram(now, addr, data)
            last_arrival[:] = [now]

        def idle_at() -> int | None:
            if idle_us is None or not last_arrival:
                return None
            return last_arrival[0] + idle_us

        def idle_done() -> bool:
            at = idle_at()
            return at is not None and now_us() >= at

        run_loop(
            [sock],
            poll_at=idle_at,
            on_timer=lambda now: None,
            on_readable=lambda s: _read_all(s, on_datagram),
            done=idle_done,
            stop=stop,
            deadline_us=deadline,
        )
    return {
        "listen": f"{listen[0]}:{listen[1]}",
        "elapsed_s": (now_us() - start) / 1e6,
        "malformed": sink.malformed,
        "flows": sink.summary(),
    }
