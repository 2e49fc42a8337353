"""``python -m ratelab_hosts``: RBCC, UDP and kernel-TCP traffic over real sockets.

Subcommands: rbcc-send, rbcc-recv, udp-send, udp-sink, tcp-send, tcp-sink.
Each prints one summary line on stdout at the end and, with --json-out, writes
its per-flow results (for RBCC including the rate the network gave the flow
over time, for TCP the kernel's TCP_INFO over time). Bad input:
one line on stderr, exit status 2. Failures at run time: one line, status 1.
The receivers print "listening on ..." on stderr once their socket is open.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from ratelab_hoststack import TcpConfig

from ratelab_hosts import drivers, stack_tcp_driver, tcp_driver
from ratelab_hosts.loop import stop_on_signals
from ratelab_hosts.rbcc_sender import SenderConfig
from ratelab_hosts.tcp_traffic import PATTERNS, TcpSendConfig
from ratelab_hosts.udp import UdpSourceConfig
from ratelab_hosts.units import (
    parse_endpoint,
    parse_ipv4,
    parse_rate,
    parse_seconds,
    parse_source,
)

PROG = "ratelab_hosts"
STACKS = ("kernel", "ratelab")
RTO_FORMULAS = ("rfc6298", "linux")
# tcp-send options that only the ratelab stack has (argparse dest, option).
RATELAB_OPTIONS = (
    ("src", "--src"),
    ("iw", "--iw"),
    ("initial_rto", "--initial-rto"),
    ("min_rto", "--min-rto"),
    ("rto_formula", "--rto-formula"),
    ("no_sack", "--no-sack"),
    ("no_delayed_ack", "--no-delayed-ack"),
    ("prr", "--prr"),
    ("hystart", "--hystart"),
    ("send_buffer", "--send-buffer"),
)


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _checked(parse: Callable[[str], object]) -> Callable[[str], object]:
    """Wrap a units parser so argparse reports its own message."""

    def wrapper(text: str) -> object:
        try:
            return parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    wrapper.__name__ = parse.__name__
    return wrapper


RATE = _checked(parse_rate)
SECONDS = _checked(parse_seconds)
IPV4 = _checked(parse_ipv4)
ENDPOINT = _checked(parse_endpoint)
SOURCE = _checked(parse_source)


def _probability(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 <= value < 1.0:
        raise argparse.ArgumentTypeError("must be in [0, 1)")
    return value


def _flow_id(bits: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        if not text.isdigit() or not 1 <= int(text) < 1 << bits:
            raise argparse.ArgumentTypeError(f"must be 1..{(1 << bits) - 1}")
        return int(text)

    return parse


def _whole_number(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None


def _send_buffer(text: str) -> str | int:
    """`auto` or a size in bytes (the stack checks its range)."""
    if text == "auto":
        return text
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected auto or a size in bytes, got {text!r}")
    return int(text)


def _positive_int(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1: {text!r}")
    return int(text)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description="ratelab host stacks: RBCC, UDP and TCP traffic")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("rbcc-send", help="send one RBCC (TRUMP-style) flow")
    p.add_argument("--dst", type=IPV4, required=True, help="receiver IPv4 address")
    p.add_argument("--src", type=IPV4, help="local address to send from (default: by route)")
    p.add_argument("--rate", type=RATE, required=True, help="desired rate, e.g. 1mbit")
    p.add_argument("--initial-rate", type=RATE, help="rate before the first ACK (default --rate)")
    p.add_argument("--size", type=int, default=1000, help="IPv4 packet size, bytes (1000)")
    p.add_argument("--duration", type=SECONDS, help="send new data this long (default 3 s)")
    p.add_argument("--segments", type=int, help="send this many data packets instead")
    p.add_argument("--adopt-synack-rate", action="store_true", help="the SYN-ACK sets the rate")
    p.add_argument("--flow-id", type=_flow_id(16), help="16-bit flow id (default random)")
    p.add_argument("--json-out", metavar="FILE", help="write the results as JSON")

    p = sub.add_parser("rbcc-recv", help="receive RBCC flows")
    p.add_argument("--listen", type=IPV4, required=True, help="local IPv4 address")
    p.add_argument("--duration", type=SECONDS, help="stop after this long")
    p.add_argument(
        "--flows",
        type=int,
        help="stop after this many complete flows (default 1 without --duration, else no limit)",
    )
    p.add_argument(
        "--emulate-loss", type=_probability, default=0.0, help="drop this fraction of data"
    )
    p.add_argument("--loss-seed", type=int, default=1, help="seed of --emulate-loss")
    p.add_argument("--json-out", metavar="FILE", help="write the results as JSON")

    p = sub.add_parser("udp-send", help="send UDP probe traffic (CBR or Poisson)")
    p.add_argument("--dst", type=ENDPOINT, required=True, help="IP:PORT")
    p.add_argument("--rate", type=RATE, required=True, help="rate while on, e.g. 2mbit")
    p.add_argument("--size", type=int, default=1000, help="IPv4 packet size, bytes (1000)")
    p.add_argument("--duration", type=SECONDS, default=3_000_000, help="seconds (3)")
    p.add_argument("--poisson", action="store_true", help="Poisson instead of constant bit rate")
    p.add_argument("--seed", type=int, default=1, help="seed of --poisson (1)")
    p.add_argument("--on", type=SECONDS, help="on-off pattern: seconds on")
    p.add_argument("--off", type=SECONDS, help="on-off pattern: seconds off")
    p.add_argument("--flow-id", type=_flow_id(32), help="32-bit flow id (default random)")
    p.add_argument("--json-out", metavar="FILE", help="write the results as JSON")

    p = sub.add_parser("udp-sink", help="count UDP probe traffic")
    p.add_argument("--listen", type=ENDPOINT, required=True, help="IP:PORT")
    p.add_argument("--duration", type=SECONDS, help="stop after this long")
    p.add_argument("--idle", type=SECONDS, help="stop this long after the last datagram")
    p.add_argument("--json-out", metavar="FILE", help="write the results as JSON")

    p = sub.add_parser("tcp-send", help="send one TCP flow (kernel or ratelab-stack), sampled")
    p.add_argument("--dst", type=ENDPOINT, required=True, help="IP:PORT")
    p.add_argument("--cc", required=True, help="congestion control, e.g. reno, cubic, bbr, vegas")
    p.add_argument(
        "--stack", choices=STACKS, default="kernel", help="whose TCP: kernel (default) or ratelab"
    )
    p.add_argument(
        "--src",
        type=SOURCE,
        help="ratelab: the flow's own address (not this host's), IP or IP:PORT (random port)",
    )
    p.add_argument("--iw", type=_whole_number, help="ratelab: initial window, segments (10)")
    p.add_argument("--initial-rto", type=SECONDS, help="ratelab: initial RTO (1s)")
    p.add_argument("--min-rto", type=SECONDS, help="ratelab: minimum RTO (200ms)")
    p.add_argument(
        "--rto-formula",
        choices=RTO_FORMULAS,
        help="ratelab: RTO = max(SRTT + 4*RTTVAR, min-rto) (rfc6298, default)"
        " or SRTT + max(4*RTTVAR, min-rto) (linux)",
    )
    p.add_argument("--no-sack", action="store_true", help="ratelab: do not offer SACK")
    p.add_argument("--no-delayed-ack", action="store_true", help="ratelab: ACK every segment")
    p.add_argument("--prr", action="store_true", help="ratelab: proportional rate reduction")
    p.add_argument(
        "--hystart",
        action="store_true",
        help="ratelab: HyStart++ (RFC 9406) in the first slow start of reno, newreno, cubic",
    )
    p.add_argument(
        "--send-buffer",
        type=_send_buffer,
        help="ratelab: auto (grows with the window as Linux's, up to 4 MiB; default)"
        " or a fixed size in bytes",
    )
    p.add_argument(
        "--duration", type=SECONDS, help="seconds of writing (default 3, none with --bytes)"
    )
    p.add_argument("--bytes", type=_positive_int, help="write this many bytes, then stop")
    p.add_argument("--pattern", choices=PATTERNS, default="bulk", help="application (bulk)")
    p.add_argument("--on", type=SECONDS, help="onoff: seconds writing as fast as possible")
    p.add_argument("--off", type=SECONDS, help="onoff: seconds idle after each on-period")
    p.add_argument("--rate", type=RATE, help="stream: application rate, e.g. 5mbit")
    p.add_argument(
        "--sample-interval", type=SECONDS, default=100_000, help="TCP_INFO every S (0.1)"
    )
    p.add_argument("--flow-id", type=_flow_id(32), help="label in the results (default random)")
    p.add_argument("--json-out", metavar="FILE", help="write the results as JSON")

    p = sub.add_parser("tcp-sink", help="accept TCP connections, read and count")
    p.add_argument("--listen", type=ENDPOINT, required=True, help="IP:PORT")
    p.add_argument("--duration", type=SECONDS, help="stop after this long")
    p.add_argument("--idle", type=SECONDS, help="stop this long after the last activity")
    p.add_argument("--json-out", metavar="FILE", help="write the results as JSON")
    return parser


def _check_json_out(path: str | None) -> None:
    if path is None:
        return
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise UsageError(f"--json-out: folder {folder} does not exist")


def _write_json(path: str | None, result: dict[str, object]) -> None:
    if path is None:
        return
    try:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1)
            f.write("\n")
    except OSError as exc:
        raise drivers.DriverError(f"cannot write {path}: {exc.strerror or exc}") from None


def _mbit(bits_per_s: object) -> str:
    return "n/a" if not isinstance(bits_per_s, int) else f"{bits_per_s / 1e6:.3f} Mbit/s"


def _ready(what: str) -> Callable[[], None]:
    def announce() -> None:
        print(f"{PROG}: listening on {what}", file=sys.stderr, flush=True)

    return announce


def _rbcc_send(args: argparse.Namespace) -> int:
    if args.duration is None and args.segments is None:
        args.duration = 3_000_000
    try:
        config = SenderConfig(
            desired_rate=args.rate,
            initial_rate=args.initial_rate or args.rate,
            size=args.size,
            segments=args.segments,
            duration_us=args.duration,
            flow_id=args.flow_id or 1 + secrets.randbelow(0xFFFF),
            adopt_synack_rate=args.adopt_synack_rate,
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    _check_json_out(args.json_out)
    with stop_on_signals() as stop:
        flow = drivers.rbcc_send(args.dst, config, stop, src=args.src)
    _write_json(args.json_out, {"command": "rbcc-send", "flows": [flow]})
    rates = flow["rates"]
    last = rates[-1] if isinstance(rates, list) and rates else {}
    print(
        f"rbcc-send to {args.dst} flow {config.flow_id}: {flow['state']}"
        + (f" ({flow['error']})" if flow["error"] else "")
        + f", {flow['packets_sent']} packets ({flow['bytes_sent']} B) sent,"
        f" {flow['retransmissions']} retransmitted, {flow['segments_acked']}/{flow['segments']}"
        f" segments acked, rate {flow['rate']} B/s (network said"
        f" {last.get('return_rate')} B/s, node {last.get('return_bottle_node')}),"
        f" goodput {_mbit(flow['goodput_bps'])}"
    )
    return 0 if flow["state"] == "closed" else 1


def _rbcc_recv(args: argparse.Namespace) -> int:
    flows = args.flows if args.flows is not None else (1 if args.duration is None else 0)
    if flows < 0:
        raise UsageError("--flows must be >= 0")
    _check_json_out(args.json_out)
    with stop_on_signals() as stop:
        result = drivers.rbcc_recv(
            args.listen,
            stop,
            duration_us=args.duration,
            flows=flows,
            emulate_loss=args.emulate_loss,
            loss_seed=args.loss_seed,
            on_ready=_ready(args.listen),
        )
    _write_json(args.json_out, {"command": "rbcc-recv", **result})
    flow_list = result["flows"]
    assert isinstance(flow_list, list)
    total = {
        key: sum(f[key] for f in flow_list)
        for key in ("packets_received", "bytes_received", "lost", "segments_delivered")
    }
    rates = ", ".join(
        f"flow {f['flow_id']} from {f['src']}: rate {f['rates'][-1]['rate'] if f['rates'] else '-'}"
        f" B/s, goodput {_mbit(f['goodput_bps'])}"
        for f in flow_list
    )
    print(
        f"rbcc-recv on {args.listen}: {len(flow_list)} flow(s),"
        f" {sum(1 for f in flow_list if f['complete'])} complete,"
        f" {total['packets_received']} packets ({total['bytes_received']} B) received,"
        f" {total['lost']} lost, {total['segments_delivered']} segments delivered"
        + (f"; {rates}" if rates else "")
    )
    return 0


def _udp_send(args: argparse.Namespace) -> int:
    try:
        config = UdpSourceConfig(
            rate=args.rate,
            size=args.size,
            duration_us=args.duration,
            poisson=args.poisson,
            seed=args.seed,
            on_us=args.on,
            off_us=args.off,
            flow_id=args.flow_id or 1 + secrets.randbelow(0xFFFFFFFE),
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    _check_json_out(args.json_out)
    with stop_on_signals() as stop:
        flow = drivers.udp_send(args.dst, config, stop)
    _write_json(args.json_out, {"command": "udp-send", "flows": [flow]})
    print(
        f"udp-send to {flow['dst']} flow {config.flow_id}"
        f" ({'Poisson' if config.poisson else 'CBR'}): {flow['packets_sent']} packets"
        f" ({flow['bytes_sent']} B) sent, {flow['send_errors']} send errors"
    )
    return 0


def _udp_sink(args: argparse.Namespace) -> int:
    _check_json_out(args.json_out)
    listen = f"{args.listen[0]}:{args.listen[1]}"
    with stop_on_signals() as stop:
        result = drivers.udp_sink(
            args.listen,
            stop,
            duration_us=args.duration,
            idle_us=args.idle,
            on_ready=_ready(listen),
        )
    _write_json(args.json_out, {"command": "udp-sink", **result})
    flow_list = result["flows"]
    assert isinstance(flow_list, list)
    print(
        f"udp-sink on {listen}: {len(flow_list)} flow(s),"
        f" {sum(f['packets_received'] for f in flow_list)} packets"
        f" ({sum(f['bytes_received'] for f in flow_list)} B) received,"
        f" {sum(f['lost'] for f in flow_list)} lost"
    )
    return 0


def _ms(us: object) -> str:
    return "-" if not isinstance(us, int) else f"{us / 1000:.3f}"


def _tcp_send(args: argparse.Namespace) -> int:
    if args.duration is None and args.bytes is None:
        args.duration = 3_000_000
    try:
        config = TcpSendConfig(
            cc=args.cc,
            pattern=args.pattern,
            duration_us=args.duration,
            bytes_limit=args.bytes,
            on_us=args.on,
            off_us=args.off,
            rate=args.rate,
            sample_interval_us=args.sample_interval,
            flow_id=args.flow_id or 1 + secrets.randbelow(0xFFFFFFFE),
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    _check_json_out(args.json_out)
    if args.stack == "ratelab":
        return _stack_tcp_send(args, config)
    for dest, option in RATELAB_OPTIONS:
        if getattr(args, dest) not in (None, False):
            raise UsageError(f"{option} goes with --stack ratelab only")
    try:
        tcp_driver.check_cc(config.cc)  # before any traffic
        with stop_on_signals() as stop:
            flow = tcp_driver.tcp_send(args.dst, config, stop)
    except tcp_driver.CongestionControlError as exc:
        raise UsageError(str(exc)) from None
    _write_json(args.json_out, {"command": "tcp-send", "flows": [flow]})
    _print_tcp_send(flow, config)
    return 0 if flow["state"] == "closed" else 1


def _stack_options(args: argparse.Namespace) -> dict[str, object]:
    """TcpConfig keyword arguments from tcp-send's options, checked: a bad
    value is a UsageError naming the option."""
    if args.src is None:
        raise UsageError("--stack ratelab needs --src (the flow's own address)")
    options: dict[str, object] = {
        "cc": args.cc,
        "sack": not args.no_sack,
        "delayed_ack": not args.no_delayed_ack,
        "prr": args.prr,
        "hystart": args.hystart,
    }
    if args.iw is not None:
        options["iw"] = args.iw
    if args.initial_rto is not None:
        options["initial_rto_ns"] = args.initial_rto * 1000
    if args.min_rto is not None:
        options["min_rto_ns"] = args.min_rto * 1000
    if args.rto_formula is not None:
        options["rto_formula"] = args.rto_formula
    if isinstance(args.send_buffer, int):
        options["send_buffer_policy"] = "fixed"
        options["send_buffer"] = args.send_buffer
    try:
        TcpConfig(**options)  # type: ignore[arg-type]
    except ValueError as exc:
        field, sep, rest = str(exc).partition(": ")
        option = {"cc": "--cc", "iw": "--iw", "initial_rto": "--initial-rto"}.get(field)
        option = option or {"min_rto": "--min-rto", "max_rto": "--min-rto"}.get(field)
        option = option or {"send_buffer": "--send-buffer"}.get(field)
        raise UsageError(f"{option}: {rest}" if option and sep else str(exc)) from None
    return options


def _stack_tcp_send(args: argparse.Namespace, config: TcpSendConfig) -> int:
    options = _stack_options(args)
    with stop_on_signals() as stop:
        src, src_port = args.src
        flow = stack_tcp_driver.stack_tcp_send(
            args.dst, src, config, options, stop, src_port=src_port
        )
    _write_json(args.json_out, {"command": "tcp-send", "flows": [flow]})
    _print_tcp_send(flow, config)
    return 0 if flow["state"] == "closed" else 1


def _print_tcp_send(flow: dict[str, object], config: TcpSendConfig) -> None:
    # a ratelab flow says so and adds its RTOs; a kernel flow's line is as it was
    ratelab = flow.get("stack") == "ratelab"
    stack = f", {flow['rtos']} RTOs, {flow['local_drops']} local drops" if ratelab else ""
    print(
        f"tcp-send to {flow['dst']} from {flow['src']} flow {config.flow_id}"
        f" ({'ratelab ' if ratelab else ''}{flow['cc']}, {config.pattern}): {flow['state']}"
        + (f" ({flow['error']})" if flow["error"] else "")
        + f", {flow['bytes_sent']} B sent, {flow.get('bytes_acked')} B acked,"
        f" {flow.get('retransmissions')} retransmissions,"
        f" {flow.get('ssthresh_changes')} ssthresh changes, rtt min/mean/max"
        f" {_ms(flow.get('rtt_min_us'))}/{_ms(flow.get('rtt_mean_us'))}"
        f"/{_ms(flow.get('rtt_max_us'))} ms, goodput {_mbit(flow.get('goodput_bps'))}{stack}"
    )


def _tcp_sink(args: argparse.Namespace) -> int:
    _check_json_out(args.json_out)
    listen = f"{args.listen[0]}:{args.listen[1]}"
    with stop_on_signals() as stop:
        result = tcp_driver.tcp_sink(
            args.listen,
            stop,
            duration_us=args.duration,
            idle_us=args.idle,
            on_ready=_ready(listen),
        )
    _write_json(args.json_out, {"command": "tcp-sink", **result})
    flow_list = result["flows"]
    assert isinstance(flow_list, list)
    flows = "".join(
        f"; from {f['src']}: {f['bytes_received']} B, goodput {_mbit(f['goodput_bps'])}"
        for f in flow_list
    )
    print(
        f"tcp-sink on {listen}: {len(flow_list)} connection(s),"
        f" {sum(f['bytes_received'] for f in flow_list)} B received{flows}"
    )
    return 0


COMMANDS = {
    "rbcc-send": _rbcc_send,
    "rbcc-recv": _rbcc_recv,
    "udp-send": _udp_send,
    "udp-sink": _udp_sink,
    "tcp-send": _tcp_send,
    "tcp-sink": _tcp_sink,
}


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        return COMMANDS[args.command](args)
    except UsageError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    except drivers.DriverError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
