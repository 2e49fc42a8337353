"""EngineAdapter (and Dataplane) over the Rust engine, the `ratelab_engine` extension.

Control operations go straight to `ratelab_engine.Switch`; packets are moved by
`ratelab_engine.Dataplane`, a Rust thread that owns the ports' AF_PACKET sockets and
locks the same engine per batch, never holding the GIL. Python keeps the controller's
side: PacketOut injection, and a delivery thread that hands PacketIns and digests to
the Device.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

import grpc
import ratelab_engine as rust
from ratelab_p4info import MatchKind

from .engine_api import (
    ActionCall,
    CounterValue,
    EngineError,
    IndirectTarget,
    InstalledEntry,
    KeyField,
    MeterConfig,
    Replica,
)
from .options import DaemonOptions, PortTrace, QueueRate
from .port_settings import MAX_PORT, PortConfig, PortSettings, PortStats

if TYPE_CHECKING:
    from .device import Device

log = logging.getLogger("ratelab_switch")


_CODES = {
    "not_found": grpc.StatusCode.NOT_FOUND,
    "bad_handle": grpc.StatusCode.NOT_FOUND,
    "out_of_range": grpc.StatusCode.OUT_OF_RANGE,
    "invalid_argument": grpc.StatusCode.INVALID_ARGUMENT,
    "duplicate": grpc.StatusCode.ALREADY_EXISTS,
    "immutable": grpc.StatusCode.PERMISSION_DENIED,
    "full": grpc.StatusCode.RESOURCE_EXHAUSTED,
    "load": grpc.StatusCode.INVALID_ARGUMENT,
}
_BMV2_TOP_PRIORITY = (1 << 31) - 1  # BMv2: lower wins; P4Runtime: higher wins


@contextmanager
def _engine_errors() -> Iterator[None]:
    try:
        yield
    except rust.EngineError as e:
        kind, message = e.args
        raise EngineError(message, _CODES.get(kind, grpc.StatusCode.INTERNAL)) from None
    except OverflowError as e:  # a value that does not fit the binding's integer types
        raise EngineError(str(e), grpc.StatusCode.OUT_OF_RANGE) from None


def _key_field(kind: str, a: int, b: int) -> KeyField:
    """The inverse of `_key_tuple` (values raw: the service normalises them)."""
    if kind == "exact":
        return KeyField(MatchKind.EXACT, a)
    if kind == "lpm":
        return KeyField(MatchKind.LPM, a, prefix_len=b)
    if kind == "ternary":
        return KeyField(MatchKind.TERNARY, a, mask=b)
    if kind == "range":
        return KeyField(MatchKind.RANGE, a, high=b)
    if kind == "optional":
        return KeyField(MatchKind.OPTIONAL, a, mask=1 if b else 0)
    raise EngineError(f"a {kind!r} match has no P4Runtime form", grpc.StatusCode.UNIMPLEMENTED)


def _key_tuple(k: KeyField) -> tuple[str, int, int]:
    if k.kind is MatchKind.EXACT:
        return ("exact", k.value, 0)
    if k.kind is MatchKind.LPM:
        return ("lpm", k.value, k.prefix_len)
    if k.kind is MatchKind.TERNARY:
        return ("ternary", k.value, k.mask)
    if k.kind is MatchKind.RANGE:
        return ("range", k.value, k.high)
    return ("optional", k.value, 1 if k.mask else 0)


def _warn_if_interpreted(sw: rust.Switch) -> None:
    """The engine compiles a program's controls to native code; when LLVM refuses, it
    interprets them (same results, slower) and the log says why."""
    if not sw.compiled():
        log.warning("the program's controls run interpreted (slower): %s", sw.compile_error())


class RustEngine:
    """EngineAdapter and Dataplane over `ratelab_engine.Switch`."""

    def __init__(
        self,
        seed: int = 0,
        queue_depth: dict[int, int] | None = None,
        queue_rate: dict[int, tuple[str, int]] | None = None,
        link_delay: dict[int, int] | None = None,
        link_jitter: dict[int, int] | None = None,
        port_trace: dict[int, PortTrace] | None = None,
        priority_queues: dict[int, int] | None = None,
        interfaces: dict[int, str] | None = None,
        pcap_dir: str | None = None,
        cpu_port: int | None = None,
        use_files: int | None = None,
    ) -> None:
        self._seed = seed
        # Kept here too: settings made before a program exists apply when it does.
        self._ports = PortSettings()
        for port, depth in (queue_depth or {}).items():
            self._ports.set(port, queue_depth=depth)
        for port, (unit, value) in (queue_rate or {}).items():
            self._ports.set(port, queue_rate=QueueRate(value, unit))
        for port, delay_us in (link_delay or {}).items():
            self._ports.set(port, link_delay_us=delay_us)
        for port, jitter_us in (link_jitter or {}).items():
            self._ports.set(port, link_jitter_us=jitter_us)
        # Applied once, when the switch is built: the trace starts then.
        self._port_trace = dict(port_trace or {})
        # Applied once, when the switch is built (the engine refuses to change a
        # port's queues while packets are queued on it).
        self._priority_queues = dict(priority_queues or {})
        self._interfaces = dict(interfaces or {})
        self._pcap_dir = pcap_dir
        self._use_files = use_files
        self._cpu_port = cpu_port
        self._sw: rust.Switch | None = None
        # The JSON running now (BMv2's runtime API, bmv2_runtime.py, reads its names).
        self.program: bytes | None = None
        self._mc_groups: set[int] = set()
        self._clone_sessions: set[int] = set()
        self._dataplane: rust.Dataplane | None = None
        self._delivery: threading.Thread | None = None

    # ------------------------------------------------------------ program
    @property
    def switch(self) -> rust.Switch:
        if self._sw is None:
            raise EngineError("no program is loaded", grpc.StatusCode.FAILED_PRECONDITION)
        return self._sw

    def verify_config(self, device_config: bytes) -> None:
        with _engine_errors():
            rust.validate(device_config)

    def load_config(self, device_config: bytes) -> None:
        with _engine_errors():
            if self._sw is None:
                sw = rust.Switch(device_config, self._seed)
                with self._ports.lock:
                    default, ports = self._ports.default, dict(self._ports.ports)
                    if default != PortConfig():
                        for port in range(MAX_PORT + 1):
                            _apply(sw, port, default)
                    for port, config in ports.items():
                        _apply(sw, port, config)
                    _follow_traces(sw, self._port_trace)
                    for port, queues in sorted(self._priority_queues.items()):
                        sw.set_priority_queues(port, queues)
                    self._sw = sw
                if self._dataplane is not None:
                    self._dataplane.set_switch(sw)
                _warn_if_interpreted(sw)
                self.program = device_config
                return
            self._sw.reload(device_config)
            _warn_if_interpreted(self._sw)
            # A new pipeline starts with no replication state (the engine keeps it).
            for g in self._mc_groups:
                self._sw.mc_group_delete(g)
            for s in self._clone_sessions:
                self._sw.clone_session_delete(s)
            self._mc_groups.clear()
            self._clone_sessions.clear()
            self.program = device_config

    # ------------------------------------------------------------ ports (PortTarget)
    def _set_ports(self, port: int | None, **change: object) -> None:
        with self._ports.lock, _engine_errors():
            for p in self._ports.set(port, **change):
                if self._sw is not None:
                    _apply(self._sw, p, self._ports.get(p))

    def set_queue_depth(self, port: int | None, depth: int) -> None:
        self._set_ports(port, queue_depth=depth)

    def set_queue_rate(self, port: int | None, rate: QueueRate) -> None:
        self._set_ports(port, queue_rate=rate)

    def set_link_delay(self, port: int | None, delay_us: int) -> None:
        self._set_ports(port, link_delay_us=delay_us)

    def port_settings(self) -> tuple[PortConfig, dict[int, PortConfig]]:
        with self._ports.lock:
            return self._ports.default, dict(self._ports.ports)

    def in_flight(self, port: int) -> int:
        return 0 if self._sw is None else int(self._sw.in_flight(port))

    def stats_ports(self) -> list[int]:
        with self._ports.lock:
            return sorted(set(self._interfaces) | set(self._ports.ports))

    def interface(self, port: int) -> str | None:
        return self._interfaces.get(port)

    def port_stats(self, ports: Sequence[int]) -> list[PortStats]:
        # The packet thread's counters of every port in one read.
        loops = {} if self._dataplane is None else self._dataplane.stats()["ports"]
        return [self._port_stats(port, loops.get(port, {})) for port in ports]

    def _port_stats(self, port: int, loop: dict[str, int]) -> PortStats:
        engine = (0,) * 6 if self._sw is None else tuple(self._sw.port_stats(port))
        rx_packets, rx_bytes, tx_packets, tx_bytes, queue_drops, mtu_drops = engine
        return {
            "rx_packets": rx_packets,
            "rx_bytes": rx_bytes,
            "tx_packets": tx_packets,
            "tx_bytes": tx_bytes,
            "queue_length": 0 if self._sw is None else int(self._sw.queue_len(port)),
            "queue_drops": queue_drops,
            # The engine drops frames over a port MTU it was given, the packet
            # thread those over the interface's: one count for the researcher.
            "mtu_drops": mtu_drops + loop.get("mtu_drops", 0),
            "rx_drops": loop.get("rx_drops", 0),
            "tx_errors": loop.get("tx_errors", 0),
        }

    # ------------------------------------------------------------ tables
    def table_add(
        self, table: str, key: Sequence[KeyField], action: ActionCall, priority: int
    ) -> int:
        bmv2_priority = _BMV2_TOP_PRIORITY - priority if priority else 0
        with _engine_errors():
            return int(
                self.switch.table_add(
                    table,
                    [_key_tuple(k) for k in key],
                    action.name,
                    list(action.args),
                    bmv2_priority,
                )
            )

    def table_add_indirect(
        self, table: str, key: Sequence[KeyField], target: IndirectTarget, priority: int
    ) -> int:
        bmv2_priority = _BMV2_TOP_PRIORITY - priority if priority else 0
        keys = [_key_tuple(k) for k in key]
        with _engine_errors():
            if target.kind == "group":
                return int(self.switch.table_add_group(table, keys, target.handle, bmv2_priority))
            return int(self.switch.table_add_member(table, keys, target.handle, bmv2_priority))

    def table_modify_indirect(self, table: str, handle: int, target: IndirectTarget) -> None:
        with _engine_errors():
            if target.kind == "group":
                self.switch.table_modify_group(table, handle, target.handle)
            else:
                self.switch.table_modify_member(table, handle, target.handle)

    def table_modify(self, table: str, handle: int, action: ActionCall) -> None:
        with _engine_errors():
            self.switch.table_modify(table, handle, action.name, list(action.args))

    def table_delete(self, table: str, handle: int) -> None:
        with _engine_errors():
            self.switch.table_delete(table, handle)

    def table_entries(self, table: str) -> list[InstalledEntry]:
        with _engine_errors():
            raw = self.switch.table_entries(table)
        out = []
        for handle, key, bmv2_priority, action, params in raw:
            fields = tuple(_key_field(kind, a, b) for kind, a, b in key)
            priority = _BMV2_TOP_PRIORITY - bmv2_priority if bmv2_priority else 0
            out.append(InstalledEntry(handle, fields, priority, ActionCall(action, tuple(params))))
        return out

    def table_get_default(self, table: str) -> ActionCall:
        with _engine_errors():
            got = self.switch.table_get_default(table)
        if got is None:
            return ActionCall("NoAction")
        name, params = got
        return ActionCall(name, tuple(params))

    def table_set_default(self, table: str, action: ActionCall) -> None:
        with _engine_errors():
            self.switch.table_set_default(table, action.name, list(action.args))

    def table_reset_default(self, table: str) -> None:
        with _engine_errors():
            self.switch.table_reset_default(table)

    def direct_counter_read(self, table: str, handle: int) -> CounterValue:
        with _engine_errors():
            packets, nbytes = self.switch.table_entry_counter(table, handle)
        return CounterValue(packets, nbytes)

    def direct_counter_write(self, table: str, handle: int, value: CounterValue) -> None:
        with _engine_errors():
            self.switch.table_set_entry_counter(table, handle, value.packets, value.bytes)

    def direct_meter_set(self, table: str, handle: int, config: MeterConfig | None) -> None:
        if config is None:
            raise EngineError(
                "the engine cannot unconfigure a direct meter; give a meter_config",
                grpc.StatusCode.UNIMPLEMENTED,
            )
        with _engine_errors():
            self.switch.table_set_entry_meter(
                table, handle, config.cir, config.cburst, config.pir, config.pburst
            )

    # ------------------------------------------------------------ action profiles
    def profile_member_add(self, profile: str, action: ActionCall) -> int:
        with _engine_errors():
            return int(self.switch.ap_member_add(profile, action.name, list(action.args)))

    def profile_member_modify(self, profile: str, handle: int, action: ActionCall) -> None:
        with _engine_errors():
            self.switch.ap_member_modify(profile, handle, action.name, list(action.args))

    def profile_member_delete(self, profile: str, handle: int) -> None:
        with _engine_errors():
            self.switch.ap_member_delete(profile, handle)

    def profile_group_create(self, profile: str) -> int:
        with _engine_errors():
            return int(self.switch.ap_group_create(profile))

    def profile_group_set_members(self, profile: str, handle: int, members: Sequence[int]) -> None:
        with _engine_errors():
            self.switch.ap_group_set_members(profile, handle, list(members))

    def profile_group_delete(self, profile: str, handle: int) -> None:
        with _engine_errors():
            self.switch.ap_group_delete(profile, handle)

    # ------------------------------------------------------------ value sets
    def value_set_set(self, value_set: str, values: Sequence[int]) -> None:
        wanted = set(values)
        with _engine_errors():
            current = set(self.switch.value_set_values(value_set))
            for v in current - wanted:
                self.switch.value_set_remove(value_set, v)
            for v in values:
                if v not in current:
                    self.switch.value_set_add(value_set, v)

    def value_set_values(self, value_set: str) -> list[int]:
        with _engine_errors():
            return [int(v) for v in self.switch.value_set_values(value_set)]

    def value_set_add(self, value_set: str, value: int) -> None:
        with _engine_errors():
            self.switch.value_set_add(value_set, value)

    def value_set_remove(self, value_set: str, value: int) -> None:
        with _engine_errors():
            self.switch.value_set_remove(value_set, value)

    # ------------------------------------------------------------ BMv2 runtime extras
    def table_set_default_member(self, table: str, member: int) -> None:
        """An indirect table's default: action profile member `member`."""
        with _engine_errors():
            self.switch.table_set_default_member(table, member)

    def set_crc_params(
        self,
        calculation: str,
        width: int,
        poly: int,
        init: int,
        xor_out: int,
        reflect_in: bool,
        reflect_out: bool,
    ) -> None:
        """BMv2's crc16_custom / crc32_custom parameters of a calculation."""
        with _engine_errors():
            self.switch.set_crc_params(
                calculation, width, poly, init, xor_out, reflect_in, reflect_out
            )

    # ------------------------------------------------------------ externs
    def counter_read(self, counter: str, index: int) -> CounterValue:
        with _engine_errors():
            packets, nbytes = self.switch.counter_read(counter, index)
        return CounterValue(packets, nbytes)

    def counter_write(self, counter: str, index: int, value: CounterValue) -> None:
        with _engine_errors():
            self.switch.counter_write(counter, index, value.packets, value.bytes)

    def register_read(self, register: str, index: int) -> int:
        with _engine_errors():
            return int(self.switch.register_read(register, index))

    def register_write(self, register: str, index: int, value: int) -> None:
        with _engine_errors():
            self.switch.register_write(register, index, value)

    def meter_set(self, meter: str, index: int, config: MeterConfig | None) -> None:
        with _engine_errors():
            if config is None:
                self.switch.meter_reset(meter, index)
            else:
                self.switch.meter_set_rates(
                    meter, index, config.cir, config.cburst, config.pir, config.pburst
                )

    # ------------------------------------------------------------ replication
    def multicast_group_set(self, group_id: int, replicas: Sequence[Replica]) -> None:
        with _engine_errors():
            self.switch.mc_group_set(group_id, [(r.port, r.instance) for r in replicas])
        self._mc_groups.add(group_id)

    def multicast_group_delete(self, group_id: int) -> None:
        with _engine_errors():
            self.switch.mc_group_delete(group_id)
        self._mc_groups.discard(group_id)

    def clone_session_set(
        self, session_id: int, replicas: Sequence[Replica], class_of_service: int, truncate: int
    ) -> None:
        # class_of_service selects a priority queue, which the engine does not model.
        with _engine_errors():
            self.switch.clone_session_set(
                session_id, [(r.port, r.instance) for r in replicas], truncate
            )
        self._clone_sessions.add(session_id)

    def clone_session_delete(self, session_id: int) -> None:
        with _engine_errors():
            self.switch.clone_session_delete(session_id)
        self._clone_sessions.discard(session_id)

    # ------------------------------------------------------------ packets
    @property
    def dataplane(self) -> rust.Dataplane | None:
        """The running packet thread (its `stats()` count per-port rx/tx/errors)."""
        return self._dataplane

    def inject_packet(self, port: int, data: bytes) -> None:
        if self._dataplane is None:
            raise EngineError("the packet loop is not running", grpc.StatusCode.UNAVAILABLE)
        self._dataplane.inject(port, data)

    def start(self, device: Device, on_fatal: Callable[[str], None] | None = None) -> None:
        """Open the ports and start the packet thread; `on_fatal` hears if it dies."""
        try:
            dp = rust.Dataplane(
                list(self._interfaces.items()), self._cpu_port, self._pcap_dir, self._use_files
            )
        except OSError as e:
            raise EngineError(str(e)) from None
        dp.set_switch(self._sw)
        self._dataplane = dp
        self._delivery = threading.Thread(
            target=_deliver, args=(dp, device, on_fatal), name="dataplane-events", daemon=True
        )
        self._delivery.start()

    def stop(self) -> None:
        """Stop the packet thread (sockets and capture files closed) and the delivery."""
        if self._dataplane is not None:
            self._dataplane.stop()
        if self._delivery is not None:
            self._delivery.join()
            self._delivery = None
        self._dataplane = None


class _RxDropWatch:
    """Logs a warning when the kernel drops frames a port's packet thread could not
    read in time: the switch, not the experiment's bottleneck, lost them."""

    def __init__(self) -> None:
        self.seen: dict[int, int] = {}

    def check(self, stats: dict[str, object]) -> None:
        ports = stats["ports"]
        assert isinstance(ports, dict)
        for port, counts in sorted(ports.items()):
            now = int(counts["rx_drops"])
            before = self.seen.get(port, 0)
            if now > before:
                log.warning(
                    "port %d (%s): the kernel dropped %d frames the switch did not read in "
                    "time (%d in all); the switch is overloaded",
                    port,
                    counts["iface"],
                    now - before,
                    now,
                )
            self.seen[port] = now


def _deliver(dp: rust.Dataplane, device: Device, on_fatal: Callable[[str], None] | None) -> None:
    """Hand the packet thread's controller events to the Device until it stops; check
    for receive drops about once a second."""
    watch, next_check = _RxDropWatch(), time.monotonic() + 1.0
    while (events := dp.next_events(0.5)) is not None:
        if time.monotonic() >= next_check:
            watch.check(dp.stats())
            next_check = time.monotonic() + 1.0
        for kind, value in events:
            try:
                if kind == "packet_in":
                    device.deliver_packet_in(value)
                elif kind == "digest":
                    name, values = value
                    device.deliver_digest(name, tuple(values))
                elif kind == "warning":
                    log.warning("%s", value)
                else:
                    log.error("%s", value)
                    if on_fatal is not None:
                        on_fatal(value)
            except Exception:
                # One bad delivery must not stop PacketIns and digests for good.
                log.exception("delivering a %s to the controller failed", kind)


def _apply(sw: rust.Switch, port: int, config: PortConfig) -> None:
    sw.set_queue_depth(port, config.queue_depth)
    sw.set_port_rate(port, config.queue_rate.unit, config.queue_rate.value)
    sw.set_link_delay(port, config.link_delay_us)
    sw.set_link_jitter(port, config.link_jitter_us)


def _follow_traces(sw: rust.Switch, traces: dict[int, PortTrace]) -> None:
    """Ports drained by mahimahi traces, from now on the data plane's clock (the
    engine's time is CLOCK_MONOTONIC in µs, which time.monotonic_ns reads)."""
    start_us = time.monotonic_ns() // 1000
    for port, t in sorted(traces.items()):
        sw.set_port_trace(port, t.text, t.path, start_us)
        log.info(
            "port %d follows trace %s: %d opportunities every %d ms, mean %d bit/s",
            port,
            t.path,
            t.opportunities,
            t.period_ms,
            t.mean_rate_bps,
        )


def open_engine(opts: DaemonOptions) -> RustEngine:
    return RustEngine(
        seed=opts.seed,
        queue_depth=opts.queue_depth,
        queue_rate={p: (r.unit, r.value) for p, r in opts.queue_rate.items()},
        link_delay=opts.link_delay,
        link_jitter=opts.link_jitter,
        port_trace=opts.port_trace,
        priority_queues=opts.priority_queues,
        interfaces=opts.interfaces,
        pcap_dir=opts.pcap_dir,
        cpu_port=opts.cpu_port,
        use_files=opts.use_files,
    )
