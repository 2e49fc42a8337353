"""Writes each router's plan of a topology file as the simulator's router JSON.

The plan is the one ratelab-net pushes over P4Runtime (ratelab_net.routers,
the controller's entries from ratelab_model.p4_entries, the switch's queue
depths from ratelab_ctl.switch_options), in the form the simulator writes
straight into the engine (sim/netsim/README.md "Scenario format"):

    .venv/bin/python sim/netsim/tools/router_plans.py TOPOLOGY.yaml OUT.json [KEY=VALUE ...]
"""

from __future__ import annotations

import json
import sys
from typing import Any

from ratelab_ctl.configfile import ConfigError
from ratelab_net.routers import plan_routers
from ratelab_net.sim_scenario import router_spec
from ratelab_net.topology import load_variants


def router_plans(path: str, overrides: list[str]) -> dict[str, Any]:
    """{"routers": [...], "hosts": [{"name", "address"}, ...]} of the topology file at `path`
    (its first variant, if it has variants) with `overrides` (KEY=VALUE) applied."""
    topo = load_variants(path, overrides)[0][1]
    routers = [router_spec(plan) for plan in plan_routers(topo)]
    hosts = [{"name": h, "address": topo.host_address(h)[0]} for h in topo.hosts]
    return {"routers": routers, "hosts": hosts}


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: router_plans.py TOPOLOGY.yaml OUT.json [KEY=VALUE ...]", file=sys.stderr)
        return 2
    try:
        plans = router_plans(argv[0], argv[2:])
    except (ConfigError, OSError) as e:
        print(f"router_plans: {e}", file=sys.stderr)
        return 1
    with open(argv[1], "w") as f:
        json.dump(plans, f)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
