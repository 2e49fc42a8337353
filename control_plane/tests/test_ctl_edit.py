"""Programmatic run-time changes agree with the same change made in the file."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
from ratelab_ctl.configfile import load_config
from ratelab_ctl.diff import diff_configs
from ratelab_ctl.edit import with_aqm, with_route, with_utilisation
from ratelab_model.config import AqmConfig


def test_same_as_editing_the_file(example_path: Path) -> None:
    cfg = load_config(example_path)

    def via_file(*overrides: str):
        return load_config(example_path, list(overrides))

    assert with_aqm(cfg, 3, "redok-edge") == via_file("ports.3.aqm.preset=redok-edge")
    assert with_aqm(cfg, 3, "red-lte", seed=1) == via_file("ports.3.aqm=red-lte")
    assert with_aqm(cfg, 1, "fifo") == cfg
    explicit = AqmConfig("red", Decimal("0.002"), Decimal("0.1"), 5, 15, 3)
    assert with_aqm(cfg, 1, explicit) == via_file(
        "ports.1.aqm={w_q: 0.002, max_p: 0.1, th_min: 5, th_max: 15, seed: 3}"
    )
    assert with_utilisation(cfg, 3, "0.5") == via_file("ports.3.utilisation=0.5")
    assert with_route(cfg, "10.0.9.0/24", "receiver") == via_file("routes.10.0.9.0/24=receiver")
    assert with_route(cfg, "10.0.2.0/24", "receiver") == via_file("routes.10.0.2.0/24=receiver")
    assert with_route(cfg, "10.0.2.0/24", None) == via_file("routes.10.0.2.0/24=~")
    assert len(diff_configs(cfg, with_utilisation(cfg, 3, Decimal("0.9")))) == 1


def test_bad_edits(example_path: Path) -> None:
    cfg = load_config(example_path)
    with pytest.raises(ValueError, match="port 9 is not configured"):
        with_aqm(cfg, 9, "fifo")
    with pytest.raises(ValueError, match="unknown AQM 'red-wifi'"):
        with_aqm(cfg, 3, "red-wifi")
    with pytest.raises(ValueError, match=r"utilisation must be in \(0, 1\], not 0"):
        with_utilisation(cfg, 3, "0")
    with pytest.raises(ValueError, match="unknown next hop 'nobody'"):
        with_route(cfg, "10.0.9.0/24", "nobody")
    with pytest.raises(ValueError, match="host bits"):
        with_route(cfg, "10.0.9.1/24", "receiver")
    fixed = load_config(example_path, ["ports.3.rbcc_capacity=1000"])
    with pytest.raises(ValueError, match="explicit rbcc_capacity"):
        with_utilisation(fixed, 3, "0.5")
