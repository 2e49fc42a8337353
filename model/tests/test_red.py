"""RED in fixed point, checked against the real-valued formulas of AQM.md."""

from __future__ import annotations

import random
from decimal import Decimal
from fractions import Fraction

import pytest
from ratelab_model import red
from ratelab_model.config import AqmConfig
from ratelab_model.presets import PRESETS


def _installed(
    w_q: str = "0.002",
    max_p: str = "0.1",
    th_min: int = 5,
    th_max: int = 15,
    rate_bps: int = 1_000_000,
    seed: int = 1,
) -> red.RedInstalled:
    return red.install(
        AqmConfig("red", Decimal(w_q), Decimal(max_p), th_min, th_max, seed), rate_bps
    )


@pytest.mark.parametrize(
    ("w_q", "wq16"), [("0.001", 66), ("0.002", 131), ("0.02", 1311), ("0.2", 13107)]
)
def test_wq16_is_within_2_percent(w_q: str, wq16: int) -> None:
    assert _installed(w_q).wq16 == wq16
    assert abs(wq16 / 65536 - float(w_q)) <= 0.02 * float(w_q)


def test_installed_integers() -> None:
    r = _installed("0.002", "0.1", 5, 15, rate_bps=1_000_000, seed=0)
    assert (r.th_min16, r.th_max16) == (5 << 16, 15 << 16)
    assert r.slope == int(Fraction(1, 10) * 2**32 / 10)
    assert r.s_recip == 2**32 // 12000  # a 1500 B packet takes 12000 us at 1 Mbit/s
    assert r.seed == red.ZERO_SEED_REPLACEMENT
    assert _installed(rate_bps=0).s_recip == 0
    assert red.mean_packet_time_us(50_000_000) == 240
    assert red.mean_packet_time_us(10**13) == 1


@pytest.mark.parametrize("w_q", ["0.001", "0.002", "0.02", "0.2"])
def test_decay_table_is_the_exact_floor(w_q: str) -> None:
    table = red.decay_table(Decimal(w_q), 16384)
    assert len(table) == 16384 and table[0] == 65536 and table[-1] == 0
    ratio = 1 - Fraction(w_q)
    rng = random.Random(w_q)
    for i in [1, 2, 3, *rng.sample(range(4, 12000), 25)]:
        assert table[i] == int(ratio**i * 65536), i


def test_xorshift32_known_values() -> None:
    # 1 -> 1 ^ 1<<13 = 8193 -> ^ >>17 = 8193 -> ^ 8193<<5 = 270369
    assert red.xorshift32(1) == 270369
    state = 1
    for _ in range(1000):
        state = red.xorshift32(state)
        assert 0 < state < 2**32


def test_busy_average_tracks_the_float_ewma() -> None:
    r = _installed("0.02")
    state = red.RedState()
    exact = 0.0
    w = r.wq16 / 65536
    rng = random.Random(1)
    for _ in range(2000):
        q = rng.randrange(1, 40)
        red.update_avg(state, r, (), q, 0)
        exact = (1 - w) * exact + w * q
        # each step truncates at most 2^-16 packets; the EWMA forgets old errors
        assert abs(state.avg / 65536 - exact) <= 1 / (w * 65536) + 1e-9


def test_idle_decay_uses_whole_packet_times_and_clamps() -> None:
    r = _installed("0.2")
    decay = red.decay_table(Decimal("0.2"), 16384)
    state = red.RedState(avg=10 << 16)
    red.update_avg(state, r, decay, 0, 3 * 12000 - 1)  # m = 2 (rounded down)
    assert state.avg == ((10 << 16) * decay[2]) >> 16
    red.update_avg(state, r, decay, 0, 2**40)  # idle clamped to 2^32 - 1, m clamped
    assert state.avg == 0


def _float_pa(avg16: int, count: int, r: red.RedInstalled, max_p: float) -> float:
    p_b = max_p * (avg16 - r.th_min16) / (r.th_max16 - r.th_min16)
    return 1.0 if count * p_b >= 1 else p_b / (1 - count * p_b)


def test_drop_probability_matches_floyds_formula() -> None:
    """The share of the 2^32 draws that drop equals p_a within fixed-point error."""
    r = _installed("0.002", "0.1", 5, 15)
    for avg16 in range(r.th_min16, r.th_max16, 9999):
        for count in (1, 2, 5, 20, 60):
            pb16 = ((avg16 - r.th_min16) * r.slope) >> 32
            c = count * pb16
            if c >= 65536:
                continue
            dropping_draws = -(-(pb16 << 32) // (65536 - c))  # R below this drops
            fixed = dropping_draws / 2**32
            # p_b is floored to 2^-16 (and slope to 2^-32); dp_a/dp_b = 1 / (1 - count p_b)^2
            p_b = 0.1 * (avg16 - r.th_min16) / (r.th_max16 - r.th_min16)
            bound = 2 / 65536 / (1 - count * p_b) ** 2
            assert abs(fixed - _float_pa(avg16, count, r, 0.1)) <= bound


def test_branches_and_count() -> None:
    r = _installed("0.002", "0.5", 2, 4)
    state = red.RedState(avg=1 << 16, count=7)
    assert red.decide(state, r) is red.RedBranch.BELOW_MIN and state.count == red.COUNT_NONE
    state.avg = 4 << 16
    assert red.decide(state, r) is red.RedBranch.ABOVE_MAX and state.count == 0
    state.avg, state.count, state.rng = 3 << 16, 3, 99  # p_b = 0.25, count -> 4: c = 1
    assert red.decide(state, r) is red.RedBranch.COUNT_LIMIT
    assert state.count == 0 and state.rng == 99  # no draw
    state.count = red.COUNT_NONE  # count -1 -> 0: p_a = p_b, one draw
    branch = red.decide(state, r)
    assert state.rng == red.xorshift32(99)
    drop = state.rng * 65536 < (((1 << 16) * r.slope) >> 32) << 32
    assert branch is (red.RedBranch.DRAW_DROP if drop else red.RedBranch.DRAW_ADMIT)


def test_drops_are_spread_uniformly_as_floyd_intended() -> None:
    """With avg held fixed, inter-drop gaps are uniform on 1..1/p_b, so the drop
    rate is 2 p_b / (1 + p_b) (not p_b, as independent drops would give)."""
    r = _installed("0.002", "0.1", 0, 1)
    state = red.RedState(avg=1 << 15, rng=12345)  # p_b = 0.05
    p_b = (((1 << 15) * r.slope) >> 32) / 65536
    drops = 0
    for _ in range(40000):
        drops += red.decide(state, r).decision is not red.RedDecision.ADMIT
    assert abs(drops / 40000 - 2 * p_b / (1 + p_b)) < 0.005


def test_presets_and_their_queue_limits() -> None:
    limits = {name: p.queue_limit for name, p in PRESETS.items()}
    assert limits == {
        "red-edge": 14,
        "red-hspa": 48,
        "red-lte": 250,
        "redok-edge": 50,
        "redok-hspa": 100,
        "redok-lte": 400,
    }
    assert [PRESETS[f"red-{n}"].link.bdp_packets for n in ("edge", "hspa", "lte")] == [7, 24, 125]
    assert PRESETS["redok-lte"].aqm().w_q == Decimal("0.001")
