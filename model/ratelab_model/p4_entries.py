"""The control-plane state as router.p4 table entries (docs/ROUTER_MODEL.md
"P4 program: where the control-plane state goes").

Plain data, independent of any P4Runtime library: a controller turns each
`TableEntry` into its own write. Names are the P4 objects' full names.
"""

from __future__ import annotations

from dataclasses import dataclass

from ratelab_model import red
from ratelab_model.config import RouterConfig
from ratelab_model.rbcc import reciprocals

Exact = int
Lpm = tuple[int, int]  # (value, prefix length)


@dataclass(frozen=True)
class TableEntry:
    table: str
    key: tuple[Exact | Lpm, ...]  # empty: set the table's default action
    action: str
    params: tuple[int, ...]


def router_config_entry(config: RouterConfig) -> TableEntry:
    return TableEntry(
        "RouterIngress.router_config",
        (),
        "RouterIngress.set_router",
        (config.router_id, config.min_rate, config.idle_timeout_us),
    )


def route_entries(config: RouterConfig) -> list[TableEntry]:
    hops = {h.id: h for h in config.next_hops}
    return [
        TableEntry(
            "RouterIngress.ipv4_lpm",
            ((route.prefix, route.length),),
            "RouterIngress.set_next_hop",
            (hops[route.next_hop].port, int.from_bytes(hops[route.next_hop].mac, "big")),
        )
        for route in config.routes
    ]


def port_entries(config: RouterConfig) -> list[TableEntry]:
    """port_config for every port, plus red_decay's nonzero entries for RED ports
    (a miss gives 0, so the zero tail of the table is not installed)."""
    entries = []
    for port in config.ports:
        common = (int.from_bytes(port.mac, "big"), port.rbcc_capacity, port.queue_limit)
        if port.aqm.mode == "red":
            r = red.install(port.aqm, port.rate_bps)
            aqm = (1, r.wq16, r.th_min16, r.th_max16, r.slope, r.s_recip, r.seed)
            for m, value in enumerate(red.decay_table(port.aqm.w_q, config.decay_len)):
                if value:
                    entries.append(
                        TableEntry(
                            "RouterIngress.admission.red_decay",
                            (port.port, m),
                            "RouterIngress.admission.set_decay",
                            (value,),
                        )
                    )
        else:
            aqm = (0, 0, 0, 0, 0, 0, 0)
        entries.append(
            TableEntry(
                "RouterIngress.port_config", (port.port,), "RouterIngress.set_port", common + aqm
            )
        )
    return entries


def recip_entries(config: RouterConfig) -> list[TableEntry]:
    recip = reciprocals(config.abt_slots)
    return [
        TableEntry("RouterIngress.rbcc.recip", (k,), "RouterIngress.rbcc.set_recip", (recip[k],))
        for k in range(1, config.abt_slots + 1)
    ]


def all_entries(config: RouterConfig) -> list[TableEntry]:
    """Everything a controller installs, the keyless default first."""
    return [
        router_config_entry(config),
        *route_entries(config),
        *port_entries(config),
        *recip_entries(config),
    ]
