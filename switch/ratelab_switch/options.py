"""simple_switch_grpc's command line, plus ratelab's own options.

simple_switch_grpc takes generic BMv2 options, the JSON program (or --no-p4),
then `--` and the target options (--grpc-server-addr, --cpu-port, ...). Scripts
are not always careful about which side of `--` an option sits on, so every
option is accepted on either side.
"""

from __future__ import annotations

import argparse
import os
import re
import socket
from dataclasses import dataclass, field


class OptionsError(Exception):
    """Bad command-line input; the message is one line for the user."""


LOG_LEVELS = ("trace", "debug", "info", "warn", "error", "off")
IGNORED_WITH_NOTE = {
    "notifications_addr": "no nanomsg notifications",
    "nanolog": "no nanomsg logging",
    "debugger_addr": "no debugger",
    "dump_packet_data": "packet data is not logged",
}
DROP_PORT = 511  # the engine's drop port, as BMv2's default
MAX_QUEUES = 8  # strict-priority queues per port (simple_switch's limit, the engine's)


@dataclass(frozen=True)
class QueueRate:
    value: int  # 0: unlimited
    unit: str  # "bps" (bits per second) or "pps"


@dataclass(frozen=True)
class PortTrace:
    """--port-trace: a mahimahi trace (its file name and text, already checked)."""

    path: str
    text: str
    opportunities: int  # per period
    period_ms: int
    mean_rate_bps: int


@dataclass(frozen=True)
class TlsFiles:
    """--grpc-server-ssl: PEM files for the P4Runtime server."""

    cert: str
    key: str
    cacert: str | None = None
    client_auth: bool = False


@dataclass
class DaemonOptions:
    json_path: str | None
    interfaces: dict[int, str] = field(default_factory=dict)
    device_id: int = 0
    grpc_server_addr: str = "0.0.0.0:9559"
    cpu_port: int | None = None
    log_console: bool = False
    log_file: str | None = None
    log_level: str = "info"
    pcap_dir: str | None = None
    use_files: int | None = None  # --use-files WAIT: ports are pcap files (seconds to wait)
    seed: int = 0
    tls: TlsFiles | None = None
    queue_depth: dict[int, int] = field(default_factory=dict)
    queue_rate: dict[int, QueueRate] = field(default_factory=dict)
    link_delay: dict[int, int] = field(default_factory=dict)  # µs; 0: none
    link_jitter: dict[int, int] = field(default_factory=dict)  # µs; 0: none
    port_trace: dict[int, PortTrace] = field(default_factory=dict)
    priority_queues: dict[int, int] = field(default_factory=dict)  # port -> 1..8 queues
    thrift_port: int | None = None  # BMv2 runtime Thrift server; None: 9090 if free
    notes: list[str] = field(default_factory=list)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise OptionsError(message)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="ratelab-switch",
        description="ratelab's software switch: simple_switch_grpc's command line over "
        "ratelab's engine. Options may sit before or after the `--` separator.",
    )
    p.add_argument("json", nargs="?", help="BMv2 JSON program to load at start")
    p.add_argument("--no-p4", action="store_true", help="start without a program")
    p.add_argument(
        "-i",
        "--interface",
        action="append",
        default=[],
        metavar="PORT@IFACE",
        help="attach network interface IFACE as switch port PORT (repeatable)",
    )
    p.add_argument("--device-id", default="0", help="P4Runtime device id (default 0)")
    p.add_argument("--grpc-server-addr", default="0.0.0.0:9559", help="P4Runtime listen address")
    p.add_argument("--cpu-port", help="port number for PacketIn/PacketOut")
    p.add_argument("--grpc-server-ssl", action="store_true", help="serve P4Runtime over TLS")
    p.add_argument("--grpc-server-cert", help="PEM server certificate (with --grpc-server-ssl)")
    p.add_argument("--grpc-server-key", help="PEM server private key (with --grpc-server-ssl)")
    p.add_argument("--grpc-server-cacert", help="PEM CA certificate(s) for client certificates")
    p.add_argument(
        "--grpc-server-with-client-auth",
        action="store_true",
        help="require client certificates signed by --grpc-server-cacert",
    )
    p.add_argument("--log-console", action="store_true", help="log to stderr")
    p.add_argument("--log-file", help="log to this file")
    p.add_argument("-L", "--log-level", default="info", help="|".join(LOG_LEVELS))
    p.add_argument("--log-flush", action="store_true", help="accepted (logs are line-buffered)")
    p.add_argument("--pcap", dest="pcap", metavar="DIR", help="write per-port pcap files to DIR")
    p.add_argument(
        "--use-files",
        dest="use_files",
        metavar="WAIT",
        help="ports are pcap files: -i N@NAME reads NAME_in.pcap (after WAIT seconds) and "
        "writes NAME_out.pcap",
    )
    p.add_argument(
        "--thrift-port", dest="thrift_port", help="BMv2 runtime Thrift server port (default 9090)"
    )
    p.add_argument("--notifications-addr", dest="notifications_addr", help="accepted, ignored")
    p.add_argument("--nanolog", dest="nanolog", help="accepted and ignored")
    p.add_argument("--debugger-addr", dest="debugger_addr", help="accepted and ignored")
    p.add_argument("--dump-packet-data", dest="dump_packet_data", help="accepted and ignored")
    p.add_argument(
        "--max-port-count", default="512", help="ports are numbered below this (max 512)"
    )
    p.add_argument("--drop-port", help=f"only {DROP_PORT} (the default) is supported")
    p.add_argument("--seed", default="0", help="seed for the engine's random numbers")
    p.add_argument(
        "--queue-depth",
        action="append",
        default=[],
        metavar="PORT=PKTS",
        help="egress queue depth of a port in packets (repeatable)",
    )
    p.add_argument(
        "--queue-rate",
        action="append",
        default=[],
        metavar="PORT=RATE",
        help="egress drain rate of a port: 10mbit, 1gbit, 1000pps, unlimited (repeatable)",
    )
    p.add_argument(
        "--link-delay",
        action="append",
        default=[],
        metavar="PORT=DELAY",
        help="propagation delay of a port's link after its drain rate: 20ms, 500us, 1.5s; "
        "a bare number is µs, 0 none (repeatable)",
    )
    p.add_argument(
        "--link-jitter",
        action="append",
        default=[],
        metavar="PORT=JITTER",
        help="largest random extra delay of a port's link, uniform per frame and never "
        "reordering: 1ms, 500us; a bare number is µs, 0 none (repeatable; seeded by --seed)",
    )
    p.add_argument(
        "--port-trace",
        action="append",
        default=[],
        metavar="PORT=FILE",
        help="drain a port by a mahimahi trace instead of its rate: one 1500-byte delivery "
        "opportunity per line, in ms, looping from when the program is loaded (repeatable)",
    )
    p.add_argument(
        "--priority-queues",
        action="append",
        default=[],
        metavar="PORT=N",
        help="N (1..8) strict-priority queues on a port, as simple_switch's --priority-queues: "
        "a packet joins queue min(standard_metadata.priority, N-1), the highest queue "
        "with a packet is served first, each queue has the port's depth (repeatable)",
    )
    return p


def _split_pcap(argv: list[str]) -> list[str]:
    """BMv2's --pcap takes its directory only as --pcap=DIR; a bare --pcap means ".".

    A following token is taken as the directory only if it is an existing directory,
    so `--pcap prog.json` keeps prog.json as the program.
    """
    out: list[str] = []
    i = 0
    while i < len(argv):
        tok = argv[i]
        if tok == "--pcap":
            nxt = argv[i + 1] if i + 1 < len(argv) else None
            if nxt is not None and not nxt.startswith("-") and os.path.isdir(nxt):
                out.append(f"--pcap={nxt}")
                i += 2
                continue
            out.append("--pcap=.")
        else:
            out.append(tok)
        i += 1
    return out


def _int(text: str, what: str, lo: int = 0, hi: int | None = None) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        raise OptionsError(f"{what}: {text!r} is not an integer") from None
    if value < lo or (hi is not None and value > hi):
        bound = f"{lo}..{hi}" if hi is not None else f">= {lo}"
        raise OptionsError(f"{what}: {value} is out of range ({bound})")
    return value


_RATE = re.compile(r"^(\d+(?:\.\d+)?)\s*(bit|kbit|mbit|gbit|bps|kbps|mbps|gbps|pps|kpps|mpps)$")
# As tc(8) reads them: "bit" suffixes are bits per second, "bps" ones bytes per second.
_RATE_SCALE = {
    "bit": (1, "bps"),
    "kbit": (10**3, "bps"),
    "mbit": (10**6, "bps"),
    "gbit": (10**9, "bps"),
    "bps": (8, "bps"),
    "kbps": (8 * 10**3, "bps"),
    "mbps": (8 * 10**6, "bps"),
    "gbps": (8 * 10**9, "bps"),
    "pps": (1, "pps"),
    "kpps": (10**3, "pps"),
    "mpps": (10**6, "pps"),
}


def parse_rate(text: str) -> QueueRate:
    """'10mbit' -> 10_000_000 bit/s; '1000pps' -> 1000 packets/s; 'unlimited' -> no limit
    (value 0). Units as tc(8) reads them (kbps = kilobytes per second)."""
    t = text.strip().lower()
    if t == "unlimited":
        return QueueRate(0, "bps")
    m = _RATE.match(t)
    if m is None:
        raise OptionsError(
            f"--queue-rate: {text!r} is not a rate like 10mbit, 1000pps or unlimited"
        )
    scale, unit = _RATE_SCALE[m.group(2)]
    value = round(float(m.group(1)) * scale)
    if value <= 0:
        raise OptionsError(f"--queue-rate: {text!r} must be above zero (or unlimited)")
    return QueueRate(value, unit)


_DELAY = re.compile(r"^(\d+(?:\.\d*)?|\.\d+)\s*(us|ms|s)?$")
_DELAY_SCALE = {None: 1, "us": 1, "ms": 10**3, "s": 10**6}
MAX_DELAY_US = 3600 * 10**6  # an hour: anything above is a typo, not a link


def parse_delay(text: str, what: str = "delay") -> int:
    """'20ms' -> 20000 µs; '500us', '1.5s'; a bare number is µs (rounded to the µs)."""
    m = _DELAY.match(text.strip().lower())
    if m is None:
        raise OptionsError(f"{what}: {text!r} is not a delay like 20ms, 500us, 1.5s or 100")
    us = round(float(m.group(1)) * _DELAY_SCALE[m.group(2)])
    if us > MAX_DELAY_US:
        raise OptionsError(f"{what}: {text!r} is above an hour")
    return us


def _port_pair(text: str, option: str) -> tuple[int, str]:
    port, sep, rest = text.partition("=")
    if not sep or not rest:
        raise OptionsError(f"{option}: expected PORT=VALUE, got {text!r}")
    return _int(port, f"{option} port", 0, 511), rest


def read_trace(path: str, option: str = "--port-trace") -> PortTrace:
    """Reads and checks a mahimahi trace with the engine's own parser; a bad one is
    an OptionsError naming the file and line."""
    import ratelab_engine

    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise OptionsError(f"{option}: cannot read trace {path!r}: {e}") from None
    try:
        opportunities, period_ms, rate = ratelab_engine.check_trace(text, path)
    except ratelab_engine.EngineError as e:
        _, message = e.args
        raise OptionsError(f"{option}: {message}") from None
    return PortTrace(path, text, opportunities, period_ms, rate)


def interface_exists(name: str) -> bool:
    try:
        socket.if_nametoindex(name)
    except OSError:
        return False
    return True


def _tls(args: argparse.Namespace) -> TlsFiles | None:
    given = [args.grpc_server_cert, args.grpc_server_key, args.grpc_server_cacert]
    if not args.grpc_server_ssl:
        if any(given) or args.grpc_server_with_client_auth:
            raise OptionsError("the --grpc-server-cert/-key/-cacert options need --grpc-server-ssl")
        return None
    if not args.grpc_server_cert or not args.grpc_server_key:
        raise OptionsError("--grpc-server-ssl needs --grpc-server-cert and --grpc-server-key")
    if args.grpc_server_with_client_auth and not args.grpc_server_cacert:
        raise OptionsError("--grpc-server-with-client-auth needs --grpc-server-cacert")
    for option, path in (
        ("--grpc-server-cert", args.grpc_server_cert),
        ("--grpc-server-key", args.grpc_server_key),
        ("--grpc-server-cacert", args.grpc_server_cacert),
    ):
        if path is not None and not os.path.isfile(path):
            raise OptionsError(f"{option}: file {path!r} does not exist")
    return TlsFiles(
        args.grpc_server_cert,
        args.grpc_server_key,
        args.grpc_server_cacert,
        args.grpc_server_with_client_auth,
    )


def parse_options(argv: list[str], check_interfaces: bool = True) -> DaemonOptions:
    tokens = [t for t in argv if t != "--"]  # one option set, whichever side of `--`
    args = _parser().parse_args(_split_pcap(tokens))
    if args.no_p4 and args.json:
        raise OptionsError("give either a JSON program or --no-p4, not both")
    if not args.no_p4 and not args.json:
        raise OptionsError("a JSON program (or --no-p4) is required")
    if args.json and not os.path.isfile(args.json):
        raise OptionsError(f"JSON program {args.json!r} does not exist")
    level = args.log_level.lower()
    if level not in LOG_LEVELS:
        raise OptionsError(f"--log-level: {args.log_level!r} is not one of {', '.join(LOG_LEVELS)}")
    host, sep, port = args.grpc_server_addr.rpartition(":")
    if not sep or not host:
        raise OptionsError(f"--grpc-server-addr: {args.grpc_server_addr!r} is not HOST:PORT")
    _int(port, "--grpc-server-addr port", 0, 65535)
    opts = DaemonOptions(
        json_path=args.json,
        device_id=_int(args.device_id, "--device-id", 0, 2**64 - 1),
        grpc_server_addr=args.grpc_server_addr,
        cpu_port=None if args.cpu_port is None else _int(args.cpu_port, "--cpu-port", 0, 511),
        log_console=args.log_console,
        log_file=args.log_file,
        log_level=level,
        pcap_dir=args.pcap,
        seed=_int(args.seed, "--seed", 0, 2**64 - 1),
    )
    if args.thrift_port is not None:
        opts.thrift_port = _int(args.thrift_port, "--thrift-port", 0, 65535)
    if args.use_files is not None:
        # BMv2 takes a negative wait as 0.
        opts.use_files = max(0, _int(args.use_files, "--use-files", -(2**31), 2**31 - 1))
        if opts.pcap_dir is not None:
            raise OptionsError("--pcap and --use-files cannot be combined")
    for spec in args.interface:
        port_text, at, iface = spec.partition("@")
        if not at or not iface:
            raise OptionsError(f"-i: expected PORT@IFACE, got {spec!r}")
        port_no = _int(port_text, "-i port", 0, 511)
        if port_no in opts.interfaces:
            raise OptionsError(f"-i: port {port_no} given twice")
        if opts.use_files is not None:
            if not os.path.isfile(f"{iface}_in.pcap"):
                raise OptionsError(f"-i: pcap file {iface + '_in.pcap'!r} does not exist")
        elif check_interfaces and not interface_exists(iface):
            raise OptionsError(f"-i: network interface {iface!r} does not exist")
        opts.interfaces[port_no] = iface
    if opts.cpu_port is not None and opts.cpu_port in opts.interfaces:
        raise OptionsError(f"--cpu-port {opts.cpu_port} is also attached to an interface")
    for spec in args.queue_depth:
        port_no, value = _port_pair(spec, "--queue-depth")
        opts.queue_depth[port_no] = _int(value, "--queue-depth packets", 1)
    for spec in args.queue_rate:
        port_no, value = _port_pair(spec, "--queue-rate")
        opts.queue_rate[port_no] = parse_rate(value)
    for spec in args.link_delay:
        port_no, value = _port_pair(spec, "--link-delay")
        opts.link_delay[port_no] = parse_delay(value, "--link-delay")
    for spec in args.link_jitter:
        port_no, value = _port_pair(spec, "--link-jitter")
        opts.link_jitter[port_no] = parse_delay(value, "--link-jitter")
    for spec in args.priority_queues:
        port_no, value = _port_pair(spec, "--priority-queues")
        opts.priority_queues[port_no] = _int(value, "--priority-queues queues", 1, MAX_QUEUES)
    for spec in args.port_trace:
        port_no, value = _port_pair(spec, "--port-trace")
        opts.port_trace[port_no] = read_trace(value)
    if opts.pcap_dir is not None and not os.path.isdir(opts.pcap_dir):
        raise OptionsError(f"--pcap: directory {opts.pcap_dir!r} does not exist")
    opts.tls = _tls(args)
    for name, why in IGNORED_WITH_NOTE.items():
        if getattr(args, name) is not None:
            opts.notes.append(f"--{name.replace('_', '-')} is accepted and ignored ({why})")
    if args.drop_port is not None and _int(args.drop_port, "--drop-port", 0, 511) != DROP_PORT:
        raise OptionsError(f"--drop-port: only {DROP_PORT} is supported")
    max_ports = _int(args.max_port_count, "--max-port-count", 1, 512)
    for port_no in [*opts.interfaces, *([opts.cpu_port] if opts.cpu_port is not None else [])]:
        if port_no >= max_ports:
            raise OptionsError(f"port {port_no} is not below --max-port-count {max_ports}")
    return opts
