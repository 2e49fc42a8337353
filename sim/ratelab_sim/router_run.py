"""`make run`: the router on ratelab's switch with real traffic, and a report.

    python -m ratelab_sim.router_run [--config FILE] [--set KEY=VALUE ...]
                                     [--duration S] [--udp-rate RATE]
                                     [--rbcc-rate RATE] [--out DIR]

1. Reads the router configuration (docs/CONTROLLER.md; default
   control_plane/examples/router.yaml), with `--set` overrides as
   `ratelab-ctl set` takes them, and compiles p4src/router.p4.
2. Puts one host per routed next hop in its own network namespace, joined to
   the switch by a veth pair (router_plan.py says which host receives).
3. Starts ratelab-switch with the ports' drain rates, pushes the pipeline and
   the configuration over P4Runtime (ratelab_ctl).
4. Every sender runs one RBCC flow to the receiver (desired rate: --rbcc-rate,
   by default the bottleneck's link rate); the last sender also sends
   UDP at --udp-rate, which RBCC does not account for. The counters are polled
   into DIR/series.csv while the traffic runs.
5. Prints the report (report.py) and removes every namespace, interface and
   process it made, also on error, Ctrl-C or SIGTERM.

Needs root. Exit status: 0 done, 1 a run-time failure, 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from subprocess import PIPE
from typing import Any

from ratelab_ctl.configfile import ConfigError, ControllerConfig, load_config
from ratelab_ctl.connection import SwitchConnection, SwitchError
from ratelab_ctl.controller import Controller
from ratelab_ctl.counters import CounterSnapshot
from ratelab_ctl.poller import BackgroundPoller, Poller, SeriesWriter
from ratelab_ctl.switch_options import switch_options
from ratelab_ctl.units import parse_rate
from ratelab_net.traffic import Command, TrafficError, TrafficRun, hosts_command
from ratelab_p4info import SchemaError

from ratelab_sim.build import ROOT, BuildError, compile_router, default_p4c
from ratelab_sim.netns import HarnessError, Netns, VethPair, sweep, unique_prefix
from ratelab_sim.report import RunResults, render
from ratelab_sim.router_plan import Host, Plan, PlanError, plan_hosts
from ratelab_sim.signals import Terminated, terminate_as_exception
from ratelab_sim.switch import SwitchError as SwitchStartError
from ratelab_sim.switch import SwitchProcess

PROG = "ratelab-run"
DEFAULT_CONFIG = ROOT / "control_plane" / "examples" / "router.yaml"
UDP_PORT = 5001
POLL_INTERVAL_S = 0.1
# Receivers are started to outlive the senders by this much (they are stopped once the
# senders are done and the network is drained).
LINGER_S = 10.0
DRAIN_S = 1.0


class RunError(Exception):
    """A run-time failure; str() is one line (plus a log tail where it helps)."""


# What ends a run early with one line and status 1.
RUN_FAILURES = (
    BuildError,
    HarnessError,
    SwitchStartError,
    SwitchError,
    SchemaError,
    RunError,
    TrafficError,
)


def _say(message: str) -> None:
    print(f"{PROG}: {message}", flush=True)


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", default=str(DEFAULT_CONFIG), help="router configuration (YAML)")
    ap.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a setting, e.g. ports.3.aqm.preset=red-edge (repeatable)",
    )
    ap.add_argument("--duration", type=float, default=4.0, help="seconds of traffic (4)")
    ap.add_argument(
        "--udp-rate", default="2mbit", help="UDP rate beside the RBCC flows (2mbit; 0: none)"
    )
    ap.add_argument(
        "--rbcc-rate", default=None, help="desired rate of each RBCC flow (the bottleneck's rate)"
    )
    ap.add_argument("--out", default=str(ROOT / "build" / "run"), help="results folder")
    ap.add_argument("--p4c", default=None, help="compiler with p4c's command line")
    return ap.parse_args(argv)


def _setup_host(ns: Netns, iface: str, host: Host) -> None:
    ns.set_mac(iface, host.mac)
    ns.add_address(iface, f"{host.address}/{host.prefix_len}")
    ns.add_neighbor(host.gateway, host.gateway_mac, iface)
    ns.add_route("default", iface, via=host.gateway)


def _load_json(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise RunError(f"{path}: no results ({e})") from None


def run_traffic(
    cfg: ControllerConfig,
    plan: Plan,
    json_path: Path,
    p4info: Path,
    out: Path,
    duration: float,
    udp_rate_bps: int,
    rbcc_rate_bps: int | None = None,
) -> RunResults:
    hosts = [plan.receiver, *plan.senders]
    with terminate_as_exception(), ExitStack() as stack:
        prefix = unique_prefix()
        namespaces: dict[str, Netns] = {}
        switch_ifaces: dict[int, str] = {}
        for host in hosts:
            ns = stack.enter_context(Netns(f"{prefix}h{host.port}"))
            pair = stack.enter_context(
                VethPair(f"{prefix}s{host.port}", f"{prefix}h{host.port}", None, ns.name)
            )
            _setup_host(ns, pair.b, host)
            namespaces[host.name] = ns
            switch_ifaces[host.port] = pair.a
        switch = stack.enter_context(
            SwitchProcess(
                json_path,
                switch_ifaces,
                out / "switch.log",
                target="ratelab",
                extra_args=switch_options(cfg.router),
            )
        )
        _say(f"switch up at {switch.grpc_address}; ports {sorted(switch_ifaces)}")
        conn = stack.enter_context(SwitchConnection(switch.grpc_address, 0).open(True))
        ctl = Controller(conn, log=_say)
        ctl.push_pipeline(json_path, p4info)
        ctl.apply_config(cfg)

        def popen(host: str, args: list[str]) -> subprocess.Popen[str]:
            cmd = namespaces[host].exec_args(args)
            return subprocess.Popen(cmd, stdout=PIPE, stderr=PIPE, text=True, cwd=out)

        traffic = TrafficRun(popen)
        stack.callback(traffic.kill_all)
        receiver = plan.receiver
        listen_s = f"{duration + LINGER_S:g}"
        receivers = [
            Command(
                receiver.name,
                hosts_command(
                    *("rbcc-recv", "--listen", receiver.address, "--flows", str(len(plan.senders))),
                    *("--duration", listen_s, "--json-out", "rbcc_recv.json"),
                ),
                f"rbcc-recv on {receiver.name}",
                waits_ready=True,
            )
        ]
        if udp_rate_bps:
            receivers.append(
                Command(
                    receiver.name,
                    hosts_command(
                        *("udp-sink", "--listen", f"{receiver.address}:{UDP_PORT}"),
                        *("--duration", listen_s, "--json-out", "udp_sink.json"),
                    ),
                    f"udp-sink on {receiver.name}",
                    waits_ready=True,
                )
            )
        traffic.start_receivers(receivers)

        snapshots: list[CounterSnapshot] = []
        ports = [h.port for h in hosts]
        writer = SeriesWriter.for_path(out / "series.csv")
        poller = Poller(
            lambda: ctl.read_counters(ports),
            writer,
            POLL_INTERVAL_S,
            on_sample=lambda snap, _prev: snapshots.append(snap),
        )
        stack.callback(writer.close)
        background = BackgroundPoller(poller).start()
        stack.callback(background.stop)  # before the writer and the connection close

        rate_bps = rbcc_rate_bps or plan.bottleneck.rate_bps
        senders = [
            Command(
                host.name,
                hosts_command(
                    *("rbcc-send", "--dst", receiver.address, "--rate", f"{rate_bps}bit"),
                    *("--duration", f"{duration:g}", "--flow-id", str(101 + i)),
                    *("--json-out", f"rbcc_send_{host.name}.json"),
                ),
                f"rbcc-send on {host.name}",
                run_s=duration,
            )
            for i, host in enumerate(plan.senders)
        ]
        udp_sender = plan.senders[-1]
        if udp_rate_bps:
            senders.append(
                Command(
                    udp_sender.name,
                    hosts_command(
                        *("udp-send", "--dst", f"{receiver.address}:{UDP_PORT}"),
                        *("--rate", f"{udp_rate_bps}bit", "--duration", f"{duration:g}"),
                        *("--flow-id", "201", "--json-out", "udp_send.json"),
                    ),
                    f"udp-send on {udp_sender.name}",
                    run_s=duration,
                )
            )
        _say(
            f"traffic for {duration:g} s: {len(plan.senders)} RBCC flow(s)"
            + (f" and UDP at {udp_rate_bps / 1e6:g} Mbit/s" if udp_rate_bps else "")
            + f" to {receiver.name} ({receiver.address})"
        )
        started = time.monotonic()
        traffic.run_senders(senders, lambda _message: None)
        time.sleep(DRAIN_S)  # what is still queued or on its way reaches the receivers
        traffic.stop_receivers()  # they write their results now
        background.stop()
        if background.error is not None:
            raise RunError(f"polling the switch failed: {background.error}")
        elapsed = time.monotonic() - started
        if not switch.alive():
            raise RunError(f"the switch died during the run:\n{switch.log_tail()}")
        final = ctl.read_counters(ports)
        switch_ports = switch.port_stats()

    return RunResults(
        config=cfg,
        plan=plan,
        duration_s=duration,
        elapsed_s=elapsed,
        final=final,
        samples=snapshots,
        rbcc_senders={h.name: _load_json(out / f"rbcc_send_{h.name}.json") for h in plan.senders},
        rbcc_receiver=_load_json(out / "rbcc_recv.json"),
        udp_sender=_load_json(out / "udp_send.json") if udp_rate_bps else None,
        udp_sink=_load_json(out / "udp_sink.json") if udp_rate_bps else None,
        udp_sender_name=udp_sender.name,
        poll_interval_s=POLL_INTERVAL_S,
        switch_ports=switch_ports,
    )


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    try:
        cfg = load_config(args.config, args.set)
        plan = plan_hosts(cfg.router, {hop: name for name, hop in cfg.next_hop_names})
        udp_rate = 0 if args.udp_rate.strip() == "0" else parse_rate(args.udp_rate)
        rbcc_rate = None if args.rbcc_rate is None else parse_rate(args.rbcc_rate)
        if rbcc_rate == 0:
            raise ValueError("--rbcc-rate must be above 0")
        if args.duration <= 0:
            raise ValueError("--duration must be above 0")
    except ConfigError as e:
        print(str(e), file=sys.stderr)
        return 2
    except (PlanError, ValueError) as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    if os.geteuid() != 0:
        print(f"{PROG}: error: needs root (network namespaces, veth pairs)", file=sys.stderr)
        return 2
    p4c = args.p4c or default_p4c()
    if p4c is None:
        print(f"{PROG}: error: ratelab-p4c is not installed (make deps)", file=sys.stderr)
        return 2
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    try:
        json_path, p4info = compile_router(p4c, out, quiet=True)
        for leftover in sweep():
            _say(f"removed a leftover of an earlier run: {leftover}")
        results = run_traffic(cfg, plan, json_path, p4info, out, args.duration, udp_rate, rbcc_rate)
    except (
        BuildError,
        HarnessError,
        SwitchStartError,
        SwitchError,
        SchemaError,
        RunError,
        TrafficError,
    ) as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 1
    except (KeyboardInterrupt, Terminated) as e:
        print(f"{PROG}: interrupted ({e or 'Ctrl-C'}); everything was removed", file=sys.stderr)
        return 130
    print(render(results))
    print(f"\nresults: {out} (series.csv: counters every {POLL_INTERVAL_S:g} s; host JSON files)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
