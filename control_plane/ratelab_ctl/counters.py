"""Counter snapshots: the model's per-port counters, read from router.p4's objects.

The names are the model's (`ratelab_model.counters.COUNTER_NAMES`), mapped to
the P4 objects of docs/ROUTER_MODEL.md "Counters". `last_q` and `last_avg`
live in registers, which the ratelab switch serves over P4Runtime and BMv2
does not: a snapshot says whether they were read (`gauges`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from finsy.proto.p4.v1 import p4runtime_pb2
from ratelab_model.counters import COUNTER_NAMES, PortCounters
from ratelab_p4info import Schema

from ratelab_ctl.entities import decode_uint

# model counter name -> (P4 counter, which of its two values)
COUNTER_OBJECTS: dict[str, tuple[str, str]] = {
    "packets_in": ("RouterIngress.packets_in", "packets"),
    "drop_not_ipv4": ("RouterIngress.drop_not_ipv4", "packets"),
    "drop_malformed": ("RouterIngress.drop_malformed", "packets"),
    "drop_bad_checksum": ("RouterIngress.drop_bad_checksum", "packets"),
    "drop_ttl_expired": ("RouterIngress.drop_ttl_expired", "packets"),
    "drop_no_route": ("RouterIngress.drop_no_route", "packets"),
    "packets_out": ("RouterEgress.port_out", "packets"),
    "bytes_out": ("RouterEgress.port_out", "bytes"),
    "drop_queue_full": ("RouterIngress.admission.drop_queue_full", "packets"),
    "drop_red_early": ("RouterIngress.admission.drop_red_early", "packets"),
    "drop_red_forced": ("RouterIngress.admission.drop_red_forced", "packets"),
    "rbcc_packets": ("RouterIngress.rbcc.rbcc_packets", "packets"),
    "abt_hits": ("RouterIngress.rbcc.abt_hits", "packets"),
    "abt_updates": ("RouterIngress.rbcc.abt_updates", "packets"),
    "abt_inserts": ("RouterIngress.rbcc.abt_inserts", "packets"),
    "abt_removals": ("RouterIngress.rbcc.abt_removals", "packets"),
    "abt_collisions": ("RouterIngress.rbcc.abt_collisions", "packets"),
}
GAUGE_REGISTERS: dict[str, str] = {
    "last_q": "RouterIngress.admission.last_q",
    "last_avg": "RouterIngress.admission.last_avg",
}
assert set(COUNTER_OBJECTS) | set(GAUGE_REGISTERS) == set(COUNTER_NAMES)


@dataclass(frozen=True)
class CounterSnapshot:
    time: float  # Unix time, seconds, when the read was sent
    ports: dict[int, PortCounters]  # the ports asked for, in ascending order
    gauges: bool  # last_q / last_avg were read (False: the target serves no registers)


def counter_ids(schema: Schema) -> list[int]:
    """The P4 counters a snapshot reads, each once."""
    return list(dict.fromkeys(schema.counters[c].id for c, _ in COUNTER_OBJECTS.values()))


def gauge_ids(schema: Schema) -> list[int]:
    return [schema.registers[r].id for r in GAUGE_REGISTERS.values()]


def decode(
    schema: Schema,
    ports: Iterable[int],
    counters: Iterable[p4runtime_pb2.CounterEntry],
    registers: Iterable[p4runtime_pb2.RegisterEntry] | None,
) -> dict[int, PortCounters]:
    """Fill a PortCounters per port from the read-back entries (others ignored)."""
    out = {p: PortCounters() for p in sorted(ports)}
    by_object: dict[int, list[tuple[str, str]]] = {}
    for name, (obj, which) in COUNTER_OBJECTS.items():
        by_object.setdefault(schema.counters[obj].id, []).append((name, which))
    for ce in counters:
        pc = out.get(ce.index.index)
        if pc is None:
            continue
        for name, which in by_object.get(ce.counter_id, ()):
            value = ce.data.packet_count if which == "packets" else ce.data.byte_count
            setattr(pc, name, value)
    if registers is not None:
        gauges = {schema.registers[r].id: name for name, r in GAUGE_REGISTERS.items()}
        for re_ in registers:
            pc = out.get(re_.index.index)
            name = gauges.get(re_.register_id)
            if pc is None or name is None:
                continue
            setattr(pc, name, decode_uint(re_.data.bitstring))
    return out
