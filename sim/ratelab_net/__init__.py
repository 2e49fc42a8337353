"""ratelab-net: Mininet experiments with ratelab routers, and the same topology
files in ratelab's simulator (docs/NET.md).

`ratelab_net.simulate(topology, *, variant=None, seed=0, sets=())` runs one in
the simulator and returns `Results` (pandas DataFrames; sim_api.py). Loaded
on first use, so that the rest of the package does not import pandas.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Results", "SimError", "simulate"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from ratelab_net import sim_api

        return getattr(sim_api, name)
    raise AttributeError(f"module 'ratelab_net' has no attribute {name!r}")
