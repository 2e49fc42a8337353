"""ratelab-net's TCP stacks without a network: the topology keys of ratelab-stack
flows and their errors, the tcp-send command they become, their results in the
report, and the rbcc rate plot."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import matplotlib.pyplot as plt
import pytest
from ratelab_ctl.configfile import ConfigError
from ratelab_net.cli import main
from ratelab_net.plots import _plot_rates, plot_run
from ratelab_net.results import Balance, flow_result, render
from ratelab_net.topology import TcpOptions, parse_topology
from ratelab_net.traffic import Command, TrafficRun, plan_commands

TOPOLOGY = """\
duration: 8s
routers:
  r1: {router_id: 10.0.0.7}
hosts: [a, b]
links:
  - {ends: [a, r1], rate: 100mbit}
  - {ends: [r1, b], rate: 10mbit, delay: 20ms}
flows:
  - name: vegas
    from: a
    to: b
    transport: tcp
    stack: ratelab
    cc: vegas
    iw: 3
    initial_rto: 3s
    min_rto: 200ms
    sack: false
    delayed_ack: no
    prr: true
    rto_formula: linux
    hystart: true
  - {name: reno, from: a, to: b, transport: tcp, cc: reno}
  - {name: rl, from: b, to: a, transport: tcp, stack: ratelab, cc: newreno, start: 1s, stop: 7s}
  - {name: rate, from: a, to: b, transport: rbcc, rate: 8mbit, start: 2s}
"""


def _args(
    topo_text: str, tmp_path: Path, overrides: list[str] | None = None
) -> dict[str, list[str]]:
    receivers, senders = plan_commands(parse_topology(topo_text, "s.yaml", overrides), tmp_path)
    return {c.label: c.args[3:] for c in [*receivers, *senders]}  # after python -m ratelab_hosts


def test_ratelab_flows_keys_and_defaults() -> None:
    vegas, reno, rl, rate = parse_topology(TOPOLOGY, "s.yaml").flows
    assert vegas.tcp == TcpOptions("ratelab", 3, 3.0, 0.2, False, False, True, "linux", True)
    assert (reno.cc, reno.tcp) == ("reno", TcpOptions())  # kernel, nothing set
    assert (rl.cc, rl.tcp) == ("newreno", TcpOptions("ratelab"))  # the stack's defaults
    assert rate.tcp is None


def test_ratelab_flows_become_tcp_send_with_their_address(tmp_path: Path) -> None:
    args = _args(TOPOLOGY, tmp_path)
    assert args["vegas"][:18] == [
        "tcp-send", "--stack", "ratelab", "--src", "10.0.1.2", "--iw", "3",
        "--initial-rto", "3", "--min-rto", "0.2", "--no-sack", "--no-delayed-ack", "--prr",
        "--rto-formula", "linux", "--hystart", "--dst",
    ]  # fmt: skip
    assert args["vegas"][18:21] == ["10.0.2.1:6000", "--cc", "vegas"]
    # knobs not given are left to the stack; host b's flows send from 10.0.2.2
    assert args["rl"][:8] == [
        "tcp-send", "--stack", "ratelab", "--src", "10.0.2.2", "--dst", "10.0.1.1:6002", "--cc",
    ]  # fmt: skip
    assert args["rl"][args["rl"].index("--duration") + 1] == "6"
    # a kernel flow's command is as before: no stack, no source address
    assert args["reno"][:5] == ["tcp-send", "--dst", "10.0.2.1:6001", "--cc", "reno"]
    assert "--stack" not in args["reno"] and "--src" not in args["reno"]
    # every TCP flow, of either stack, has the kernel's tcp-sink as receiver
    assert args["vegas sink"][:3] == ["tcp-sink", "--listen", "10.0.2.1:6000"]
    assert args["rl sink"][:3] == ["tcp-sink", "--listen", "10.0.1.1:6002"]


def test_set_switches_a_flow_to_the_ratelab_stack(tmp_path: Path) -> None:
    overrides = ["flows[1].stack=ratelab", "flows[1].cc=vegas", "flows[1].iw=10"]
    args = _args(TOPOLOGY, tmp_path, overrides)
    assert args["reno"][:7] == ["tcp-send", "--stack", "ratelab", "--src", "10.0.1.2", "--iw", "10"]
    assert args["reno"][args["reno"].index("--cc") + 1] == "vegas"


def test_cubic_linux_is_a_ratelab_cc(tmp_path: Path) -> None:
    overrides = ["flows[1].stack=ratelab", "flows[1].cc=cubic-linux"]
    args = _args(TOPOLOGY, tmp_path, overrides)
    assert args["reno"][args["reno"].index("--cc") + 1] == "cubic-linux"
    # Linux's Cubic brings its own HyStart: HyStart++ on top is refused
    with pytest.raises(ConfigError, match=r"flows\[0\]\.hystart: cubic-linux leaves slow start"):
        parse_topology(TOPOLOGY, "s.yaml", ["flows[0].cc=cubic-linux"])


KERNEL = "a kernel TCP flow has no"
RANGE = "expected 1ms to 60s, got"


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "stack: ratelab",
            "stack: linux",
            "[0].stack: expected one of kernel, ratelab, got 'linux'",
        ),
        (
            "cc: vegas",
            "cc: bbr",
            "[0].cc: expected one of reno, newreno, cubic, cubic-linux, vegas (stack: rat",
        ),
        ("cc: vegas", "cc: Vegas", "[0].cc: expected one of reno"),
        ("stack: ratelab", "stack: kernel", f"[0].iw: {KERNEL} iw: it needs stack: ratelab"),
        ("iw: 3", "iw: 0", "[0].iw: expected 1 to 1000 segments, got '0'"),
        ("iw: 3", "iw: -4", "[0].iw: expected 1 to 1000 segments, got '-4'"),
        ("iw: 3", "iw: 1001", "[0].iw: expected 1 to 1000 segments, got '1001'"),
        ("iw: 3", "iw: 2.5", "[0].iw: expected 1 to 1000 segments, got '2.5'"),
        ("iw: 3", "iw: [3]", "[0].iw: expected an initial window in segments"),
        ("initial_rto: 3s", "initial_rto: 0s", f"[0].initial_rto: {RANGE} '0s'"),
        ("initial_rto: 3s", "initial_rto: 61s", f"[0].initial_rto: {RANGE} '61s'"),
        ("initial_rto: 3s", "initial_rto: -1s", "[0].initial_rto: expected a duration"),
        ("initial_rto: 3s", "initial_rto: soon", "[0].initial_rto: expected a duration"),
        ("min_rto: 200ms", "min_rto: 0ms", f"[0].min_rto: {RANGE} '0ms'"),
        ("sack: false", "sack: maybe", "[0].sack: expected true or false, got 'maybe'"),
        ("prr: true", "prr: 1", "[0].prr: expected true or false, got '1'"),
        (
            "rto_formula: linux",
            "rto_formula: bsd",
            "[0].rto_formula: expected one of rfc6298, linux, got 'bsd'",
        ),
        ("rto_formula: linux", "rto_formula: [linux]", "[0].rto_formula: expected an RTO formula"),
        ("hystart: true", "hystart: on-ish", "[0].hystart: expected true or false, got 'on-ish'"),
        (
            "cc: reno}",
            "cc: reno, rto_formula: linux}",
            f"[1].rto_formula: {KERNEL} rto_formula: it needs stack: ratelab",
        ),
        ("cc: reno}", "cc: reno, hystart: true}", f"[1].hystart: {KERNEL} hystart: it needs"),
        ("cc: reno}", "cc: reno, prr: true}", f"[1].prr: {KERNEL} prr: it needs stack: ratelab"),
        ("cc: reno}", "cc: vegas}", "[1].cc: 'vegas' is not available in this kernel"),
        ("rbcc, rate", "rbcc, stack: ratelab, rate", "[3].stack: only tcp flows have stack"),
        ("rbcc, rate", "rbcc, iw: 4, rate", "[3].iw: only tcp flows have iw"),
    ],
)
def test_bad_stack_keys_name_the_flow_and_field(old: str, new: str, message: str) -> None:
    assert old in TOPOLOGY
    with pytest.raises(ConfigError) as info:
        parse_topology(TOPOLOGY.replace(old, new, 1), "s.yaml")
    text = str(info.value)
    assert text.startswith("s.yaml:") and f"flows{message}" in text and "\n" not in text, text


def test_kernel_without_vegas_points_to_the_ratelab_stack(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        "ratelab_net.topology.kernel_congestion_controls", lambda: ["reno", "cubic"]
    )
    with pytest.raises(ConfigError, match=r"\(available: reno cubic\) \(stack: ratelab has it\)$"):
        parse_topology(TOPOLOGY.replace("cc: reno}", "cc: vegas}"), "s.yaml")


def test_check_prints_the_stack_and_knobs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(TOPOLOGY)
    assert main(["check", str(path)]) == 0
    out = capsys.readouterr().out
    assert (
        "flow vegas: a -> b, tcp vegas bulk, ratelab stack from 10.0.1.2: iw 3, initial_rto 3s, "
        "min_rto 0.2s, sack off, delayed_ack off, prr on, rto_formula linux, hystart on, "
        "send_buffer default, 0-8 s"
    ) in out
    assert "flow reno: a -> b, tcp reno bulk, kernel stack, 0-8 s" in out
    assert "flow rl: b -> a, tcp newreno bulk, ratelab stack from 10.0.2.2: iw default," in out
    assert "flow rate: a -> b, rbcc, 2-8 s" in out
    # a bad knob through --set: one line, status 2, nothing else printed
    assert main(["check", str(path), "--set", "flows[1].iw=4"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "<command line>:1:1: error: flows[1].iw: a kernel TCP flow has no iw: "
        "it needs stack: ratelab\n"
    )


def _tcp_json(path: Path, extra: dict[str, object]) -> None:
    samples = [
        {"t_s": 0.05 * i, "rtt_us": 41000 + 100 * i, "snd_cwnd": 10 + i, "snd_ssthresh": None}
        for i in range(5)
    ]
    flow = {"goodput_bps": 9.1e6, "retransmissions": 4, "ssthresh_changes": 2, "samples": samples}
    path.write_text(json.dumps({"command": "tcp-send", "flows": [{**flow, **extra}]}))


def test_results_of_both_stacks_and_rbcc_rates(tmp_path: Path) -> None:
    topo = parse_topology(TOPOLOGY, "s.yaml")
    vegas, reno, _, rate = topo.flows
    ratelab_extra = {
        "stack": "ratelab",
        "rtos": 3,
        "spurious_rtos": 1,
        "malformed": 2,
        "local_drops": 0,
        "resets_received": 1,
        "resets_sent": 0,
    }
    _tcp_json(tmp_path / "vegas.json", ratelab_extra)
    _tcp_json(tmp_path / "reno.json", {"rtos": 99})  # a kernel flow's JSON has no RTO count
    rates = [
        {"t_s": 0.0, "rate": 50_000, "return_rate": 0xFFFFFFFF, "return_bottle_node": 0},
        {"t_s": 0.3, "rate": 1_000_000, "return_rate": 1_000_000, "return_bottle_node": 0},
        {"t_s": 0.5, "rate": 593_750, "return_rate": 593_750, "return_bottle_node": 0x0A000007},
    ]
    (tmp_path / "rate.json").write_text(
        json.dumps(
            {"flows": [{"goodput_bps": 4.7e6, "srtt_us": 42000, "rate": 593_750, "rates": rates}]}
        )
    )
    results = [flow_result(f, tmp_path) for f in (vegas, reno, rate)]
    rv, rk, rr = results
    note = "2 malformed, 1 resets received"
    assert (rv.stack, rv.rtos, rv.spurious_rtos, rv.note) == ("ratelab", 3, 1, note)
    assert rv.cwnd == [(0.05 * i, 10 + i) for i in range(5)]
    assert (rk.stack, rk.rtos, rk.spurious_rtos) == ("kernel", None, None)
    assert [(c.return_rate, c.bottle_router) for c in rr.rates] == [
        (None, "-"),
        (1_000_000, "-"),
        (593_750, "10.0.0.7"),
    ]
    report = render(topo, results, {}, {}, Balance(0, 0, 0))
    lines = {line.split()[0]: line for line in report.splitlines() if line.strip()}
    assert "ratelab vegas" in lines["vegas"] and "3 RTOs (1 spurious)" in lines["vegas"]
    assert "2 malformed, 1 resets received" in lines["vegas"]
    assert "tcp reno" in lines["reno"] and "RTOs" not in lines["reno"]
    assert "rate 593750 B/s at the end (set by 10.0.0.7)" in lines["rate"]
    assert plot_run(tmp_path, results, {}, "t").stat().st_size > 0


def test_rate_plot_shows_sending_and_echoed_rate_with_the_router(tmp_path: Path) -> None:
    topo = parse_topology(TOPOLOGY, "s.yaml")
    rate = topo.flows[3]
    rates = [
        {"t_s": 0.0, "rate": 50_000, "return_rate": 0xFFFFFFFF, "return_bottle_node": 0},
        {"t_s": 1.0, "rate": 1_000_000, "return_rate": 1_000_000, "return_bottle_node": 0x0A000007},
    ]
    (tmp_path / "rate.json").write_text(json.dumps({"flows": [{"rates": rates}]}))
    result = flow_result(rate, tmp_path)
    fig, ax = plt.subplots()
    _plot_rates(ax, [result])
    sent, echoed = ax.get_lines()
    assert sent.get_label() == "rate sending"
    assert echoed.get_label() == "rate echoed (set by 10.0.0.7)"
    # steps in Mbit/s from the flow's start (2 s) to its stop (8 s); no echo before the ACK
    assert list(sent.get_xdata()) == [2.0, 3.0, 8.0]
    assert list(sent.get_ydata()) == [0.4, 8.0, 8.0]
    assert list(echoed.get_xdata()) == [3.0, 8.0] and list(echoed.get_ydata()) == [8.0, 8.0]
    plt.close(fig)


def test_run_with_a_bad_knob_starts_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(TOPOLOGY.replace("initial_rto: 3s", "initial_rto: 90s"))
    out = tmp_path / "out"
    assert main(["run", str(path), "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.err.endswith("error: flows[0].initial_rto: expected 1ms to 60s, got '90s'\n")
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err
    assert captured.out == "" and not out.exists()  # checked before anything was built


def test_a_sender_that_writes_no_results_shows_its_last_words(tmp_path: Path) -> None:
    vegas = parse_topology(TOPOLOGY, "s.yaml").flows[0]
    _, senders = plan_commands(parse_topology(TOPOLOGY, "s.yaml"), tmp_path)
    assert senders[0].stderr_out == tmp_path / "vegas.stderr.txt"

    def local(_host: str, args: list[str]) -> subprocess.Popen[str]:
        return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    script = "echo Traceback >&2; echo 'ImportError: half-built' >&2; exit 1"
    cmd = Command("a", ["sh", "-c", script], "vegas", stderr_out=senders[0].stderr_out)
    TrafficRun(local).run_senders([cmd], lambda _m: None)  # status 1: the report's business
    note = flow_result(vegas, tmp_path).note
    assert note == "no results (the sender failed to write them: ImportError: half-built)"
    # a sender that printed nothing leaves no file
    cmd = Command("a", ["true"], "quiet", stderr_out=tmp_path / "quiet.stderr.txt")
    TrafficRun(local).run_senders([cmd], lambda _m: None)
    assert not (tmp_path / "quiet.stderr.txt").exists()


@pytest.mark.parametrize(
    ("value", "parsed", "arg"),
    [("auto", "auto", "auto"), ("256kB", 256_000, "256000"), ("1MiB", 2**20, "1048576")],
)
def test_send_buffer_key(value: str, parsed: str | int, arg: str, tmp_path: Path) -> None:
    text = TOPOLOGY.replace("cc: newreno,", f"cc: newreno, send_buffer: {value},")
    rl = parse_topology(text, "s.yaml").flows[2]
    assert rl.tcp == TcpOptions("ratelab", send_buffer=parsed)
    args = _args(text, tmp_path)["rl"]
    assert args[args.index("--send-buffer") + 1] == arg
    assert "--send-buffer" not in _args(TOPOLOGY, tmp_path)["rl"]  # the stack's default


@pytest.mark.parametrize(
    ("new", "message"),
    [
        ("huge", "expected auto or a size like 256kB, 1MiB or plain bytes, got 'huge'"),
        ("100", "expected auto or 2920 B to 1GiB, got '100'"),
        ("2GiB", "expected auto or 2920 B to 1GiB, got '2GiB'"),
        ("1.5B", "expected auto or 2920 B to 1GiB, got '1.5B'"),
        ("[auto]", "expected auto or a size like 256kB"),
    ],
)
def test_bad_send_buffer_names_the_field(new: str, message: str) -> None:
    text = TOPOLOGY.replace("cc: newreno,", f"cc: newreno, send_buffer: {new},")
    with pytest.raises(ConfigError) as info:
        parse_topology(text, "s.yaml")
    assert f"flows[2].send_buffer: {message}" in str(info.value)
    kernel = TOPOLOGY.replace("cc: reno}", "cc: reno, send_buffer: auto}")
    with pytest.raises(ConfigError, match=rf"flows\[1\].send_buffer: {KERNEL} send_buffer"):
        parse_topology(kernel, "s.yaml")
