"""The queue gauges of a BMv2 router over BMv2's Thrift runtime API.

The report's queue columns are router.p4's `last_q` register (and `last_avg`
beside it; ratelab_ctl.counters.GAUGE_REGISTERS), which ratelab-switch serves
over P4Runtime and simple_switch_grpc does not. BMv2 serves registers on its
Thrift port instead (`Standard.bm_register_read_all`, the service
`simple_switch_CLI`'s `register_read` uses): `with_gauges` reads them there and
fills the snapshots the controller read over P4Runtime.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import replace
from types import TracebackType

from bm_runtime.standard import Standard
from bm_runtime.standard.ttypes import InvalidRegisterOperation, RegisterOperationErrorCode
from ratelab_ctl.counters import GAUGE_REGISTERS, CounterSnapshot
from thrift.protocol import TBinaryProtocol, TMultiplexedProtocol
from thrift.Thrift import TException
from thrift.transport import TSocket, TTransport

from ratelab_net.network import NetError

SERVICE = "standard"  # BMv2 multiplexes its Thrift services by name
CONTEXT = 0  # simple_switch has one context
# thrift logs a failed connect on stderr itself; NetError says it in one line instead
_SOCKET_LOG = logging.getLogger(TSocket.__name__)


class ThriftRegisters:
    """A connection to one switch's Thrift runtime server, reading whole registers.
    Calls from several threads are serialized (a Thrift client is not shared safely)."""

    def __init__(self, host: str, port: int, router: str, timeout_s: float = 10.0) -> None:
        self.address = f"{host}:{port}"
        self.router = router
        socket = TSocket.TSocket(host, port)
        socket.setTimeout(timeout_s * 1000)
        self._transport = TTransport.TBufferedTransport(socket)
        protocol = TBinaryProtocol.TBinaryProtocol(self._transport)
        self._client = Standard.Client(TMultiplexedProtocol.TMultiplexedProtocol(protocol, SERVICE))
        self._lock = threading.Lock()

    def open(self) -> ThriftRegisters:
        level = _SOCKET_LOG.level
        _SOCKET_LOG.setLevel(logging.CRITICAL + 1)
        try:
            self._transport.open()
        except TException as e:
            raise NetError(
                f"router {self.router}: no Thrift runtime server on {self.address}: {e}"
            ) from None
        finally:
            _SOCKET_LOG.setLevel(level)
        return self

    def close(self) -> None:
        self._transport.close()

    def __enter__(self) -> ThriftRegisters:
        return self.open()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def read_all(self, register: str) -> list[int]:
        """Every cell of `register` (its name in the JSON), index 0 first."""
        try:
            with self._lock:
                return [int(v) for v in self._client.bm_register_read_all(CONTEXT, register)]
        except InvalidRegisterOperation as e:
            code = RegisterOperationErrorCode._VALUES_TO_NAMES.get(e.code, str(e.code))
            raise NetError(
                f"router {self.router}: reading register {register} over Thrift "
                f"({self.address}) failed: {code}"
            ) from None
        except TException as e:
            raise NetError(
                f"router {self.router}: reading register {register} over Thrift "
                f"({self.address}) failed: {e}"
            ) from None


def fill_gauges(snap: CounterSnapshot, registers: ThriftRegisters) -> CounterSnapshot:
    """`snap` with each port's gauges (last_q, last_avg) read from the registers."""
    cells = {name: registers.read_all(reg) for name, reg in GAUGE_REGISTERS.items()}
    ports = {}
    for port, counters in snap.ports.items():
        missing = [name for name, values in cells.items() if port >= len(values)]
        if missing:
            raise NetError(
                f"router {registers.router}: register {GAUGE_REGISTERS[missing[0]]} has "
                f"{len(cells[missing[0]])} cells, no port {port}"
            )
        ports[port] = replace(counters, **{name: values[port] for name, values in cells.items()})
    return CounterSnapshot(snap.time, ports, True)


def with_gauges(
    read: Callable[[], CounterSnapshot], registers: ThriftRegisters
) -> Callable[[], CounterSnapshot]:
    """`read` (the controller's counters over P4Runtime), its gauges filled over
    Thrift where P4Runtime gave none."""

    def read_with_gauges() -> CounterSnapshot:
        snap = read()
        return snap if snap.gauges else fill_gauges(snap, registers)

    return read_with_gauges
