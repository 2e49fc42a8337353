"""The named AQM presets of AQM.md "Parameter sets", and the links they were tuned for.

"2 x BDP" queue limits are derived from the link: BDP = ceil(rate * 2 * one-way
delay / (1500 B * 8)), which gives the study's 7, 24 and 125 packets (the extra
11 ms from the sender are not part of it).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

from ratelab_model.config import AqmConfig
from ratelab_model.red import MEAN_PACKET_BYTES


@dataclass(frozen=True)
class Link:
    name: str
    rate_bps: int
    one_way_delay_ms: int

    @property
    def bdp_packets(self) -> int:
        bits = Fraction(self.rate_bps * 2 * self.one_way_delay_ms, 1000)
        return -(-bits // (MEAN_PACKET_BYTES * 8))


LINKS: dict[str, Link] = {
    "edge": Link("edge", 160_000, 250),
    "hspa": Link("hspa", 2_000_000, 70),
    "lte": Link("lte", 50_000_000, 15),
}


@dataclass(frozen=True)
class AqmPreset:
    name: str
    link: Link
    w_q: Decimal
    max_p: Decimal
    th_min: int
    th_max: int
    fixed_queue_limit: int | None  # None: 2 x BDP of the link

    @property
    def queue_limit(self) -> int:
        if self.fixed_queue_limit is None:
            return 2 * self.link.bdp_packets
        return self.fixed_queue_limit

    def aqm(self, seed: int = 1) -> AqmConfig:
        return AqmConfig("red", self.w_q, self.max_p, self.th_min, self.th_max, seed)


def _preset(
    name: str, link: str, w_q: str, max_p: str, th_min: int, th_max: int, limit: int | None
) -> AqmPreset:
    return AqmPreset(name, LINKS[link], Decimal(w_q), Decimal(max_p), th_min, th_max, limit)


PRESETS: dict[str, AqmPreset] = {
    p.name: p
    for p in (
        _preset("red-edge", "edge", "0.002", "0.1", 3, 9, None),
        _preset("red-hspa", "hspa", "0.002", "0.1", 5, 20, None),
        _preset("red-lte", "lte", "0.002", "0.1", 5, 20, None),
        _preset("redok-edge", "edge", "0.2", "0.65", 3, 40, 50),
        _preset("redok-hspa", "hspa", "0.02", "0.65", 3, 50, 100),
        _preset("redok-lte", "lte", "0.001", "0.1", 5, 125, 400),
    )
}
