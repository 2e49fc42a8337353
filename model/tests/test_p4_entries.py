"""The control-plane state as router.p4 table entries."""

from __future__ import annotations

from decimal import Decimal

from ratelab_model.config import AqmConfig
from ratelab_model.p4_entries import all_entries
from ratelab_model.vectors.cases import ROUTER_ID, port, topology


def test_entries_for_a_router_with_one_red_port() -> None:
    aqm = AqmConfig("red", Decimal("0.2"), Decimal("0.1"), 5, 15, seed=0)
    config = topology(port(2, rate_bps=1_000_000, queue_limit=30, capacity=7000, aqm=aqm))
    entries = all_entries(config)
    by_table: dict[str, list] = {}
    for e in entries:
        by_table.setdefault(e.table, []).append(e)

    (default,) = by_table["RouterIngress.router_config"]
    assert default.key == () and default.params == (ROUTER_ID, 1500, 1_000_000)
    assert len(by_table["RouterIngress.ipv4_lpm"]) == len(config.routes)
    lpm = {e.key[0]: e.params for e in by_table["RouterIngress.ipv4_lpm"]}
    assert lpm[(0x0A000280, 25)] == (4, 0x020000000104)

    ports = {e.key[0]: e.params for e in by_table["RouterIngress.port_config"]}
    assert ports[1] == (0x020000000001, 1_000_000, 64, 0, 0, 0, 0, 0, 0, 0)
    assert ports[2] == (
        0x020000000002, 7000, 30, 1, 13107, 5 << 16, 15 << 16,
        int(Decimal("0.1") * 2**32 / 10), 2**32 // 12000, 0x9E3779B9,
    )  # fmt: skip

    decay = {e.key: e.params[0] for e in by_table["RouterIngress.admission.red_decay"]}
    assert decay[(2, 0)] == 65536 and decay[(2, 1)] == 52428  # floor(0.8 * 65536)
    assert all(v > 0 for v in decay.values())
    assert len(decay) == max(m for _, m in decay) + 1 < 60  # only the nonzero head

    recip = {e.key[0]: e.params[0] for e in by_table["RouterIngress.rbcc.recip"]}
    assert sorted(recip) == list(range(1, 1025))
    assert recip[1] == 2**32 and recip[3] == 1431655765
