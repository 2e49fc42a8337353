"""`ratelab-ctl`: configure the ratelab router on a P4Runtime switch.

    ratelab-ctl check CONFIG [--p4info FILE] [--set KEY=VALUE ...]
    ratelab-ctl push  [--addr A] --json router.json --p4info router.p4info.txtpb CONFIG
    ratelab-ctl apply [--addr A] [--dry-run] CONFIG
    ratelab-ctl set   [--addr A] [--dry-run] CONFIG KEY=VALUE ...
    ratelab-ctl counters [--addr A] [--ports 1,2] [--json]
    ratelab-ctl poll  [--addr A] --interval 0.5 --out series.csv [--duration S] [--ports 1,2]
    ratelab-ctl switch-args CONFIG
    ratelab-ctl hdl-regs CONFIG [--param PORTS=8 ...] [--port-map 1=0,2=1] [--set KEY=VALUE ...]

Progress goes to stdout, one line per step; an error is one line on stderr
(`file:line:col: error: ...` for the configuration, `ratelab-ctl: error: ...`
otherwise). Exit status: 0 ok, 1 the switch failed or refused, 2 bad usage or
a bad configuration (nothing was written to the switch).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from collections.abc import Sequence
from typing import NoReturn

from ratelab_p4info import Schema, SchemaError, load_p4info

from ratelab_ctl.configfile import ConfigError, ControllerConfig, load_config
from ratelab_ctl.connection import SwitchConnection, SwitchError
from ratelab_ctl.controller import Controller, build_updates, check_program
from ratelab_ctl.counters import CounterSnapshot
from ratelab_ctl.diff import Change, initial_changes, seed_notes, summarize
from ratelab_ctl.entities import describe, format_action
from ratelab_ctl.hdl_driver import CoreParams, core_writes, register_name
from ratelab_ctl.poller import Poller, SeriesWriter, summary_line
from ratelab_ctl.priority import config_entries, priority_queues, queue_notes
from ratelab_ctl.switch_options import switch_options

PROG = "ratelab-ctl"
DEFAULT_ADDR = "127.0.0.1:9559"


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _out(msg: str) -> None:
    print(msg, flush=True)


def _build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG, description="Configure the ratelab router over P4Runtime.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def switch_opts(sp: argparse.ArgumentParser) -> None:
        sp.add_argument(
            "--addr", help=f"P4Runtime server HOST:PORT (default: the config's, or {DEFAULT_ADDR})"
        )
        sp.add_argument(
            "--device-id", type=int, help="P4Runtime device id (default: the config's, or 0)"
        )
        sp.add_argument("--election-id", type=int, default=1, help="election id (default 1)")
        sp.add_argument(
            "--timeout", type=float, default=10.0, help="seconds to wait for the switch"
        )

    c = sub.add_parser("check", help="validate a configuration file (nothing is sent)")
    c.add_argument("config")
    c.add_argument("--p4info", help="also check it against a compiled program's P4Info")
    c.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override")

    c = sub.add_parser("push", help="push the pipeline and install a configuration")
    switch_opts(c)
    c.add_argument("--json", required=True, help="the compiled program (BMv2 JSON)")
    c.add_argument("--p4info", required=True, help="its P4Info (text, JSON or binary)")
    c.add_argument("config")

    c = sub.add_parser("apply", help="make the switch hold CONFIG, writing only the differences")
    switch_opts(c)
    c.add_argument("--dry-run", action="store_true", help="print the changes, write nothing")
    c.add_argument("config")

    c = sub.add_parser("set", help="change settings at run time: CONFIG plus KEY=VALUE overrides")
    switch_opts(c)
    c.add_argument("--dry-run", action="store_true", help="print the changes, write nothing")
    c.add_argument("config")
    c.add_argument("assignments", nargs="+", metavar="KEY=VALUE")

    c = sub.add_parser("counters", help="print every per-port counter once")
    switch_opts(c)
    c.add_argument("--ports", help="comma-separated ports (default: the configured ones)")
    c.add_argument("--json", action="store_true", help="JSON instead of a table")

    c = sub.add_parser("poll", help="sample the counters into a time series")
    switch_opts(c)
    c.add_argument("--interval", type=float, default=0.5, help="seconds between samples")
    c.add_argument("--out", required=True, help="series file: .csv, or .jsonl for JSON lines")
    c.add_argument("--duration", type=float, help="stop after this many seconds")
    c.add_argument("--ports", help="comma-separated ports (default: the configured ones)")
    c.add_argument("--quiet", action="store_true", help="no live summary")

    c = sub.add_parser("switch-args", help="ratelab-switch options matching CONFIG's port rates")
    c.add_argument("config")

    c = sub.add_parser(
        "hdl-regs", help="the Verilog core's register writes for CONFIG (ADDR VALUE lines)"
    )
    c.add_argument("config")
    c.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a router_core parameter other than its default (PORTS, LPM_ENTRIES, NH_ENTRIES, "
        "ABT_SLOTS, DECAY_LEN, PEND_DEPTH)",
    )
    c.add_argument(
        "--port-map",
        metavar="PORT=INDEX,...",
        help="hardware port index of each configured port (default: port N is index N)",
    )
    c.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = _build_parser()
    try:
        args = parser.parse_args(argv)
        return _COMMANDS[args.command](args)
    except UsageError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    except ConfigError as e:
        print(str(e), file=sys.stderr)
        return 2
    except SchemaError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    except SwitchError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader left (`ratelab-ctl hdl-regs ... | head`): stop quietly, and
        # keep Python's final flush of stdout from failing again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


# ---------------------------------------------------------------- helpers


def _connect(
    args: argparse.Namespace, cfg: ControllerConfig | None, arbitrate: bool
) -> SwitchConnection:
    addr = args.addr or (cfg.address if cfg else DEFAULT_ADDR)
    device = args.device_id if args.device_id is not None else (cfg.device_id if cfg else 0)
    if not 1 <= args.election_id < 1 << 128:
        raise UsageError("--election-id must be in 1..2^128-1")
    if not 0 <= device < 1 << 64:
        raise UsageError("--device-id must be in 0..2^64-1")
    if args.timeout <= 0:
        raise UsageError("--timeout must be above 0")
    return SwitchConnection(addr, device, args.election_id, args.timeout).open(arbitrate)


def _ports_arg(text: str | None) -> list[int] | None:
    if text is None:
        return None
    try:
        ports = [int(p) for p in text.split(",") if p.strip()]
    except ValueError:
        raise UsageError(f"--ports: expected comma-separated port numbers, got {text!r}") from None
    if not ports or any(not 0 <= p < 512 for p in ports):
        raise UsageError(f"--ports: expected port numbers 0..511, got {text!r}")
    return ports


def _print_changes(schema: Schema, changes: Sequence[Change]) -> None:
    for c in changes:
        if c.entry.table.endswith(("red_decay", "recip")):
            continue  # summarised below: there can be thousands
        action = "" if c.kind == "delete" else f" -> {format_action(schema, c.entry)}"
        _out(f"  {c.kind} {describe(c.entry)}{action}")
    bulk: dict[tuple[str, str], int] = {}
    for c in changes:
        if c.entry.table.endswith(("red_decay", "recip")):
            key = (c.kind, c.entry.table)
            bulk[key] = bulk.get(key, 0) + 1
    for (kind, table), n in bulk.items():
        _out(f"  {kind} {n} entries of {table}")


# ---------------------------------------------------------------- commands


def cmd_check(args: argparse.Namespace) -> int:
    cfg = load_config(args.config, args.set)
    entries = config_entries(cfg)
    if args.p4info:
        schema = Schema.load(args.p4info)
        check_program(cfg, schema)
        build_updates(schema, initial_changes(entries))
    r = cfg.router
    _out(
        f"{args.config}: ok: {len(r.ports)} ports, {len(r.next_hops)} next hops, "
        f"{len(r.routes)} routes, {len(entries)} table entries"
        + (f", fits {args.p4info}" if args.p4info else "")
    )
    return 0


def cmd_push(args: argparse.Namespace) -> int:
    cfg = load_config(args.config)
    p4info = load_p4info(args.p4info)
    schema = Schema(p4info)
    check_program(cfg, schema)
    changes = initial_changes(config_entries(cfg))
    build_updates(schema, changes)  # every entity encodes before anything is sent
    try:
        with open(args.json, "rb") as f:
            device_config = f.read()
    except OSError as e:
        raise UsageError(f"{args.json}: cannot read: {e.strerror}") from None
    with _connect(args, cfg, arbitrate=True) as conn:
        _out(f"connected to {conn.address} (device {conn.device_id}, primary)")
        ctl = Controller(conn, schema, log=_out)
        ctl.push_pipeline(device_config, p4info)
        ctl.apply_config(cfg)
    return 0


def _reconcile(args: argparse.Namespace, cfg: ControllerConfig, notes: Sequence[str] = ()) -> int:
    with _connect(args, cfg, arbitrate=not args.dry_run) as conn:
        ctl = Controller(conn, log=_out)
        installed, changes = ctl.plan(cfg)
        _print_changes(ctl.schema, changes)
        for note in [*notes, *seed_notes(installed, changes)]:
            _out(f"note: {note}")
        if args.dry_run:
            _out(f"dry run: {summarize(changes)} (nothing written)")
            return 0
        ctl.write_changes(changes)
        _out(f"{conn.address}: {summarize(changes)}")
    return 0


def cmd_apply(args: argparse.Namespace) -> int:
    return _reconcile(args, load_config(args.config))


def cmd_set(args: argparse.Namespace) -> int:
    cfg = load_config(args.config, args.assignments)
    return _reconcile(args, cfg, queue_notes(load_config(args.config), cfg))


def _snapshot_dict(snap: CounterSnapshot) -> dict[str, object]:
    return {
        "time": snap.time,
        "gauges": snap.gauges,
        "ports": {str(p): pc.as_dict() for p, pc in snap.ports.items()},
    }


def cmd_counters(args: argparse.Namespace) -> int:
    ports = _ports_arg(args.ports)
    with _connect(args, None, arbitrate=False) as conn:
        snap = Controller(conn).read_counters(ports)
    if args.json:
        _out(json.dumps(_snapshot_dict(snap), indent=1))
        return 0
    if not snap.ports:
        _out("no configured ports")
        return 0
    port_list = list(snap.ports)
    names = list(next(iter(snap.ports.values())).as_dict())
    width = max(len(n) for n in names)
    _out(f"{'counter':<{width}} " + " ".join(f"{'port ' + str(p):>12}" for p in port_list))
    for name in names:
        cells = []
        for p in port_list:
            if name in ("last_q", "last_avg") and not snap.gauges:
                cells.append(f"{'-':>12}")
            else:
                cells.append(f"{getattr(snap.ports[p], name):>12}")
        _out(f"{name:<{width}} " + " ".join(cells))
    if not snap.gauges:
        _out("(last_q/last_avg: the switch serves no register reads)")
    return 0


def cmd_poll(args: argparse.Namespace) -> int:
    if args.interval <= 0:
        raise UsageError("--interval must be above 0")
    if args.duration is not None and args.duration < 0:
        raise UsageError("--duration must not be negative")
    ports = _ports_arg(args.ports)
    with _connect(args, None, arbitrate=False) as conn:
        ctl = Controller(conn)
        if ports is None:
            ports = ctl.configured_ports()
            if not ports:
                raise SwitchError(f"{conn.address}: no configured ports (push a configuration)")
        try:
            writer = SeriesWriter.for_path(args.out)
        except OSError as e:
            raise UsageError(f"{args.out}: cannot write: {e.strerror}") from None
        live = sys.stdout.isatty()

        def show(snap: CounterSnapshot, prev: CounterSnapshot | None) -> None:
            if args.quiet:
                return
            dt = snap.time - prev.time if prev else 0.0
            lines = [
                summary_line(p, pc, prev.ports.get(p) if prev else None, dt, snap.gauges)
                for p, pc in snap.ports.items()
            ]
            if live and prev is not None:
                sys.stdout.write(f"\x1b[{len(lines)}F")  # rewrite the previous block
            for line in lines:
                sys.stdout.write(line + ("\x1b[K\n" if live else "\n"))
            sys.stdout.flush()

        port_list = ",".join(map(str, ports))
        _out(f"polling {conn.address} ports {port_list} every {args.interval:g} s -> {args.out}")
        poller = Poller(
            lambda: ctl.read_counters(ports), writer, args.interval, args.duration, show
        )
        try:
            poller.run()
        except KeyboardInterrupt:
            pass
        finally:
            writer.close()
        _out(f"{poller.samples} samples, {writer.rows} rows written to {args.out}")
    return 0


def cmd_switch_args(args: argparse.Namespace) -> int:
    cfg = load_config(args.config)
    _out(shlex.join(switch_options(cfg.router, priority_queues(cfg))))
    return 0


def _int_pairs(items: Sequence[str], what: str) -> list[tuple[str, int]]:
    """NAME=INT items (decimal or 0x...) as (NAME, value) pairs."""
    out = []
    for item in items:
        key, sep, value = item.partition("=")
        try:
            out.append((key.strip(), int(value, 0)))
        except ValueError:
            sep = ""
        if not sep or not key.strip():
            raise UsageError(f"{what}: expected NAME=INTEGER, got {item!r}")
    return out


def cmd_hdl_regs(args: argparse.Namespace) -> int:
    try:
        params = CoreParams().with_verilog(dict(_int_pairs(args.param, "--param")))
    except ValueError as e:
        raise UsageError(f"--param: {e}") from None
    port_map = None
    if args.port_map is not None:
        pairs = _int_pairs([x for x in args.port_map.split(",") if x.strip()], "--port-map")
        try:
            port_map = {int(k): v for k, v in pairs}
        except ValueError:
            raise UsageError(
                f"--port-map: expected PORT=INDEX,..., got {args.port_map!r}"
            ) from None
    cfg = load_config(args.config, args.set)
    writes = core_writes(cfg, params, port_map)  # nothing is printed unless it all fits
    _out("\n".join(f"0x{w.addr:04x} 0x{w.value:08x}  # {register_name(w.addr)}" for w in writes))
    return 0


_COMMANDS = {
    "check": cmd_check,
    "push": cmd_push,
    "apply": cmd_apply,
    "set": cmd_set,
    "counters": cmd_counters,
    "poll": cmd_poll,
    "switch-args": cmd_switch_args,
    "hdl-regs": cmd_hdl_regs,
}

if __name__ == "__main__":
    sys.exit(main())
