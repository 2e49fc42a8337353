"""Type stubs of ratelab_hoststack, the Python binding of ratelab's rate-based
host (crate ratelab-rbcc-host). Times are integer microseconds, rates bytes
per second, datagrams IPv4 payloads."""

from typing import ClassVar

RATE_UNLIMITED: int
RBCC_OVERHEAD: int
UDP_OVERHEAD: int
UDP_PROBE_LEN: int

# UDP traffic (crate ratelab-stack's udp module): sizes are IPv4 total lengths,
# rates B/s of IPv4 datagrams; payloads start with the 20-byte probe header.
class UdpSourceConfig:
    rate: int
    size: int
    duration_us: int
    poisson: bool
    seed: int
    on_us: int | None
    off_us: int | None
    flow_id: int
    def __init__(
        self,
        rate: int,
        size: int | None = None,
        duration_us: int | None = None,
        poisson: bool = False,
        seed: int | None = None,
        on_us: int | None = None,
        off_us: int | None = None,
        flow_id: int | None = None,
    ) -> None: ...

class UdpSource:
    config: UdpSourceConfig
    done: bool
    packets_sent: int
    bytes_sent: int
    def __init__(self, config: UdpSourceConfig, now_us: int) -> None: ...
    def poll_at(self) -> int | None: ...
    def on_timer(self, now_us: int) -> list[bytes]: ...
    def summary(self) -> dict[str, object]: ...

class UdpSink:
    malformed: int
    def __init__(self, now_us: int) -> None: ...
    def on_datagram(self, now_us: int, src: str, payload: bytes) -> None: ...
    def summary(self) -> list[dict[str, object]]: ...

class Pacer:
    rate: int
    max_lateness_us: int
    restarts: int
    lost_us: int
    def __init__(self, rate: int, max_lateness_us: int = 1_000) -> None: ...
    def next_at(self) -> int | None: ...
    def ready(self, now_us: int) -> bool: ...
    def on_send(self, now_us: int, size: int) -> None: ...
    def set_rate(self, rate: int) -> None: ...

class SenderConfig:
    desired_rate: int
    initial_rate: int
    size: int
    segments: int | None
    duration_us: int | None
    flow_id: int
    adopt_synack_rate: bool
    syn_interval_us: int
    give_up_us: int
    max_lateness_us: int
    payload_len: int
    def __init__(
        self,
        desired_rate: int,
        initial_rate: int,
        size: int | None = None,
        segments: int | None = None,
        duration_us: int | None = None,
        flow_id: int | None = None,
        adopt_synack_rate: bool = False,
        syn_interval_us: int | None = None,
        give_up_us: int | None = None,
        max_lateness_us: int | None = None,
    ) -> None: ...

class SenderState:
    SYN_SENT: ClassVar[SenderState]
    ESTABLISHED: ClassVar[SenderState]
    FIN_SENT: ClassVar[SenderState]
    CLOSED: ClassVar[SenderState]
    FAILED: ClassVar[SenderState]
    value: str

class RateSample:
    t_us: int
    rate: int
    return_rate: int
    return_bottle_node: int

class SenderMetrics:
    syn_sent: int
    fin_sent: int
    data_packets_sent: int
    data_bytes_sent: int
    retransmissions: int
    rto_expiries: int
    acks_received: int
    segments_acked: int
    acked_while_queued: int
    malformed: int
    srtt_us: int | None
    established_us: int | None
    last_ack_us: int | None
    fin_acked: bool
    first_data_us: int | None
    last_data_us: int | None
    rates: list[RateSample]

class RbccSender:
    config: SenderConfig
    state: SenderState
    error: str | None
    rate: int
    return_rate: int
    return_bottle_node: int
    done: bool
    metrics: SenderMetrics
    def __init__(self, config: SenderConfig, now_us: int) -> None: ...
    def poll_at(self) -> int | None: ...
    def on_timer(self, now_us: int) -> list[bytes]: ...
    def on_datagram(self, now_us: int, data: bytes) -> list[bytes]: ...
    def summary(self) -> dict[str, object]: ...

def run_rbcc_sender(
    sender: RbccSender,
    fd: int,
    peer: str,
    *,
    stop_fd: int | None = None,
    until_us: int | None = None,
) -> tuple[str, int, str]: ...

class ReceiverState:
    LISTEN: ClassVar[ReceiverState]
    ESTABLISHED: ClassVar[ReceiverState]
    CLOSED: ClassVar[ReceiverState]
    value: str

class EchoSample:
    t_us: int
    rate: int
    bottle_node: int

class ReceiverMetrics:
    packets_received: int
    bytes_received: int
    duplicates: int
    segments_delivered: int
    bytes_delivered: int
    acks_sent: int
    malformed: int
    max_pn: int
    fin_pn: int | None
    fin_seq: int | None
    first_data_us: int | None
    last_delivery_us: int | None
    rates: list[EchoSample]

class RbccReceiver:
    flow_id: int
    state: ReceiverState
    metrics: ReceiverMetrics
    lost: int
    complete: bool
    def __init__(self, flow_id: int) -> None: ...
    def poll_at(self) -> int | None: ...
    def on_timer(self, now_us: int) -> list[bytes]: ...
    def take_delivered(self) -> list[tuple[int, bytes]]: ...
    def on_datagram(self, now_us: int, data: bytes) -> list[bytes]: ...
    def missing(self) -> tuple[int, tuple[tuple[int, int], ...]]: ...
    def summary(self) -> dict[str, object]: ...

class RbccListener:
    flows: dict[tuple[str, int], RbccReceiver]
    malformed: int
    def __init__(self) -> None: ...
    def on_datagram(self, now_us: int, src: str, data: bytes) -> list[bytes]: ...
    def take_delivered(self) -> list[tuple[int, bytes]]: ...

# ratelab-stack's TCP (host_stacks/stack): times are integer nanoseconds.

class TcpConfig:
    cc: str
    iw: int
    initial_rto_ns: int
    min_rto_ns: int
    max_rto_ns: int
    rto_formula: str
    mss: int
    sack: bool
    timestamps: bool
    delayed_ack_ns: int | None
    prr: bool
    hystart: bool
    send_buffer: int  # bytes: the cap when auto-tuned
    send_buffer_policy: str  # auto (grows with cwnd as Linux's) or fixed
    recv_buffer: int
    def __init__(
        self,
        cc: str = "newreno",
        iw: int | None = None,
        initial_rto_ns: int | None = None,
        min_rto_ns: int | None = None,
        max_rto_ns: int | None = None,
        mss: int | None = None,
        sack: bool = True,
        timestamps: bool = True,
        window_scale: bool = True,
        delayed_ack: bool = True,
        delayed_ack_ns: int | None = None,
        prr: bool = False,
        send_buffer: int | None = None,
        recv_buffer: int | None = None,
        rto_formula: str = "rfc6298",
        hystart: bool = False,
        send_buffer_policy: str = "auto",
    ) -> None: ...

class TcpConnection:
    state: str
    is_established: bool
    is_closed: bool
    peer_closed: bool
    send_capacity: int
    send_queue: int
    recv_ready: int
    cwnd: int
    ssthresh: int | None
    smss: int
    bytes_in_flight: int
    notsent_bytes: int
    local_drops: int
    scheduling: str | None
    local: tuple[str, int]
    remote: tuple[str, int]
    @staticmethod
    def connect(
        config: TcpConfig, local: tuple[str, int], remote: tuple[str, int], iss: int, now_ns: int
    ) -> TcpConnection: ...
    @staticmethod
    def listen(
        config: TcpConfig, local: tuple[str, int], iss: int, now_ns: int
    ) -> TcpConnection: ...
    def handle_segment(self, now_ns: int, src: str, segment: bytes) -> None: ...
    def poll_transmit(self, now_ns: int) -> bytes | None: ...
    def set_link_header(self, header: bytes) -> None: ...
    def handle_packet(self, now_ns: int, frame: bytes) -> bool: ...
    def poll_packet(self, now_ns: int) -> bytes | None: ...
    def send(self, data: bytes) -> int: ...
    def recv(self, max_bytes: int) -> bytes: ...
    def close(self) -> None: ...
    def abort(self) -> None: ...
    def poll_at(self) -> int | None: ...
    def run_raw(
        self,
        fd: int,
        until_ns: int,
        *,
        stop_fd: int | None = None,
        write_budget: int = 0,
        write_lowat: int = 0,
    ) -> tuple[str, int, int | None]: ...
    def stats(self) -> dict[str, object]: ...
    def check_invariants(self) -> None: ...
