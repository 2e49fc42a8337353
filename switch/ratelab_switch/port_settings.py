"""Per-port traffic-manager and link settings that are not P4Runtime: queue depth,
drain rate and link propagation delay, as set on the command line and at run time.

`PortSettings` is the bookkeeping an engine binding keeps (so settings made before
a program is loaded, or for all ports, apply when the engine switch exists);
`PortTarget` is what the ratelab gRPC service (target_service.py) needs of an engine.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Protocol, runtime_checkable

from .options import OptionsError, QueueRate

MAX_PORT = 511
DEFAULT_DEPTH = 64  # the engine's (and simple_switch's) default
MAX_DEPTH = 1 << 31

UNLIMITED = QueueRate(0, "bps")


@dataclass(frozen=True)
class PortConfig:
    queue_depth: int = DEFAULT_DEPTH
    queue_rate: QueueRate = UNLIMITED
    link_delay_us: int = 0
    link_jitter_us: int = 0  # a uniform random extra delay per frame, up to this


def format_rate(rate: QueueRate) -> str:
    """The inverse of options.parse_rate, exact: 10000000bit, 1000pps, unlimited."""
    if rate.value == 0:
        return "unlimited"
    return f"{rate.value}{'bit' if rate.unit == 'bps' else 'pps'}"


def check_port(port: int | None) -> None:
    if port is not None and not 0 <= port <= MAX_PORT:
        raise OptionsError(f"port {port} is out of range (0..{MAX_PORT})")


class PortSettings:
    """A default for every port plus per-port overrides. Setting a value for all
    ports (port None) drops that field's overrides, as BMv2's CLI does."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.default = PortConfig()
        self.ports: dict[int, PortConfig] = {}

    def get(self, port: int) -> PortConfig:
        return self.ports.get(port, self.default)

    def set(self, port: int | None, **change: object) -> list[int]:
        """Records a change; returns the ports it applies to (every port for None)."""
        check_port(port)
        if port is None:
            self.default = replace(self.default, **change)  # type: ignore[arg-type]
            self.ports = {p: replace(c, **change) for p, c in self.ports.items()}  # type: ignore[arg-type]
            return list(range(MAX_PORT + 1))
        self.ports[port] = replace(self.get(port), **change)  # type: ignore[arg-type]
        return [port]


# A port's counters, in GetPortStats and `port_stats` order:
#   rx_packets, rx_bytes    frames the pipeline received on the port
#   tx_packets, tx_bytes    frames the port sent (after its queue)
#   queue_length            packets in the port's egress queue now
#   queue_drops             packets refused by the full egress queue
#   mtu_drops               frames too large for the interface (in or out)
#   rx_drops                frames the kernel dropped before the switch read them,
#                           because the packet thread fell behind (an overloaded
#                           switch: the experiment's losses are not all the queue's)
#   tx_errors               sends the kernel refused (or to a removed interface)
PORT_STATS_FIELDS = (
    "rx_packets",
    "rx_bytes",
    "tx_packets",
    "tx_bytes",
    "queue_length",
    "queue_drops",
    "mtu_drops",
    "rx_drops",
    "tx_errors",
)
PortStats = dict[str, int]


@runtime_checkable
class PortTarget(Protocol):
    """An engine whose ports' queues and links can be set at run time. `port` None
    means every port. Values are already validated (depth >= 1, delay in range)."""

    def set_queue_depth(self, port: int | None, depth: int) -> None: ...

    def set_queue_rate(self, port: int | None, rate: QueueRate) -> None: ...

    def set_link_delay(self, port: int | None, delay_us: int) -> None: ...

    def port_settings(self) -> tuple[PortConfig, dict[int, PortConfig]]:
        """The default and the ports that differ from it (or were set one by one)."""
        ...

    def in_flight(self, port: int) -> int:
        """Frames on the port's delayed link, not yet at its far end."""
        ...

    def stats_ports(self) -> list[int]:
        """The ports GetPortStats lists when asked for every port."""
        ...

    def interface(self, port: int) -> str | None:
        """The interface bound to the port (-i PORT@IFACE), if any."""
        ...

    def port_stats(self, ports: Sequence[int]) -> list[PortStats]:
        """The counters of each of `ports`, in order (see PORT_STATS_FIELDS)."""
        ...
