"""Kernel TCP over real sockets: ``tcp_send`` (one connection, its congestion
control chosen per socket with TCP_CONGESTION before connect, TCP_INFO
sampled on a grid) and ``tcp_sink`` (accepts any number of connections,
reads and discards, counts per connection). The patterns and the bookkeeping
are the sans-IO parts in tcp_traffic.py.

Socket buffer sizes are left to the kernel: setting SO_SNDBUF / SO_RCVBUF
turns autotuning off and changes what TCP does (the receive window). The
sender sets TCP_NOTSENT_LOWAT instead, so at most NOTSENT_LOWAT bytes sit in
the kernel unsent: writing then ends (and an off-period starts) about when
the pattern says, not after megabytes of send buffer drain.

A run ends once the receiver has everything: the sender shuts its side
(FIN) after the last write and waits for the receiver to close (the sink
does on end of stream) or for its FIN to be acknowledged, at most
DRAIN_TIMEOUT_US.
"""

from __future__ import annotations

import errno
import os
import selectors
import socket
from collections.abc import Callable

from ratelab_hosts.drivers import DriverError
from ratelab_hosts.loop import US_PER_S, StopSignal, now_us
from ratelab_hosts.tcp_info import TCP_INFO_BUFLEN, TcpInfo, parse_tcp_info
from ratelab_hosts.tcp_traffic import (
    BULK_WRITE,
    STREAM_WRITE_MAX,
    TcpSchedule,
    TcpSendConfig,
    TcpSendRecorder,
    TcpSinkStats,
    check_congestion_control,
)

AVAILABLE_CC = "/proc/sys/net/ipv4/tcp_available_congestion_control"
ALLOWED_CC = "/proc/sys/net/ipv4/tcp_allowed_congestion_control"
# Linux <netinet/tcp.h> numbers, where Python does not name them.
TCP_CONGESTION = getattr(socket, "TCP_CONGESTION", 13)
TCP_INFO = getattr(socket, "TCP_INFO", 11)
TCP_NOTSENT_LOWAT = getattr(socket, "TCP_NOTSENT_LOWAT", 25)
TCP_CA_NAME_MAX = 16

NOTSENT_LOWAT = 64 << 10
CONNECT_TIMEOUT_US = 10 * US_PER_S
DRAIN_TIMEOUT_US = 30 * US_PER_S
RECV_BUFFER = 256 << 10
_BURST = 64  # accepts / reads / writes per wake-up, so timers still run under load


class CongestionControlError(DriverError):
    """--cc names what this kernel cannot use (bad input: exit status 2)."""


def _read_words(path: str) -> list[str]:
    try:
        with open(path, encoding="ascii") as f:
            return f.read().split()
    except OSError as exc:
        raise CongestionControlError(
            f"--cc: cannot read {path} ({exc.strerror or exc}); is this Linux?"
        ) from None


def available_congestion_control() -> list[str]:
    return _read_words(AVAILABLE_CC)


def check_cc(name: str) -> None:
    """CongestionControlError unless the kernel offers `name` (no module
    loading is tried: the kernels used here cannot load modules)."""
    try:
        check_congestion_control(name, available_congestion_control())
    except ValueError as exc:
        raise CongestionControlError(str(exc)) from None


def _set_cc(sock: socket.socket, name: str) -> str:
    """Set the socket's congestion control; return what the kernel reports."""
    try:
        sock.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, name.encode())
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            check_cc(name)  # raises with the list, unless /proc and the kernel disagree
        if exc.errno == errno.EPERM:
            allowed = " ".join(_read_words(ALLOWED_CC))
            raise CongestionControlError(
                f"--cc {name}: not permitted (without CAP_NET_ADMIN only: {allowed})"
            ) from None
        raise CongestionControlError(f"--cc {name}: {exc.strerror or exc}") from None
    raw = sock.getsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, TCP_CA_NAME_MAX)
    return raw.split(b"\0", 1)[0].decode("ascii", "replace")


def tcp_info(sock: socket.socket) -> TcpInfo:
    return parse_tcp_info(sock.getsockopt(socket.IPPROTO_TCP, TCP_INFO, TCP_INFO_BUFLEN))


def _endpoint(addr: tuple[str, int]) -> str:
    return f"{addr[0]}:{addr[1]}"


def _connect(sock: socket.socket, dst: tuple[str, int], stop: StopSignal) -> bool:
    """Connect the non-blocking `sock`; False if a signal came first."""
    where = f"cannot connect to {_endpoint(dst)}"
    err = sock.connect_ex(dst)
    if err not in (0, errno.EINPROGRESS):
        raise DriverError(f"{where}: {os.strerror(err)}")
    deadline = now_us() + CONNECT_TIMEOUT_US
    with selectors.SelectSelector() as selector:
        selector.register(sock, selectors.EVENT_WRITE)
        selector.register(stop.reader, selectors.EVENT_READ)
        while err == errno.EINPROGRESS:
            if stop.stopped:
                return False
            left = deadline - now_us()
            if left <= 0:
                raise DriverError(f"{where}: no answer within {CONNECT_TIMEOUT_US // US_PER_S} s")
            for key, _mask in selector.select(left / US_PER_S):
                if key.fileobj is stop.reader:
                    stop.drain()
                else:
                    err = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
    if err:
        raise DriverError(f"{where}: {os.strerror(err)}")
    return True


def _conn_error(exc: OSError) -> str:
    if isinstance(exc, ConnectionResetError):
        return "connection reset by the receiver"
    if isinstance(exc, BrokenPipeError):
        return "the receiver closed the connection early"
    return f"connection failed: {exc.strerror or exc}"


def tcp_send(dst: tuple[str, int], config: TcpSendConfig, stop: StopSignal) -> dict[str, object]:
    """One TCP connection to `dst` with the pattern of `config`, until the
    receiver has everything, the connection fails, or a signal."""
    check_cc(config.cc)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        cc = _set_cc(sock, config.cc)
        sock.setsockopt(socket.IPPROTO_TCP, TCP_NOTSENT_LOWAT, NOTSENT_LOWAT)
        if config.pattern == "stream":
            # Each paced write goes out as written, not held back by Nagle.
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setblocking(False)
        flow: dict[str, object] = {
            "role": "tcp-send",
            "flow_id": config.flow_id,
            "cc": cc,
            "pattern": config.pattern,
            "duration_s": None if config.duration_us is None else config.duration_us / US_PER_S,
            "bytes_limit": config.bytes_limit,
            "on_s": None if config.on_us is None else config.on_us / US_PER_S,
            "off_s": None if config.off_us is None else config.off_us / US_PER_S,
            "rate": config.rate,
            "stream_write": config.stream_write,
            "sample_interval_s": config.sample_interval_us / US_PER_S,
            "notsent_lowat": NOTSENT_LOWAT,
            "dst": _endpoint(dst),
            "src": None,
        }
        if not _connect(sock, dst, stop):
            # the same keys as a run that connected, so readers need no special case
            flow.update(dict.fromkeys(RUN_KEYS), state="failed", error="interrupted")
            flow.update(bytes_sent=0, ssthresh_changes=0, samples=[])
            return flow
        flow["src"] = _endpoint(sock.getsockname())
        flow.update(_run_connection(sock, config, stop))
    return flow


def _run_connection(
    sock: socket.socket, config: TcpSendConfig, stop: StopSignal
) -> dict[str, object]:
    start = now_us()
    schedule = TcpSchedule(config, start)
    recorder = TcpSendRecorder(start, config.sample_interval_us)
    zeros = memoryview(bytes(max(BULK_WRITE, STREAM_WRITE_MAX)))
    error: str | None = None
    last_write_us: int | None = None
    drain_deadline: int | None = None  # set once the FIN is queued
    done = False
    info = tcp_info(sock)

    def write_due(now: int) -> bool:
        """Write what the schedule allows; True if the socket is full with
        more to write."""
        nonlocal last_write_us
        for _ in range(_BURST):
            n = schedule.next_write(now)
            if n == 0:
                return False
            sent = sock.send(zeros[:n])  # OSError: handled by the caller
            schedule.on_written(sent)
            last_write_us = now
            if sent < n:
                return True
        return schedule.next_write(now) > 0

    with selectors.SelectSelector() as selector:
        selector.register(sock, selectors.EVENT_READ)
        selector.register(stop.reader, selectors.EVENT_READ)
        while True:
            now = now_us()
            if now >= recorder.next_at:
                info = tcp_info(sock)
                recorder.record(now, info, schedule.written)
            if stop.stopped:
                error = "interrupted"
                break
            blocked = False
            if drain_deadline is None:
                try:
                    blocked = write_due(now)
                except BlockingIOError:
                    blocked = True
                except OSError as exc:
                    error = _conn_error(exc)
                    break
                if schedule.finished(now):
                    try:
                        sock.shutdown(socket.SHUT_WR)
                    except OSError as exc:
                        error = _conn_error(exc)
                        break
                    drain_deadline = now + DRAIN_TIMEOUT_US
            elif info.state_name in ("FIN_WAIT2", "TIME_WAIT"):
                break  # our FIN, so all data, acknowledged; the receiver keeps its side open
            elif now >= drain_deadline:
                error = f"not all data acknowledged {DRAIN_TIMEOUT_US // US_PER_S} s after the end"
                break
            at = schedule.wake_at(now) if drain_deadline is None else drain_deadline
            wake = recorder.next_at if at is None else min(recorder.next_at, at)
            selector.modify(sock, selectors.EVENT_READ | (selectors.EVENT_WRITE if blocked else 0))
            for key, mask in selector.select(max(0, wake - now) / US_PER_S):
                if key.fileobj is stop.reader:
                    stop.drain()
                elif mask & selectors.EVENT_READ:
                    try:
                        closed = sock.recv(RECV_BUFFER) == b""  # the sink sends nothing
                    except BlockingIOError:
                        continue
                    except OSError as exc:
                        error = _conn_error(exc)
                        break
                    if closed and drain_deadline is not None:
                        done = True  # the receiver read to the end and closed
                    elif closed:
                        error = "the receiver closed the connection early"
            if done or error:
                break
    end = now_us()
    try:
        info = tcp_info(sock)
        recorder.record(end, info, schedule.written)
    except OSError:
        pass  # keep the last sample
    elapsed = end - start
    stats = recorder.stats()
    acked = stats["bytes_acked"]
    result = {
        "state": "failed" if error else "closed",
        "error": error,
        "established_monotonic_s": start / US_PER_S,
        "send_span_s": None if last_write_us is None else (last_write_us - start) / US_PER_S,
        "elapsed_s": elapsed / US_PER_S,
        "bytes_sent": schedule.written,
        **stats,
        "goodput_bps": acked * 8 * US_PER_S // elapsed
        if isinstance(acked, int) and elapsed > 0
        else None,
        "samples": recorder.samples,
    }
    assert tuple(result) == RUN_KEYS
    return result


# The run's keys of a tcp-send flow, in order (the ratelab stack's driver adds its own).
RUN_KEYS = (
    "state",
    "error",
    "established_monotonic_s",
    "send_span_s",
    "elapsed_s",
    "bytes_sent",
    "retransmissions",
    "bytes_acked",
    "ssthresh_changes",
    "rtt_min_us",
    "rtt_mean_us",
    "rtt_max_us",
    "goodput_bps",
    "samples",
)


def tcp_sink(
    listen: tuple[str, int],
    stop: StopSignal,
    *,
    duration_us: int | None = None,
    idle_us: int | None = None,
    on_ready: Callable[[], None] = lambda: None,
) -> dict[str, object]:
    """Accept TCP connections on `listen`, read and discard, until
    `duration_us` has passed, or `idle_us` without a byte, accept or close
    after the first connection, or a signal."""
    start = now_us()
    stats = TcpSinkStats(start)
    deadline = None if duration_us is None else start + duration_us
    where = _endpoint(listen)
    buf = bytearray(RECV_BUFFER)
    last_event: int | None = None
    with (
        socket.socket(socket.AF_INET, socket.SOCK_STREAM) as lsock,
        selectors.SelectSelector() as selector,
    ):
        try:
            # A sink restarted between runs must not wait out TIME_WAIT.
            lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            lsock.bind(listen)
            lsock.listen(128)
        except OSError as exc:
            what = (
                "address not available on this host"
                if exc.errno == errno.EADDRNOTAVAIL
                else exc.strerror or str(exc)
            )
            raise DriverError(f"cannot listen on {where}: {what}") from None
        lsock.setblocking(False)
        on_ready()
        selector.register(lsock, selectors.EVENT_READ)
        selector.register(stop.reader, selectors.EVENT_READ)
        conns: dict[int, socket.socket] = {}

        def close(conn_id: int, end: str) -> None:
            conn = conns.pop(conn_id)
            selector.unregister(conn)
            conn.close()
            stats.on_close(now_us(), conn_id, end)

        def accept() -> None:
            for _ in range(_BURST):
                try:
                    conn, addr = lsock.accept()
                except (BlockingIOError, InterruptedError):
                    return
                except OSError:
                    return  # aborted before accept, or out of descriptors: try later
                conn.setblocking(False)
                conn_id = len(stats.conns)
                conns[conn_id] = conn
                selector.register(conn, selectors.EVENT_READ, conn_id)
                stats.on_accept(now_us(), conn_id, _endpoint(addr))

        def read(conn_id: int) -> None:
            conn = conns[conn_id]
            for _ in range(_BURST):
                try:
                    n = conn.recv_into(buf)
                except (BlockingIOError, InterruptedError):
                    return
                except OSError:
                    close(conn_id, "reset")
                    return
                if n == 0:
                    close(conn_id, "fin")
                    return
                stats.on_data(now_us(), conn_id, n)

        try:
            while not stop.stopped:
                now = now_us()
                idle_at = None if idle_us is None or last_event is None else last_event + idle_us
                wake = min((t for t in (deadline, idle_at) if t is not None), default=None)
                if wake is not None and now >= wake:
                    break
                timeout = None if wake is None else (wake - now) / US_PER_S
                for key, _mask in selector.select(timeout):
                    if key.fileobj is stop.reader:
                        stop.drain()
                    elif key.fileobj is lsock:
                        accept()
                        last_event = now_us()
                    else:
                        read(key.data)
                        last_event = now_us()
        finally:
            for conn in conns.values():
                conn.close()
    return {
        "listen": where,
        "start_monotonic_s": start / US_PER_S,
        "elapsed_s": (now_us() - start) / US_PER_S,
        "flows": stats.summary(),
    }
