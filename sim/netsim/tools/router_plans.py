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
from ratelab_ctl.switch_options import MIN_SWITCH_QUEUE
from ratelab_model.p4_entries import all_entries
from ratelab_net.routers import plan_routers
from ratelab_net.topology import load_variants


def router_plans(path: str, overrides: list[str]) -> dict[str, Any]:
    """{"routers": [...], "hosts": [{"name", "address"}, ...]} of the topology file at `path`
    (its first variant, if it has variants) with `overrides` (KEY=VALUE) applied."""
    topo = load_variants(path, overrides)[0][1]
    routers = []
    for plan in plan_routers(topo):
        config = plan.config.router
        routers.append(
            {
                "name": plan.name,
                "entries": [
                    {
                        "table": e.table,
                        "key": [list(k) if isinstance(k, tuple) else k for k in e.key],
                        "action": e.action,
                        "params": list(e.params),
                    }
                    for e in all_entries(config)
                ],
                "ports": [
                    {"port": p.port, "queue_depth": max(MIN_SWITCH_QUEUE, 2 * p.queue_limit)}
                    for p in config.ports
                ],
            }
        )
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
