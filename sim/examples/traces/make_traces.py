"""Writes the example mahimahi traces next to this script (docs/NET.md "Links from
traces"). Each line of a trace is one 1,500-byte delivery opportunity, in ms since the
trace's start; the trace loops with its last line as period. The traces are made here
(no recorded network): the same seed gives the same files.

    .venv/bin/python sim/examples/traces/make_traces.py

- const12.mahi: a constant 12 Mbit/s (one opportunity every ms), period 1 s.
- lte_steps.mahi: an LTE-like link, 10 s period: the rate steps every second
  through 20, 8, 30, 4, 12, 25, 2, 16, 6, 10 Mbit/s (mean 13.3 Mbit/s), and within
  a second each 10 ms carries that rate with +-30 % of seeded noise.
- edge_slow.mahi: an EDGE-like slow link, 20 s period: seeded exponential gaps
  of mean 60 ms (200 kbit/s; these files: 183 kbit/s) with a 1.5 s outage from
  8 s on (mean over the period 169 kbit/s).
"""

from __future__ import annotations

import random
from pathlib import Path

HERE = Path(__file__).resolve().parent
SEED = 16
BITS_PER_OPPORTUNITY = 1500 * 8
LTE_STEPS_MBIT = (20, 8, 30, 4, 12, 25, 2, 16, 6, 10)


def const12() -> list[int]:
    return list(range(1, 1001))


def lte_steps(rng: random.Random) -> list[int]:
    """Opportunities from a rate that is constant within each 10 ms slot: the slot's
    share of opportunities, the fraction carried over to the next slot."""
    lines: list[int] = []
    carry = 0.0
    for second, mbit in enumerate(LTE_STEPS_MBIT):
        for slot in range(100):
            start_ms = second * 1000 + slot * 10
            rate = mbit * 1e6 * rng.uniform(0.7, 1.3)
            carry += rate * 0.010 / BITS_PER_OPPORTUNITY
            count, carry = int(carry), carry - int(carry)
            # Spread over the slot's 10 ms, each at a whole ms after its start.
            lines += [start_ms + 1 + (k * 10) // max(count, 1) for k in range(count)]
    lines.append(len(LTE_STEPS_MBIT) * 1000)  # the period: one more opportunity at 10 s
    return lines


def edge_slow(rng: random.Random) -> list[int]:
    lines: list[int] = []
    t = 0.0
    while True:
        t += rng.expovariate(1 / 60)
        if t >= 20_000:
            break
        if 8_000 <= t < 9_500:
            continue  # the outage
        lines.append(max(1, round(t)))
    lines.append(20_000)
    return sorted(lines)


def main() -> None:
    rng = random.Random(SEED)
    for name, lines in (
        ("const12.mahi", const12()),
        ("lte_steps.mahi", lte_steps(rng)),
        ("edge_slow.mahi", edge_slow(rng)),
    ):
        (HERE / name).write_text("".join(f"{ms}\n" for ms in lines), encoding="ascii")
        mean = len(lines) * BITS_PER_OPPORTUNITY * 1000 / lines[-1]
        print(f"{name}: {len(lines)} opportunities in {lines[-1]} ms, mean {mean / 1e6:.3f} Mbit/s")


if __name__ == "__main__":
    main()
