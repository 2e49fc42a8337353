"""Per-port counters, named as every target exports them (docs/ROUTER_MODEL.md "Counters").

Forwarding drops and packets_in are counted at the ingress port (no egress port
is known yet); everything else at the egress port, except that an ABT removal
is counted at the port of the flow that left the table (so n = inserts - removals).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass
class PortCounters:
    # ingress side
    packets_in: int = 0
    drop_not_ipv4: int = 0
    drop_malformed: int = 0
    drop_bad_checksum: int = 0
    drop_ttl_expired: int = 0
    drop_no_route: int = 0
    # AQM (AQM.md "Counters")
    packets_out: int = 0
    bytes_out: int = 0
    drop_queue_full: int = 0
    drop_red_early: int = 0
    drop_red_forced: int = 0
    last_q: int = 0
    last_avg: int = 0  # Q16.16 packets
    # RBCC (RBCC.md "Counters per port")
    rbcc_packets: int = 0
    abt_hits: int = 0
    abt_updates: int = 0
    abt_inserts: int = 0
    abt_removals: int = 0
    abt_collisions: int = 0

    def as_dict(self) -> dict[str, int]:
        return asdict(self)

    def count_drop(self, cause: str) -> None:
        """Add one to `drop_<cause>` (a forwarding or an admission cause)."""
        name = f"drop_{cause}"
        setattr(self, name, getattr(self, name) + 1)


COUNTER_NAMES: tuple[str, ...] = tuple(PortCounters().as_dict())
# every drop cause a port counts, as `drop_<cause>` counters
DROP_CAUSES: tuple[str, ...] = tuple(n[5:] for n in COUNTER_NAMES if n.startswith("drop_"))
