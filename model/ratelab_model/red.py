"""RED (AQM.md "RED, exactly") in the fixed point every target implements.

avg is Q16.16 packets, probabilities are 16-bit fractions, the random draw is a
32-bit xorshift. The exact integer steps are the lead's and are listed in
docs/ROUTER_MODEL.md "RED"; `RedInstalled` holds the integers a controller
installs, `RedState` the per-port registers.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from enum import Enum
from fractions import Fraction
from functools import lru_cache

from ratelab_model.config import AqmConfig

MASK32 = 0xFFFFFFFF
COUNT_NONE = MASK32  # count = -1
ONE16 = 1 << 16
MEAN_PACKET_BYTES = 1500
# Replaces a zero seed, on which xorshift would stay at zero forever.
ZERO_SEED_REPLACEMENT = 0x9E3779B9


class RedDecision(Enum):
    ADMIT = "admit"
    EARLY_DROP = "red_early"
    FORCED_DROP = "red_forced"


class RedBranch(Enum):
    """Which rule decided: tests use it to show every rule is exercised."""

    BELOW_MIN = "below_min"  # avg < th_min: admit
    ABOVE_MAX = "above_max"  # avg >= th_max: forced drop
    COUNT_LIMIT = "count_limit"  # count * p_b >= 1: early drop without a draw
    DRAW_DROP = "draw_drop"
    DRAW_ADMIT = "draw_admit"

    @property
    def decision(self) -> RedDecision:
        if self is RedBranch.ABOVE_MAX:
            return RedDecision.FORCED_DROP
        if self in (RedBranch.COUNT_LIMIT, RedBranch.DRAW_DROP):
            return RedDecision.EARLY_DROP
        return RedDecision.ADMIT


@dataclass(frozen=True)
class RedInstalled:
    """The integer parameters of one RED port, derived exactly from AqmConfig."""

    wq16: int  # round(w_q * 2^16)
    th_min16: int  # th_min << 16
    th_max16: int
    slope: int  # floor(max_p * 2^32 / (th_max - th_min))
    s_recip: int  # floor(2^32 / s_us), 0 on an unlimited port
    seed: int  # nonzero


def _round_half_up(x: Fraction) -> int:
    return int(x + Fraction(1, 2)) if x >= 0 else -int(-x + Fraction(1, 2))


def mean_packet_time_us(rate_bps: int) -> int:
    """s of AQM.md in whole microseconds: max(1, round(1500 * 8 * 1e6 / rate_bps))."""
    return max(1, _round_half_up(Fraction(MEAN_PACKET_BYTES * 8 * 1_000_000, rate_bps)))


def install(aqm: AqmConfig, rate_bps: int) -> RedInstalled:
    s_recip = 0 if rate_bps == 0 else (1 << 32) // mean_packet_time_us(rate_bps)
    return RedInstalled(
        wq16=_round_half_up(Fraction(aqm.w_q) * ONE16),
        th_min16=aqm.th_min << 16,
        th_max16=aqm.th_max << 16,
        slope=int(Fraction(aqm.max_p) * (1 << 32) / (aqm.th_max - aqm.th_min)),
        s_recip=s_recip,
        seed=aqm.seed or ZERO_SEED_REPLACEMENT,
    )


@lru_cache(maxsize=32)
def decay_table(w_q: Decimal, length: int) -> tuple[int, ...]:
    """decay[i] = floor((1 - w_q)^i * 2^16), exact for the decimal w_q.

    Exact rationals would need ~100k-digit divisions; instead carry the value
    as an interval [lo, hi] scaled by 2^128 and fall back to exact arithmetic
    only when the interval straddles an integer boundary.
    """
    ratio = Fraction(1) - Fraction(w_q)
    num, den = ratio.numerator, ratio.denominator
    scale = 128
    lo = hi = 1 << scale
    table = []
    for i in range(length):
        low, high = (lo << 16) >> scale, (hi << 16) >> scale
        if low != high:
            low = (num**i << 16) // den**i
        table.append(low)
        if high == 0:  # every later entry is 0 too
            table.extend([0] * (length - i - 1))
            break
        lo = lo * num // den
        hi = -(-hi * num // den)
    return tuple(table)


def xorshift32(state: int) -> int:
    state ^= (state << 13) & MASK32
    state ^= state >> 17
    state ^= (state << 5) & MASK32
    return state


@dataclass
class RedState:
    """Per-port RED registers."""

    avg: int = 0  # Q16.16 packets
    count: int = COUNT_NONE
    rng: int = ZERO_SEED_REPLACEMENT


def update_avg(
    state: RedState, red: RedInstalled, decay: tuple[int, ...], q: int, idle_us: int
) -> None:
    """The average update of one arrival. `idle_us` = now - idle_since (used when q == 0)."""
    if q > 0:
        target = q << 16
        if target >= state.avg:
            state.avg += ((target - state.avg) * red.wq16) >> 16
        else:
            state.avg -= ((state.avg - target) * red.wq16) >> 16
    else:
        m = (min(idle_us, MASK32) * red.s_recip) >> 32
        state.avg = (state.avg * decay[min(m, len(decay) - 1)]) >> 16


def decide(state: RedState, red: RedInstalled) -> RedBranch:
    """Floyd's drop decision on the updated avg; p_a = p_b / (1 - count * p_b)
    evaluated as R * (1 - count * p_b) < p_b without a division."""
    if state.avg < red.th_min16:
        state.count = COUNT_NONE
        return RedBranch.BELOW_MIN
    if state.avg >= red.th_max16:
        state.count = 0
        return RedBranch.ABOVE_MAX
    state.count = (state.count + 1) & MASK32
    pb16 = ((state.avg - red.th_min16) * red.slope) >> 32
    c = state.count * pb16
    if c >= ONE16:
        state.count = 0
        return RedBranch.COUNT_LIMIT
    state.rng = xorshift32(state.rng)
    if state.rng * (ONE16 - c) < pb16 << 32:
        state.count = 0
        return RedBranch.DRAW_DROP
    return RedBranch.DRAW_ADMIT
