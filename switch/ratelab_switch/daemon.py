"""ratelab-switch: the switch daemon, a drop-in for BMv2's simple_switch_grpc."""

from __future__ import annotations

import logging
import signal
import sys
import threading
from collections.abc import Callable
from typing import Protocol, runtime_checkable

import grpc

from .bmv2_runtime import Bmv2Runtime
from .device import TRACE, Device
from .engine_api import EngineAdapter, EngineError
from .errors import P4RuntimeError
from .options import DaemonOptions, OptionsError, TlsFiles, parse_options
from .server import P4RuntimeServer
from .thrift_server import DEFAULT_THRIFT_PORT, ThriftServer

log = logging.getLogger("ratelab_switch")

_LEVELS = {
    "trace": TRACE,
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warn": logging.WARNING,
    "error": logging.ERROR,
}


class DaemonError(Exception):
    """The daemon cannot start or go on; the message is one line for the user."""


@runtime_checkable
class Dataplane(Protocol):
    """An engine that also moves packets (port I/O threads) once a Device exists."""

    def start(self, device: Device, on_fatal: Callable[[str], None]) -> None: ...

    def stop(self) -> None: ...


EngineFactory = Callable[[DaemonOptions], EngineAdapter]


def default_engine(opts: DaemonOptions) -> EngineAdapter:
    """The Rust engine through its Python binding, with the options' ports attached."""
    try:
        from .engine_binding import open_engine
    except ImportError as e:
        raise DaemonError(
            f"the ratelab_engine extension is not available ({e}); build it with "
            "`maturin develop --release -m switch/pyengine/Cargo.toml`"
        ) from None
    return open_engine(opts)


def setup_logging(opts: DaemonOptions) -> None:
    logging.addLevelName(TRACE, "TRACE")
    root = logging.getLogger("ratelab_switch")
    root.handlers.clear()
    root.propagate = False
    if opts.log_level == "off" or not (opts.log_console or opts.log_file):
        root.setLevel(logging.CRITICAL + 1)
        return
    root.setLevel(_LEVELS[opts.log_level])
    fmt = logging.Formatter("[%(asctime)s.%(msecs)03d] [%(levelname)s] %(message)s", "%H:%M:%S")
    handlers: list[logging.Handler] = []
    if opts.log_console:
        handlers.append(logging.StreamHandler(sys.stderr))
    if opts.log_file:
        try:
            handlers.append(logging.FileHandler(opts.log_file))
        except OSError as e:
            raise DaemonError(f"--log-file: cannot open {opts.log_file!r}: {e.strerror}") from None
    for h in handlers:
        h.setFormatter(fmt)
        root.addHandler(h)


def _server_credentials(tls: TlsFiles) -> grpc.ServerCredentials:
    def read(path: str) -> bytes:
        try:
            with open(path, "rb") as f:
                return f.read()
        except OSError as e:
            raise DaemonError(f"cannot read {path!r}: {e.strerror}") from None

    return grpc.ssl_server_credentials(
        [(read(tls.key), read(tls.cert))],
        root_certificates=read(tls.cacert) if tls.cacert else None,
        require_client_auth=tls.client_auth,
    )


def _load_program(opts: DaemonOptions, engine: EngineAdapter) -> None:
    """The program given on the command line, if any, loaded before anything listens."""
    if opts.json_path is None:
        return
    try:
        with open(opts.json_path, "rb") as f:
            program = f.read()
    except OSError as e:
        raise DaemonError(f"cannot read {opts.json_path!r}: {e.strerror}") from None
    try:
        engine.load_config(program)
    except EngineError as e:
        raise DaemonError(f"{opts.json_path}: {e.message}") from None


def _thrift_server(opts: DaemonOptions, engine: EngineAdapter) -> ThriftServer | None:
    """BMv2's runtime Thrift server, bound (not yet serving). Without --thrift-port
    a taken 9090 costs a warning only: several switches on one machine are common."""
    port = DEFAULT_THRIFT_PORT if opts.thrift_port is None else opts.thrift_port
    try:
        server = ThriftServer(Bmv2Runtime(engine), port, device_id=opts.device_id)
    except OSError as e:
        if opts.thrift_port is not None:
            raise DaemonError(f"--thrift-port: cannot listen on {port}: {e.strerror}") from None
        print(
            f"ratelab-switch: warning: no Thrift server: port {port} is taken ({e.strerror}); "
            "give --thrift-port",
            file=sys.stderr,
        )
        return None
    log.info("Thrift server on port %d", server.port)
    return server


def run(opts: DaemonOptions, engine: EngineAdapter, stop: threading.Event) -> None:
    """Serve until `stop` is set. Prints "Server listening on ADDR" once ready, as
    simple_switch_grpc does (scripts wait for it).

    Readiness: scripts (Mininet's P4 switches, p4c's test drivers) take a control
    port that accepts connections to mean the switch forwards. So the program is
    loaded and every port opened and fed by the packet thread first; only then do
    the control servers bind their ports."""
    _load_program(opts, engine)
    device = Device(engine, device_id=opts.device_id, cpu_port=opts.cpu_port)
    credentials = _server_credentials(opts.tls) if opts.tls is not None else None
    dataplane = engine if isinstance(engine, Dataplane) else None
    fatal: list[str] = []

    def on_fatal(message: str) -> None:
        fatal.append(message)
        stop.set()

    server: P4RuntimeServer | None = None
    thrift: ThriftServer | None = None
    try:
        if dataplane is not None:
            try:
                dataplane.start(device, on_fatal)
            except EngineError as e:
                raise DaemonError(e.message) from None
        thrift = _thrift_server(opts, engine)
        try:
            server = P4RuntimeServer(device, opts.grpc_server_addr, credentials=credentials)
        except (OSError, RuntimeError) as e:
            raise DaemonError(f"cannot listen on {opts.grpc_server_addr}: {e}") from None
        if thrift is not None:
            thrift.start()
        server.start()
        host = opts.grpc_server_addr.rpartition(":")[0]
        print(f"Server listening on {host}:{server.port}", flush=True)
        log.info("device id %d, cpu port %s", opts.device_id, opts.cpu_port)
        stop.wait()
        if fatal:
            raise DaemonError(fatal[0])
    finally:
        log.info("shutting down")
        if thrift is not None:
            thrift.stop()
        if server is not None:
            server.stop(grace=0.5)
        if dataplane is not None:
            dataplane.stop()


def main(argv: list[str] | None = None, engine_factory: EngineFactory | None = None) -> int:
    try:
        opts = parse_options(sys.argv[1:] if argv is None else argv)
        setup_logging(opts)
        for note in opts.notes:
            print(f"ratelab-switch: note: {note}", file=sys.stderr)
        engine = (engine_factory or default_engine)(opts)
        stop = threading.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: stop.set())
        run(opts, engine, stop)
    except OptionsError as e:
        print(f"ratelab-switch: error: {e}", file=sys.stderr)
        return 2
    except (DaemonError, P4RuntimeError) as e:
        print(f"ratelab-switch: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
