"""The soak benchmark's own bookkeeping (bench_soak.py): the churn model, the RSS
fit and the threshold that fails a run. The soak itself needs root and minutes."""

from __future__ import annotations

import argparse
import random

import pytest
from bench_soak import CHURN_KEYS, Churn, Sample, slope_per_minute, summarize


def test_slope_is_per_minute_and_needs_two_distinct_times() -> None:
    assert slope_per_minute([(0, 100), (30, 110), (60, 120)]) == pytest.approx(20)
    assert slope_per_minute([(0, 5), (60, 5)]) == 0
    assert slope_per_minute([(0, 5)]) is None
    assert slope_per_minute([(3, 5), (3, 9)]) is None


def test_churn_batches_touch_distinct_keys_and_only_present_ones() -> None:
    churn = Churn(random.Random(7))
    for _ in range(2000):
        batch = churn.batch()
        keys = [key for _, key, _ in batch]
        assert len(set(keys)) == len(keys)
        for kind, key, entry in batch:
            assert (key in churn.entries) == (kind != "insert")
            assert entry.key[0] == ((172 << 24) | (16 << 16) | (key << 8), 24)
        churn.acknowledged(batch)
        assert len(churn.entries) <= CHURN_KEYS
    counts = churn.counts
    assert counts["insert"] - counts["delete"] == len(churn.entries)
    assert min(counts.values()) > 1000  # every kind of change is exercised


def _args(limit: float = 4096) -> argparse.Namespace:
    return argparse.Namespace(max_rss_slope=limit, report_interval=10.0, sample=1.0)


def _samples(seconds: int, kib_per_min: float) -> list[Sample]:
    return [
        Sample(float(t), 100_000 + round(kib_per_min * t / 60), 10, 10, 1000 * t, 900 * t, 0, 1)
        for t in range(seconds + 1)
    ]


def test_a_steep_rss_slope_fails_a_long_run_only() -> None:
    summary, failures = summarize(_samples(600, 8192), _args())
    assert summary["rss_slope_kib_per_min_after_warmup"] == pytest.approx(8192, rel=0.01)
    assert failures == ["RSS grows 8192 KiB/min after the warm-up (limit 4096)"]
    assert summary["forwarded_pps_mean"] == 900
    assert summarize(_samples(600, 1000), _args())[1] == []
    assert summarize(_samples(60, 8192), _args())[1] == []  # too short to judge
