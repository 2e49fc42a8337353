"""The ratelab-switch options a configuration needs: ports drain at their link rate,
the switch's own queues hold more than the program's queue_limit (so the
program's admission, not the switch, decides every drop), and ports with
strict-priority queues have them (P4Runtime cannot set any of these)."""

from __future__ import annotations

from collections.abc import Mapping

from ratelab_model.config import RouterConfig

from ratelab_ctl.units import format_rate

MIN_SWITCH_QUEUE = 64  # simple_switch's default depth


def switch_options(
    router: RouterConfig, priority_queues: Mapping[int, int] | None = None
) -> list[str]:
    """`priority_queues`: port -> queues (`priority.priority_queues(cfg)`); each
    queue gets the port's depth, as in simple_switch."""
    opts: list[str] = []
    for p in router.ports:
        if p.rate_bps:
            opts += ["--queue-rate", f"{p.port}={format_rate(p.rate_bps)}"]
        opts += ["--queue-depth", f"{p.port}={max(MIN_SWITCH_QUEUE, 2 * p.queue_limit)}"]
    for port, queues in sorted((priority_queues or {}).items()):
        opts += ["--priority-queues", f"{port}={queues}"]
    return opts
