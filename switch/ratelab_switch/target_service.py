"""`ratelab.SwitchTarget`: the daemon's settings that P4Runtime has no message for
(queue depth, drain rate and link delay per egress port; entry handles for
simple_switch_CLI's handle-taking commands), on the same gRPC server as P4Runtime.

Unary methods under /ratelab.SwitchTarget/, with JSON request and response bodies
(UTF-8), so any gRPC client can call them without generated code:

    SetQueueDepth    {"device_id": 0, "port": 3, "depth": 64}          -> {}
    SetQueueRate     {"device_id": 0, "port": 3, "rate": "10mbit"}     -> {}
    SetLinkDelay     {"device_id": 0, "port": 3, "delay": "20ms"}      -> {}
    GetPortSettings  {"device_id": 0}                                   -> see below
    GetPortStats     {"device_id": 0, "port": 3}                        -> see below
    GetEntryHandles  {"device_id": 0, "table": "MyIngress.ipv4_lpm"}
                     -> {"entries": [{"handle": 0, "entry": BASE64}]}
    GetArbitration   {"device_id": 0}
                     -> {"roles": [{"role": "", "streams": 1, "primary_election_id": 10}]}

`port` absent or null means every port (simple_switch_CLI's form without a port).
`rate`: as --queue-rate (10mbit, 1000pps, unlimited). `delay`: as --link-delay
(20ms, 500us, 1.5s, or a number of µs; 0 removes it); it applies to packets
dequeued after the call. GetPortSettings answers
{"default": SETTINGS, "ports": [{"port": N, **SETTINGS, "in_flight": K}, ...]} where
SETTINGS = {"queue_depth": 64, "queue_rate": "10000000bit", "link_delay_us": 0}
and `ports` lists the ports set one by one. GetPortStats answers
{"ports": [{"port": N, "iface": "veth1" or null, **COUNTERS}, ...]}, for the
port asked or (no port) every port with an interface or its own settings;
COUNTERS are port_settings.PORT_STATS_FIELDS. GetEntryHandles gives each entry as
a serialized, base64-encoded p4.v1.TableEntry (canonical, as Read returns it).
GetArbitration lists every role a controller arbitrated for, with its open
StreamChannels and its primary's election id (null: no primary).

Errors are gRPC statuses: INVALID_ARGUMENT (bad body or value; nothing is
changed), NOT_FOUND (device id, table), UNIMPLEMENTED (an engine without ports).
"""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Callable
from typing import Any

import grpc

from .device import Device
from .errors import P4RuntimeError, invalid, unimplemented
from .options import OptionsError, parse_delay, parse_rate
from .port_settings import MAX_DEPTH, MAX_PORT, PortConfig, PortTarget, format_rate

log = logging.getLogger("ratelab_switch")

SERVICE = "ratelab.SwitchTarget"
Body = dict[str, Any]


def _settings(c: PortConfig) -> Body:
    return {
        "queue_depth": c.queue_depth,
        "queue_rate": format_rate(c.queue_rate),
        "link_delay_us": c.link_delay_us,
    }


def _int(body: Body, key: str, lo: int, hi: int) -> int:
    value = body.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise invalid(f"{key!r} must be an integer")
    if not lo <= value <= hi:
        raise invalid(f"{key} {value} is out of range ({lo}..{hi})")
    return value


def _port(body: Body) -> int | None:
    if body.get("port") is None:
        return None
    return _int(body, "port", 0, MAX_PORT)


class SwitchTargetService:
    def __init__(self, device: Device) -> None:
        self.device = device

    def _target(self, body: Body) -> PortTarget:
        self.device._check_device(_int(body, "device_id", 0, 2**64 - 1))
        engine = self.device.engine
        if not isinstance(engine, PortTarget):
            raise unimplemented("this engine has no port settings")
        return engine

    def set_queue_depth(self, body: Body) -> Body:
        target = self._target(body)
        port, depth = _port(body), _int(body, "depth", 1, MAX_DEPTH)
        target.set_queue_depth(port, depth)
        log.info("queue depth of %s: %d packets", _which(port), depth)
        return {}

    def set_queue_rate(self, body: Body) -> Body:
        target = self._target(body)
        port, text = _port(body), body.get("rate")
        if not isinstance(text, str):
            raise invalid("'rate' must be a string like 10mbit, 1000pps or unlimited")
        try:
            rate = parse_rate(text)
        except OptionsError as e:
            raise invalid(str(e).removeprefix("--queue-rate: ")) from None
        target.set_queue_rate(port, rate)
        log.info("queue rate of %s: %s", _which(port), format_rate(rate))
        return {}

    def set_link_delay(self, body: Body) -> Body:
        target = self._target(body)
        port, value = _port(body), body.get("delay")
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise invalid("'delay' must be a string like 20ms or a number of µs")
        try:
            delay_us = parse_delay(str(value))
        except OptionsError as e:
            raise invalid(str(e)) from None
        target.set_link_delay(port, delay_us)
        log.info("link delay of %s: %d us", _which(port), delay_us)
        return {}

    def get_port_settings(self, body: Body) -> Body:
        target = self._target(body)
        default, ports = target.port_settings()
        return {
            "default": _settings(default),
            "ports": [
                {"port": p, **_settings(c), "in_flight": target.in_flight(p)}
                for p, c in sorted(ports.items())
            ],
        }

    def get_port_stats(self, body: Body) -> Body:
        target = self._target(body)
        port = _port(body)
        ports = target.stats_ports() if port is None else [port]
        return {
            "ports": [
                {"port": p, "iface": target.interface(p), **stats}
                for p, stats in zip(ports, target.port_stats(ports), strict=True)
            ]
        }

    def get_entry_handles(self, body: Body) -> Body:
        device_id = _int(body, "device_id", 0, 2**64 - 1)
        name = body.get("table")
        if not isinstance(name, str):
            raise invalid("'table' must be a table name")
        table_id = self.device.table_id(device_id, name)
        entries = self.device.entry_handles(device_id, table_id)
        return {
            "entries": [
                {"handle": h, "entry": base64.b64encode(e.SerializeToString()).decode()}
                for h, e in entries
            ]
        }

    def get_arbitration(self, body: Body) -> Body:
        self.device._check_device(_int(body, "device_id", 0, 2**64 - 1))
        return {
            "roles": [
                {"role": r.role, "streams": r.streams, "primary_election_id": r.primary_election_id}
                for r in self.device.arbiter.roles()
            ]
        }


def _which(port: int | None) -> str:
    return "every port" if port is None else f"port {port}"


def _unary(fn: Callable[[Body], Body]) -> grpc.RpcMethodHandler:
    def handle(request: bytes, context: grpc.ServicerContext) -> bytes:
        try:
            body = json.loads(request or b"{}")
        except ValueError as e:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"the body is not JSON: {e}")
        if not isinstance(body, dict):
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the body must be a JSON object")
        body.setdefault("device_id", 0)
        try:
            reply = fn(body)
        except P4RuntimeError as e:
            context.abort(e.code, e.message)
        except Exception as e:
            log.exception("internal error")
            context.abort(grpc.StatusCode.INTERNAL, f"internal error: {e}")
        return json.dumps(reply).encode()

    # Bodies stay bytes: JSON errors are reported by `handle` with a clear status.
    return grpc.unary_unary_rpc_method_handler(handle)


def handler(device: Device) -> grpc.GenericRpcHandler:
    svc = SwitchTargetService(device)
    return grpc.method_handlers_generic_handler(
        SERVICE,
        {
            "SetQueueDepth": _unary(svc.set_queue_depth),
            "SetQueueRate": _unary(svc.set_queue_rate),
            "SetLinkDelay": _unary(svc.set_link_delay),
            "GetPortSettings": _unary(svc.get_port_settings),
            "GetPortStats": _unary(svc.get_port_stats),
            "GetEntryHandles": _unary(svc.get_entry_handles),
            "GetArbitration": _unary(svc.get_arbitration),
        },
    )
