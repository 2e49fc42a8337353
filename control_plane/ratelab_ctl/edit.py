"""Run-time changes as functions from one configuration to the next.

Each returns a new `ControllerConfig`; `Controller.update(old, new)` then sends
only what differs. The numbers are derived the same way the file loader
derives them (`rbcc_capacity`, the model's presets), so a changed object and a
changed file give the same entries.

    new = with_aqm(cfg, 3, "redok-edge")
    ctl.update(cfg, new)
"""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

from ratelab_model.config import AqmConfig, Route
from ratelab_model.presets import PRESETS

from ratelab_ctl.configfile import ControllerConfig, rbcc_capacity
from ratelab_ctl.units import parse_prefix


def _port(cfg: ControllerConfig, port: int) -> AqmConfig:
    try:
        return cfg.router.port(port).aqm
    except KeyError:
        raise ValueError(f"port {port} is not configured") from None


def _replace_port(cfg: ControllerConfig, port: int, **changes: object) -> ControllerConfig:
    ports = tuple(replace(p, **changes) if p.port == port else p for p in cfg.router.ports)
    return replace(cfg, router=replace(cfg.router, ports=ports))


def _replace_settings(cfg: ControllerConfig, port: int, **changes: object) -> ControllerConfig:
    settings = tuple(replace(s, **changes) if s.port == port else s for s in cfg.ports)
    return replace(cfg, ports=settings)


def with_utilisation(
    cfg: ControllerConfig, port: int, utilisation: Decimal | str
) -> ControllerConfig:
    """A new RBCC utilisation target for one port (capacity = rate x target / 8)."""
    u = Decimal(utilisation)
    if not Decimal(0) < u <= Decimal(1):
        raise ValueError(f"utilisation must be in (0, 1], not {u}")
    _port(cfg, port)
    if cfg.port_settings(port).explicit_capacity:
        raise ValueError(f"port {port} has an explicit rbcc_capacity; change that instead")
    capacity = rbcc_capacity(cfg.router.port(port).rate_bps, u)
    cfg = _replace_port(cfg, port, rbcc_capacity=capacity)
    return _replace_settings(cfg, port, utilisation=u)


def with_aqm(
    cfg: ControllerConfig, port: int, aqm: str | AqmConfig, seed: int | None = None
) -> ControllerConfig:
    """FIFO, a preset by name, or explicit RED parameters for one port. The queue
    limit stays as it is; `seed` defaults to the port's current seed."""
    keep = _port(cfg, port).seed if seed is None else seed
    if isinstance(aqm, AqmConfig):
        new, name = (replace(aqm, seed=keep) if seed is not None else aqm), aqm.mode
    elif aqm == "fifo":
        new, name = AqmConfig("fifo", seed=keep), "fifo"
    elif aqm in PRESETS:
        new, name = PRESETS[aqm].aqm(keep), aqm
    else:
        raise ValueError(f"unknown AQM {aqm!r}: fifo or one of {', '.join(PRESETS)}")
    return _replace_settings(_replace_port(cfg, port, aqm=new), port, aqm_name=name)


def with_route(cfg: ControllerConfig, prefix: str, next_hop: str | None) -> ControllerConfig:
    """Add or change the route for `prefix` ("10.0.9.0/24"); `next_hop=None` removes it."""
    value, length = parse_prefix(prefix)
    routes = [r for r in cfg.router.routes if (r.prefix, r.length) != (value, length)]
    if next_hop is not None:
        hops = dict(cfg.next_hop_names)
        if next_hop not in hops:
            raise ValueError(f"unknown next hop {next_hop!r}: one of {', '.join(hops)}")
        new = Route(value, length, hops[next_hop])
        index = next(
            (i for i, r in enumerate(cfg.router.routes) if (r.prefix, r.length) == (value, length)),
            len(routes),
        )
        routes.insert(index, new)
    return replace(cfg, router=replace(cfg.router, routes=tuple(routes)))
