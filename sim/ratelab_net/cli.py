"""`ratelab-net`: run a topology file in Mininet with ratelab routers (docs/NET.md).

    ratelab-net check TOPOLOGY                 validate it, print the routers' plans and flows
    ratelab-net run TOPOLOGY [--out DIR] [--target ratelab|bmv2] [--allow-no-delay] [--no-plots]
    ratelab-net run TOPOLOGY --backend sim [--seed N]   the same in ratelab's simulator (no root)
    ratelab-net clean                          remove what a killed run left behind

Exit status: 0 done, 1 a run-time failure, 2 bad input (one line on stderr).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ratelab_ctl.configfile import ConfigError, PortPriority
from ratelab_ctl.connection import SwitchConnection, SwitchError
from ratelab_ctl.controller import Controller
from ratelab_ctl.counters import CounterSnapshot
from ratelab_ctl.poller import BackgroundPoller, Poller, SeriesWriter
from ratelab_p4info import SchemaError
from ratelab_sim.build import ROOT, BuildError, compile_router, default_p4c
from ratelab_sim.signals import Terminated, terminate_as_exception
from ratelab_sim.switch import SwitchError as SwitchProcessError
from ratelab_sim.switch import switch_command

from ratelab_net.delays import (
    NetemProbeError,
    NetemQdisc,
    delayed_links,
    ignored_note,
    kernel_has_netem,
    plan_netem,
    refusal,
    router_iface,
)
from ratelab_net.network import (
    NetError,
    Network,
    import_mininet,
    link_delays,
    link_jitters,
    mininet_jitter_error,
    mininet_trace_error,
)
from ratelab_net.results import balance, flow_result, render, summarize
from ratelab_net.routers import RouterPlan, plan_routers
from ratelab_net.topology import BACKENDS, Flow, Topology, load_variants
from ratelab_net.traffic import TrafficError, TrafficRun, plan_commands

PROG = "ratelab-net"
DRAIN_S = 1.0  # after the traffic: everything queued or delayed has left


class UsageError(Exception):
    """The command was used wrongly (not root, no compiler); one line."""


def _say(message: str) -> None:
    print(f"{PROG}: {message}", flush=True)


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")
    set_help = "override a setting, e.g. links[1].queue_limit=200 (repeatable)"
    c = sub.add_parser(
        "check", help="validate a topology file, print the routers' plans and the flows"
    )
    c.add_argument("topology")
    c.add_argument("--set", action="append", default=[], metavar="PATH=VALUE", help=set_help)
    c.add_argument("--variant", help="check only this variant of the file's `variants`")
    c.add_argument(
        "--target",
        choices=("ratelab", "bmv2"),
        default="ratelab",
        help="print the plan for this router switch (bmv2: the delays' netem qdiscs)",
    )
    c.add_argument(
        "--backend",
        choices=BACKENDS,
        help="sim: also check that the simulator can run every flow (default: the "
        "file's `backend`, else mininet; docs/NET.md)",
    )
    c = sub.add_parser("run", help="build the network, run the flows, report, tear down")
    c.add_argument("topology")
    c.add_argument("--set", action="append", default=[], metavar="PATH=VALUE", help=set_help)
    c.add_argument("--out", help="results folder (default build/net/<topology name>)")
    c.add_argument(
        "--target",
        choices=("ratelab", "bmv2"),
        default="ratelab",
        help="router switch: ratelab-switch (default) or simple_switch_grpc on PATH",
    )
    c.add_argument(
        "--allow-no-delay",
        action="store_true",
        help="bmv2 target on a kernel without netem: run without the links' delays "
        "(the report says so) instead of refusing",
    )
    c.add_argument("--p4c", help="compiler with p4c's command line (default ratelab-p4c)")
    c.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    c.add_argument("--variant", help="run only this variant of the file's `variants`")
    c.add_argument(
        "--backend",
        choices=BACKENDS,
        help="mininet (needs root) or sim: ratelab's simulator, no root (default: the "
        "file's `backend`, else mininet; docs/NET.md)",
    )
    c.add_argument("--seed", type=int, help="sim: the run's seed (default 0)")
    sub.add_parser("clean", help="remove interfaces and processes a killed run left behind")
    return ap


def _describe(topo: Topology, plans: list[RouterPlan], target: str = "ratelab") -> list[str]:
    """The routers' ports, routes and the hosts; on bmv2 the netem qdiscs that
    delay (where the kernel has netem), on ratelab the switch's own delays."""
    netem = plan_netem(topo, plans) if target == "bmv2" else []
    by_iface = {q.iface: q.delay_us for q in netem}
    lines = []
    for plan in plans:
        if target == "bmv2":
            ifaces = {p.port: router_iface(plan.name, p.port) for p in plan.ports}
            delays = {port: by_iface[i] for port, i in ifaces.items() if i in by_iface}
        else:
            delays = link_delays(topo, plan)
        jitters = link_jitters(topo, plan)
        for p in plan.ports:
            cfg = next(c for c in plan.config.router.ports if c.port == p.port)
            rate = f"{cfg.rate_bps / 1e6:g} Mbit/s" if cfg.rate_bps else "unlimited"
            if p.out.trace is not None:
                rate = f"trace {Path(p.out.trace.path).name} (mean {rate})"
            aqm = plan.config.port_settings(p.port).aqm_name
            delay = delays.get(p.port, 0) / 1000
            jitter = jitters.get(p.port, 0) / 1000
            delay_text = f"{delay:g} ms" + (f" + up to {jitter:g} ms jitter" if jitter else "")
            lines.append(
                f"{plan.name} port {p.port} -> {p.peer}: {rate}, {delay_text}, "
                f"queue {cfg.queue_limit}, {aqm}"
                + _priority_text([q for q in plan.config.priority if q.port == p.port])
            )
        lines.append(f"{plan.name}: {len(plan.config.router.routes)} routes")
    for host in topo.hosts:
        address, gateway = topo.host_address(host)
        lines.append(f"{host}: {address}/24 via {gateway} ({topo.host_link(host)[1]})")
    lines += [_flow_line(topo, f) for f in topo.flows]
    lines += [f"netem ({q.direction}): {q.command()}" for q in netem]
    return lines


def _knob(value: float | bool | str | None, seconds: bool) -> str:
    if value is None:
        return "default"
    if isinstance(value, bool):
        return "on" if value else "off"
    return f"{value:g}s" if seconds else str(value)


def _priority_text(priority: list[PortPriority]) -> str:
    """`, 2 priority queues (protocol 1 -> 1, port 80 -> 1)`: a port's queues and rules."""
    if not priority or priority[0].queues < 2:
        return ""
    q = priority[0]
    rules = [f"protocol {v} -> {lv}" for v, lv in q.protocols]
    rules += [f"dscp {v} -> {lv}" for v, lv in q.dscp]
    rules += [f"port {v} -> {lv}" for v, lv in q.l4_ports]
    shown = ", ".join(rules[:6]) + (f", ... ({len(rules)} rules)" if len(rules) > 6 else "")
    return f", {q.queues} priority queues" + (f" ({shown})" if rules else "")


def _flow_line(topo: Topology, flow: Flow) -> str:
    """A flow as `check` prints it: route, transport and, for TCP, the stack and
    every knob (the stack's default where the file gives none)."""
    window = f"{flow.start_s:g}-{flow.stop_s:g} s"
    line = f"flow {flow.name}: {flow.src} -> {flow.dst}, {flow.transport}"
    tcp = flow.tcp
    if tcp is None:
        return f"{line}, {window}"
    line += f" {flow.cc} {flow.pattern}, {tcp.stack} stack"
    if flow.transfer_bytes is not None:
        line += f", a transfer of {flow.transfer_bytes} bytes"
    if tcp.stack == "ratelab":
        knobs = {
            "iw": tcp.iw,
            "initial_rto": tcp.initial_rto_s,
            "min_rto": tcp.min_rto_s,
            "sack": tcp.sack,
            "delayed_ack": tcp.delayed_ack,
            "prr": tcp.prr,
            "rto_formula": tcp.rto_formula,
            "hystart": tcp.hystart,
            "send_buffer": tcp.send_buffer,
        }
        shown = ", ".join(f"{k} {_knob(v, k.endswith('rto'))}" for k, v in knobs.items())
        line += f" from {topo.stack_address(flow.src)}: {shown}"
    return f"{line}, {window}"


def _load(args: argparse.Namespace) -> list[tuple[str | None, Topology, list[RouterPlan]]]:
    """Every variant to run, each validated whole before anything starts."""
    return [
        (variant, topo, plan_routers(topo))
        for variant, topo in load_variants(args.topology, args.set, args.variant)
    ]


def _backend(args: argparse.Namespace, topo: Topology) -> str:
    """--backend, else the file's `backend` key, else mininet."""
    return str(args.backend or topo.backend or "mininet")


def _refuse_what_mininet_cannot(
    runs: list[tuple[str | None, Topology, list[RouterPlan]]], target: str
) -> None:
    """A link setting Mininet on `target` cannot emulate (a host's trace, BMv2's
    traces and jitter) is a ConfigError naming it, before anything is built."""
    for _, topo, _ in runs:
        for error in (mininet_trace_error(topo, target), mininet_jitter_error(topo, target)):
            if error is not None:
                raise error


def cmd_check(args: argparse.Namespace) -> int:
    runs = _load(args)
    if _backend(args, runs[0][1]) == "sim":
        from ratelab_net.sim_scenario import build_scenario

        for _, topo, plans in runs:
            build_scenario(topo, plans)
    else:
        _refuse_what_mininet_cannot(runs, args.target)
    for variant, topo, plans in runs:
        if variant is not None:
            print(f"-- variant {variant}")
        for line in _describe(topo, plans, args.target):
            print(line)
    _, topo, plans = runs[0]
    variants = f", {len(runs)} variants" if runs[0][0] is not None else ""
    print(
        f"{args.topology}: ok: {len(plans)} routers, {len(topo.hosts)} hosts, "
        f"{len(topo.flows)} flows, {topo.duration_s:g} s{variants}"
    )
    return 0


def cmd_clean(_args: argparse.Namespace) -> int:
    import_mininet()
    from mininet.clean import cleanup

    cleanup()
    return 0


def _connect(address: str, stack: ExitStack) -> Controller:
    conn = stack.enter_context(SwitchConnection(address, 0).open(True))
    return Controller(conn)


def _counter_reader(
    target: str, router: str, ctl: Controller, net: Network, stack: ExitStack
) -> Callable[[], CounterSnapshot]:
    """The router's counters over P4Runtime; on BMv2, which serves no registers
    there, with the queue gauges read over its Thrift port."""
    if target != "bmv2":
        return ctl.read_counters
    from ratelab_net.thrift_gauges import ThriftRegisters, with_gauges

    port = net.switches[router].thrift_port
    assert port is not None  # SwitchProcess picks one for every bmv2 switch
    registers = stack.enter_context(ThriftRegisters("127.0.0.1", port, router))
    return with_gauges(ctl.read_counters, registers)


@dataclass(frozen=True)
class DelayPlan:
    """How a run gets its link delays: the switch's own (`netem` empty), netem
    qdiscs (BMv2 on a kernel with netem), or none (`note` says which are lost)."""

    netem: list[NetemQdisc]
    note: str | None = None


def plan_delays(
    target: str, topo: Topology, plans: list[RouterPlan], allow_no_delay: bool
) -> DelayPlan:
    """Raises UsageError where the delays would be lost and that was not allowed."""
    delayed = delayed_links(topo)
    if target != "bmv2" or not delayed:
        return DelayPlan([])
    try:
        has_netem = kernel_has_netem()
    except NetemProbeError as e:
        raise UsageError(str(e)) from None
    if has_netem:
        return DelayPlan(plan_netem(topo, plans))
    if not allow_no_delay:
        raise UsageError(refusal(delayed))
    return DelayPlan([], ignored_note(delayed))


def cmd_run(args: argparse.Namespace) -> int:
    runs = _load(args)
    if _backend(args, runs[0][1]) == "sim":
        return _run_sim(args)
    if args.seed is not None:
        raise UsageError("--seed is for --backend sim (a Mininet run has no seed)")
    _refuse_what_mininet_cannot(runs, args.target)
    if os.geteuid() != 0:
        raise UsageError("needs root (Mininet)")
    if args.target == "bmv2":
        switch_command("bmv2")  # simple_switch_grpc on PATH, before anything starts
    delays = [plan_delays(args.target, topo, plans, args.allow_no_delay) for _, topo, plans in runs]
    import_mininet()
    name = Path(args.topology).stem
    base = Path(args.out or ROOT / "build" / "net" / name).resolve()
    p4c = args.p4c or default_p4c()
    if p4c is None:
        raise UsageError("ratelab-p4c is not installed (make deps)")
    json_path, p4info = compile_router(p4c, base / "build", quiet=True)
    summaries = []
    for (variant, topo, plans), delay_plan in zip(runs, delays, strict=True):
        out = base / variant if variant else base
        out.mkdir(parents=True, exist_ok=True)
        if variant:
            _say(f"== variant {variant} ==")
        title = f"{name}{' ' + variant if variant else ''}"
        summaries.append(
            (variant, _run_one(args, topo, plans, delay_plan, json_path, p4info, out, title))
        )
    if len(summaries) > 1:
        print("\n== comparison ==")
        for variant, summary in summaries:
            print(f"{variant}: {summary}")
    return 0


def _run_sim(args: argparse.Namespace) -> int:
    """The topology in ratelab's simulator (sim_run.py): no root, same report."""
    from ratelab_net.sim_api import SimError
    from ratelab_net.sim_run import run_sim

    if args.target != "ratelab" or args.allow_no_delay:
        raise UsageError("--target and --allow-no-delay are for Mininet runs, not --backend sim")
    try:
        return run_sim(
            args.topology, args.set, args.variant, args.out, args.seed or 0, args.p4c,
            not args.no_plots, _say,
        )  # fmt: skip
    except SimError as e:
        raise NetError(str(e)) from None


def _run_one(
    args: argparse.Namespace,
    topo: Topology,
    plans: list[RouterPlan],
    delays: DelayPlan,
    json_path: Path,
    p4info: Path,
    out: Path,
    title: str,
) -> str:
    if delays.note:
        _say(f"warning: {delays.note}")

    samples: dict[str, list[CounterSnapshot]] = {p.name: [] for p in plans}
    with terminate_as_exception(), ExitStack() as stack:
        net = Network(topo, plans, json_path, out, target=args.target, netem=delays.netem)
        stack.callback(net.stop)
        _say(f"building {len(plans)} router(s) and {len(topo.hosts)} host(s) in Mininet")
        net.start()
        if delays.netem:
            _say(f"link delays: {len(delays.netem)} netem qdisc(s)")
        readers: dict[str, Callable[[], CounterSnapshot]] = {}
        for plan in plans:
            ctl = _connect(net.switches[plan.name].grpc_address, stack)
            ctl.push_pipeline(json_path, p4info)
            ctl.apply_config(plan.config)
            readers[plan.name] = _counter_reader(args.target, plan.name, ctl, net, stack)
        _say("routers configured: " + ", ".join(p.name for p in plans))

        def popen(host: str, cmd: list[str]) -> subprocess.Popen[Any]:
            return net.host(host).popen(
                cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )

        traffic = TrafficRun(popen)
        stack.callback(traffic.kill_all)
        receivers, senders = plan_commands(topo, out)
        traffic.start_receivers(receivers)

        before = net.interface_counters()
        first = {n: read() for n, read in readers.items()}
        switches_first = {n: sw.port_stats() for n, sw in net.switches.items()}
        pollers: list[BackgroundPoller] = []
        for plan in plans:
            writer = SeriesWriter.for_path(out / f"{plan.name}.csv")
            stack.callback(writer.close)
            poller = Poller(
                readers[plan.name],
                writer,
                topo.poll_interval_s,
                on_sample=lambda snap, _prev, n=plan.name: samples[n].append(snap),
            )
            pollers.append(BackgroundPoller(poller, f"poll-{plan.name}").start())
            stack.callback(pollers[-1].stop)  # before the connections close
        _say(f"running {len(topo.flows)} flow(s) for {topo.duration_s:g} s")
        traffic.run_senders(senders, _say)
        time.sleep(DRAIN_S)
        traffic.stop_receivers()
        for background in pollers:
            background.stop()
            if background.error is not None:
                raise NetError(f"polling the routers failed: {background.error}")
        for plan in plans:
            if not net.switches[plan.name].alive():
                raise NetError(f"router {plan.name} died:\n{net.switches[plan.name].log_tail()}")
        final = {n: read() for n, read in readers.items()}
        switches_final = {n: sw.port_stats() for n, sw in net.switches.items()}
        after = net.interface_counters()

    flows = [flow_result(f, out) for f in topo.flows]
    bal = balance(before, after, final, first, switches_final, switches_first)
    print(render(topo, flows, samples, final, bal, [delays.note] if delays.note else []))
    if not args.no_plots:
        from ratelab_net.plots import plot_run

        png = plot_run(out, flows, samples, title)
        print(f"plots: {png}")
    print(f"results: {out} (per-router counters <router>.csv, per-flow JSON, switch logs)")
    return summarize(flows, samples, final, bal)


_COMMANDS = {"check": cmd_check, "run": cmd_run, "clean": cmd_clean}


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return _COMMANDS[args.command](args)
    except ConfigError as e:
        print(str(e), file=sys.stderr)
        return 2
    except UsageError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    except (BuildError, NetError, TrafficError, SwitchError, SwitchProcessError, SchemaError) as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 1
    except (KeyboardInterrupt, Terminated) as e:
        print(f"{PROG}: interrupted ({e or 'Ctrl-C'}); the network was taken down", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
