"""Every AQM preset the controller offers fits the Verilog core as built with
its default parameters: the driver's defaults are router_core.v's, and a
preset's queue limit (redok-lte: 400 packets) is at most PEND_DEPTH."""

from __future__ import annotations

import re

import pytest
from ctl_support import EXAMPLE, ROOT
from ratelab_ctl import hdl_driver as hd
from ratelab_ctl.configfile import load_config
from ratelab_model.presets import PRESETS

ROUTER_CORE = ROOT / "hdl" / "rtl" / "router_core.v"


def verilog_default(name: str) -> int:
    match = re.search(rf"^\s*parameter\s+{name}\s*=\s*(\d+)\s*,", ROUTER_CORE.read_text(), re.M)
    assert match, f"{ROUTER_CORE}: no default for {name}"
    return int(match.group(1))


def test_driver_defaults_are_the_cores() -> None:
    params = hd.CoreParams()
    for verilog, field in hd.CoreParams.VERILOG_NAMES.items():
        assert getattr(params, field) == verilog_default(verilog), verilog


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_preset_fits_the_default_core(preset: str) -> None:
    # The preset's own queue limit: the example's 2xBDP removed.
    cfg = load_config(EXAMPLE, ["ports.3.queue_limit=~", f"ports.3.aqm.preset={preset}"])
    assert cfg.router.port(3).queue_limit == PRESETS[preset].queue_limit
    writes = hd.config_writes(cfg.router, hd.CoreParams())
    limit = [w.value for w in writes if w.addr == hd.port_reg(3, hd.P_QUEUE_LIMIT)]
    assert limit == [PRESETS[preset].queue_limit]
