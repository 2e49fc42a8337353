"""``tcp-send --stack ratelab``: one TCP flow of ratelab-stack's sans-IO TCP
(through ratelab_hoststack.TcpConnection) over raw packet I/O
(raw_link.py), to the kernel's ``tcp-sink`` on another host.

The per-frame path is in Rust: ``TcpConnection.run_raw`` reads the flow's
packet socket, handles each frame at its own clock reading and sends what it
lets out at once, with the GIL released (an ACK's answer left 82 us after it
arrived, median, when this loop was Python's; the kernel takes 15 us, and at
a drop-tail bottleneck that timing decided the shares, docs/NET.md). Python
runs between its returns: at each sample time, schedule change and deadline,
when the connection's state changes, and on a signal.

The application side is the kernel sender's (tcp_traffic.TcpSchedule: bulk,
on-off, stream) with the same NOTSENT_LOWAT rule: the application writes
only while fewer than NOTSENT_LOWAT bytes wait unsent. While it may write
(bulk, and on-off in an on period) ``run_raw`` writes for it, up to what the
schedule still allows; a stream's writes are due at the schedule's times,
so Python makes them when ``run_raw`` returns at those times.

Samples are on a grid of the stack's own time: the stack sees each event at
the time read from the clock for it, and the sample at grid point ``g`` is
the connection's state after every event before ``g`` (``run_raw`` returns
at ``g`` before handling anything at or after it), so it is exact, never
late. One more sample is taken at the end, as the kernel sender does.

The flow ends when the FIN is acknowledged (all data is), then lingers up to
LINGER_NS for the sink's FIN to acknowledge it, so the sink closes cleanly.
"""

from __future__ import annotations

import secrets
import time

from ratelab_hoststack import TcpConfig, TcpConnection

from ratelab_hosts.drivers import DriverError
from ratelab_hosts.loop import StopSignal
from ratelab_hosts.raw_link import RawLink, plan_link
from ratelab_hosts.tcp_driver import CONNECT_TIMEOUT_US, DRAIN_TIMEOUT_US, NOTSENT_LOWAT
from ratelab_hosts.tcp_driver import RUN_KEYS as KERNEL_RUN_KEYS
from ratelab_hosts.tcp_traffic import BULK_WRITE, STREAM_WRITE_MAX, TcpSchedule, TcpSendConfig

NS_PER_US = 1_000
NS_PER_S = 1_000_000_000
LINGER_NS = NS_PER_S
IPV4_TCP_HEADERS = 40  # IPv4 and TCP headers without options: MSS = MTU - 40
MSS_MAX = 1460
EPHEMERAL_PORTS = (32768, 60999)  # Linux's default ip_local_port_range
UNLIMITED = (1 << 64) - 1  # run_raw's write budget: no byte count to stop at
_DONE_STATES = ("FIN_WAIT2", "TIME_WAIT")


def _ns() -> int:
    return time.monotonic_ns()


def _endpoint(addr: tuple[str, int]) -> str:
    return f"{addr[0]}:{addr[1]}"


def _int(value: object) -> int:
    assert isinstance(value, int)
    return value


def sample_record(t_ns: int, conn: TcpConnection, written: int) -> dict[str, object]:
    """One entry of `samples`, the keys of the kernel sender's (tcp_traffic.
    sample_record): windows in segments of the stack's payload MSS, times in
    us; null where the stack keeps no such value (retrans, lost)."""
    s = conn.stats()
    smss = _int(s["smss"])

    def us(key: str) -> int | None:
        v = s[key]
        return None if v is None else _int(v) // NS_PER_US

    ssthresh = s["ssthresh"]
    if s["in_recovery"]:
        ca_state = "recovery"
    elif s["backoff"]:
        ca_state = "loss"  # after a timeout, until an ACK of new data
    else:
        ca_state = "open"
    return {
        "t_s": t_ns / NS_PER_S,
        "state": s["state"],
        "ca_state": ca_state,
        "rtt_us": us("srtt_ns"),
        "rttvar_us": us("rttvar_ns"),
        "min_rtt_us": us("min_rtt_ns"),
        "snd_cwnd": _int(s["cwnd"]) // smss,
        "snd_ssthresh": None if ssthresh is None else _int(ssthresh) // smss,
        "unacked": s["segments_out"],
        "retrans": None,
        "lost": None,
        "total_retrans": s["retransmissions"],
        "bytes_acked": s["bytes_acked"],
        # as tcpi_bytes_sent: retransmitted bytes included
        "bytes_sent": _int(s["bytes_sent"]) + _int(s["bytes_retransmitted"]),
        "notsent_bytes": s["notsent_bytes"],
        "delivery_rate": s["delivery_rate"],
        "pacing_rate": s["pacing_rate"],
        "written": written,
    }


class _Flow:
    """One run: the connection, the link, the application and the samples."""

    def __init__(
        self,
        conn: TcpConnection,
        link: RawLink,
        config: TcpSendConfig,
        stop: StopSignal,
    ) -> None:
        self.conn = conn
        self.link = link
        self.config = config
        self.stop = stop
        self.interval_ns = config.sample_interval_us * NS_PER_US
        self.start_ns: int | None = None  # established
        self.next_sample_ns: int | None = None
        self.samples: list[dict[str, object]] = []
        self.schedule: TcpSchedule | None = None
        self.zeros = bytes(max(BULK_WRITE, STREAM_WRITE_MAX))
        self.last_write_ns: int | None = None
        self.scheduling: list[str] = []  # how run_raw's calls ran, each kind once

    # -- time and samples

    def catch_up(self, now: int) -> None:
        """Samples for the grid points up to `now`, before events at `now`."""
        if self.next_sample_ns is None or self.start_ns is None:
            return
        written = 0 if self.schedule is None else self.schedule.written
        while self.next_sample_ns <= now:
            self.samples.append(
                sample_record(self.next_sample_ns - self.start_ns, self.conn, written)
            )
            self.next_sample_ns += self.interval_ns

    # -- packets

    def run_raw(self, until_ns: int | None, write_budget: int = 0) -> str:
        """Let the connection run on the link until `until_ns` (None: no
        deadline), a state change, a spent write budget or a signal; the
        application's writes it made are booked in the schedule."""
        try:
            why, written, last_write = self.conn.run_raw(
                self.link.sock.fileno(),
                UNLIMITED if until_ns is None else until_ns,
                stop_fd=self.stop.reader.fileno(),
                write_budget=write_budget,
                write_lowat=NOTSENT_LOWAT,
            )
        except OSError as exc:
            raise DriverError(f"{exc.strerror} (on {self.link.plan.iface})") from None
        kind = self.conn.scheduling
        if kind is not None and kind not in self.scheduling:
            self.scheduling.append(kind)
        if written:
            assert self.schedule is not None
            self.schedule.on_written(written)
            self.last_write_ns = last_write
        if why == "stopped":
            self.stop.drain()
        return str(why)

    def write_budget(self, now: int) -> int:
        """What run_raw may write for the application from now to its next
        return: bulk and on-off in an on period write whenever there is
        room, up to the byte count; a stream writes only at its times."""
        assert self.schedule is not None
        if self.config.pattern == "stream" or self.schedule.next_write(now // NS_PER_US) == 0:
            return 0
        limit = self.config.bytes_limit
        return UNLIMITED if limit is None else limit - self.schedule.written

    # -- application

    def write_due(self, now: int) -> None:
        assert self.schedule is not None
        now_us = now // NS_PER_US
        while (n := self.schedule.next_write(now_us)) > 0:
            room = min(NOTSENT_LOWAT - self.conn.notsent_bytes, self.conn.send_capacity)
            n = min(n, room)
            if n <= 0:
                return
            sent = self.conn.send(self.zeros if n == len(self.zeros) else self.zeros[:n])
            self.schedule.on_written(sent)
            self.last_write_ns = now
            if sent < n:
                return

    def handshake(self, dst: str) -> bool:
        """Until established (True) or a signal (False); DriverError on a
        reset, on no answer, or after CONNECT_TIMEOUT_US."""
        where = f"cannot connect to {dst}"
        deadline = _ns() + CONNECT_TIMEOUT_US * NS_PER_US
        while not self.conn.is_established:
            now = _ns()
            if self.stop.stopped:
                return False
            if self.conn.is_closed:
                reset = self.conn.stats()["resets_received"]
                raise DriverError(f"{where}: {'connection refused' if reset else 'no answer'}")
            if now >= deadline:
                raise DriverError(f"{where}: no answer within {CONNECT_TIMEOUT_US // 10**6} s")
            self.run_raw(deadline)
        return True

    def run(self) -> dict[str, object]:
        start = _ns()
        self.start_ns = self.next_sample_ns = start
        self.schedule = TcpSchedule(self.config, start // NS_PER_US)
        error: str | None = None
        drain_deadline: int | None = None  # set once the FIN is queued
        linger_deadline: int | None = None  # set once the FIN is acknowledged
        conn = self.conn
        while True:
            now = _ns()
            self.catch_up(now)
            if self.stop.stopped:
                error = "interrupted"
                break
            if conn.state == "CLOSE" and linger_deadline is None:
                error = (
                    "connection reset by the receiver"
                    if conn.stats()["resets_received"]
                    else "connection closed before all data was acknowledged"
                )
                break
            if drain_deadline is None:
                if conn.peer_closed:
                    error = "the receiver closed the connection early"
                    break
                self.write_due(now)
                if self.schedule.finished(now // NS_PER_US):
                    conn.close()
                    drain_deadline = now + DRAIN_TIMEOUT_US * NS_PER_US
            elif linger_deadline is None and conn.state in _DONE_STATES:
                linger_deadline = now + LINGER_NS
            elif linger_deadline is None and now >= drain_deadline:
                error = f"not all data acknowledged {DRAIN_TIMEOUT_US // 10**6} s after the end"
                break
            if linger_deadline is not None and (
                conn.state == "TIME_WAIT" or now >= linger_deadline
            ):
                break  # our FIN, so all data, acknowledged; the sink's FIN acknowledged
            wake_us = self.schedule.wake_at(now // NS_PER_US) if drain_deadline is None else None
            due = [
                t
                for t in (
                    self.next_sample_ns,
                    None if wake_us is None else wake_us * NS_PER_US,
                    drain_deadline if linger_deadline is None else linger_deadline,
                )
                if t is not None
            ]
            budget = self.write_budget(now) if drain_deadline is None else 0
            self.run_raw(min(due) if due else None, budget)
        end = _ns()
        self.samples.append(sample_record(end - start, conn, self.schedule.written))
        return self.result(start, end, error)

    def result(self, start: int, end: int, error: str | None) -> dict[str, object]:
        assert self.schedule is not None
        s = self.conn.stats()
        rtts = [r for r in (x["rtt_us"] for x in self.samples) if isinstance(r, int) and r]
        acked = _int(s["bytes_acked"])
        elapsed = end - start
        last_write = self.last_write_ns
        return {
            "state": "failed" if error else "closed",
            "error": error,
            "established_monotonic_s": start / NS_PER_S,
            "send_span_s": None if last_write is None else (last_write - start) / NS_PER_S,
            "elapsed_s": elapsed / NS_PER_S,
            "bytes_sent": self.schedule.written,
            "retransmissions": s["retransmissions"],
            "bytes_acked": acked,
            "ssthresh_changes": s["ssthresh_changes"],
            "rtt_min_us": min(rtts) if rtts else None,
            "rtt_mean_us": sum(rtts) // len(rtts) if rtts else None,
            "rtt_max_us": max(rtts) if rtts else None,
            "goodput_bps": acked * 8 * NS_PER_S // elapsed if elapsed > 0 else None,
            "samples": self.samples,
            "rtos": s["rtos"],
            "spurious_rtos": s["spurious_rtos"],
            "malformed": s["malformed"],
            "resets_received": s["resets_received"],
            "resets_sent": s["resets_sent"],
            "local_drops": self.conn.local_drops,
            "scheduling": self.scheduling_name(),
        }

    def scheduling_name(self) -> str | None:
        """How run_raw's loop ran (fifo, short-slice or unchanged; kinds
        that differed between calls joined with "+"); None if it never ran."""
        return "+".join(self.scheduling) or None


def stack_tcp_send(
    dst: tuple[str, int],
    src: str,
    config: TcpSendConfig,
    stack: dict[str, object],
    stop: StopSignal,
    src_port: int | None = None,
) -> dict[str, object]:
    """One ratelab-stack TCP connection from `src` (an address this host
    does not own) to `dst`, with the pattern of `config` and the TcpConfig
    keyword arguments `stack` (cc, iw, initial_rto_ns, ...; the MSS follows
    the interface MTU, at most 1460). The source port is `src_port`, or a
    random ephemeral one."""
    plan = plan_link(src, dst[0])
    mss = min(MSS_MAX, plan.mtu - IPV4_TCP_HEADERS)
    tcp_config = TcpConfig(**stack, mss=mss)  # type: ignore[arg-type]
    port = src_port
    if port is None:
        port = EPHEMERAL_PORTS[0] + secrets.randbelow(EPHEMERAL_PORTS[1] - EPHEMERAL_PORTS[0] + 1)
    conn = TcpConnection.connect(tcp_config, (src, port), dst, secrets.randbits(32), _ns())
    conn.set_link_header(plan.ethernet_header)
    flow: dict[str, object] = {
        "role": "tcp-send",
        "flow_id": config.flow_id,
        "cc": tcp_config.cc,
        "pattern": config.pattern,
        "duration_s": None if config.duration_us is None else config.duration_us / 10**6,
        "bytes_limit": config.bytes_limit,
        "on_s": None if config.on_us is None else config.on_us / 10**6,
        "off_s": None if config.off_us is None else config.off_us / 10**6,
        "rate": config.rate,
        "stream_write": config.stream_write,
        "sample_interval_s": config.sample_interval_us / 10**6,
        "notsent_lowat": NOTSENT_LOWAT,
        "dst": _endpoint(dst),
        "src": _endpoint((src, port)),
        "stack": "ratelab",
        "iw": tcp_config.iw,
        "initial_rto_s": tcp_config.initial_rto_ns / NS_PER_S,
        "min_rto_s": tcp_config.min_rto_ns / NS_PER_S,
        "rto_formula": tcp_config.rto_formula,
        "sack": tcp_config.sack,
        "delayed_ack": tcp_config.delayed_ack_ns is not None,
        "prr": tcp_config.prr,
        "hystart": tcp_config.hystart,
        "mss": tcp_config.mss,
        "interface": plan.iface,
    }
    link = RawLink(plan, src, port)
    try:
        run = _Flow(conn, link, config, stop)
        if not run.handshake(_endpoint(dst)):
            # the same keys as a run that connected, so readers need no special case
            flow.update(dict.fromkeys(RUN_KEYS), state="failed", error="interrupted")
            stats = conn.stats()
            flow.update(bytes_sent=0, ssthresh_changes=0, samples=[], rtos=stats["rtos"])
            flow.update(spurious_rtos=0, malformed=stats["malformed"])
            flow.update(resets_received=stats["resets_received"])
            flow.update(resets_sent=stats["resets_sent"])
            flow.update(local_drops=conn.local_drops, scheduling=run.scheduling_name())
            return flow
        flow.update(run.run())
    finally:
        link.close()
    return flow


RUN_KEYS = (
    *KERNEL_RUN_KEYS,
    "rtos",
    "spurious_rtos",
    "malformed",
    "resets_received",
    "resets_sent",
    "local_drops",
    "scheduling",
)
