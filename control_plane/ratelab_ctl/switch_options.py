"""The ratelab-switch options a configuration needs: ports drain at their link rate,
and the switch's own queues hold more than the program's queue_limit (so the
program's admission, not the switch, decides every drop)."""

from __future__ import annotations

from ratelab_model.config import RouterConfig

from ratelab_ctl.units import format_rate

MIN_SWITCH_QUEUE = 64  # simple_switch's default depth


def switch_options(router: RouterConfig) -> list[str]:
    opts: list[str] = []
    for p in router.ports:
        if p.rate_bps:
            opts += ["--queue-rate", f"{p.port}={format_rate(p.rate_bps)}"]
        opts += ["--queue-depth", f"{p.port}={max(MIN_SWITCH_QUEUE, 2 * p.queue_limit)}"]
    return opts
