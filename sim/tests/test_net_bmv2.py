"""ratelab-net's BMv2 target: link delays as netem qdiscs (planned per link
direction), the refusal where neither BMv2 nor the kernel can delay, the
--allow-no-delay path and its report line, and the queue gauges read over BMv2's
Thrift runtime API (a fake Thrift server here: the real simple_switch_grpc is not
installed). The kernel here has no netem, so netem is tested at plan level."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from bm_runtime.standard import Standard
from bm_runtime.standard.ttypes import InvalidRegisterOperation, RegisterOperationErrorCode
from ratelab_ctl.counters import GAUGE_REGISTERS, CounterSnapshot
from ratelab_model.counters import PortCounters
from ratelab_net import cli, delays
from ratelab_net.cli import DelayPlan, UsageError, main, plan_delays
from ratelab_net.delays import (
    NetemProbeError,
    NetemQdisc,
    kernel_has_netem,
    plan_netem,
)
from ratelab_net.network import NetError, Network
from ratelab_net.results import Balance, render
from ratelab_net.routers import plan_routers
from ratelab_net.thrift_gauges import ThriftRegisters, fill_gauges, with_gauges
from ratelab_net.topology import Topology, load_variants, parse_topology
from ratelab_sim.build import ROOT
from thrift.protocol import TBinaryProtocol
from thrift.TMultiplexedProcessor import TMultiplexedProcessor
from thrift.transport import TSocket, TTransport

# Every kind of direction: host -> router with a rate (netem below tbf) and
# without one (netem at the root), per-direction overrides, a router-router link
# of a high rate and a long delay (netem's limit grows past its default), and a
# link without a delay (no netem).
TOPOLOGY = """\
duration: 5s
routers:
  r1: {}
  r2: {}
hosts: [a, b, c]
links:
  - {ends: [a, r1], rate: 100mbit, delay: 1ms, queue_limit: 50}
  - ends: [r1, r2]
    rate: 1gbit
    delay: 100ms
    reverse: {rate: 10mbit, delay: 20ms}
  - {ends: [r2, b], rate: 10mbit, delay: 2ms, reverse: {delay: 3ms, rate: unlimited}}
  - {ends: [c, r2], rate: 100mbit}
flows:
  - {name: ping, from: a, to: b, transport: ping}
"""


EXAMPLES = ROOT / "sim" / "examples"


def _topology(text: str = TOPOLOGY) -> Topology:
    return parse_topology(text, "t.yaml")


# -- the netem plan -----------------------------------------------------------------


def test_netem_plan_delays_every_direction_on_the_interface_it_leaves() -> None:
    topo = _topology()
    plan = {q.direction: q for q in plan_netem(topo, plan_routers(topo))}
    assert {d: q.command() for d, q in plan.items()} == {
        # leaving a router: its interface's root qdisc, after BMv2's queue
        "r1 -> a": "tc qdisc add dev r1-eth1 root handle 10: netem delay 1000us limit 1000",
        # 1 Gbit/s = 83,333 packets/s for BMv2; two delays' worth is 16,668
        "r1 -> r2": "tc qdisc add dev r1-eth2 root handle 10: netem delay 100000us limit 16668",
        "r2 -> r1": "tc qdisc add dev r2-eth1 root handle 10: netem delay 20000us limit 1000",
        "r2 -> b": "tc qdisc add dev r2-eth2 root handle 10: netem delay 2000us limit 1000",
        # leaving a host with a rate: below its tbf; limit = queue limit + the
        # full-size frames of one delay (100 Mbit/s, 1 ms: 9)
        "a -> r1": "tc qdisc add dev a-eth0 parent 5:1 handle 10: netem delay 1000us limit 59",
        # leaving a host without a rate: netem is the root
        "b -> r2": "tc qdisc add dev b-eth0 root handle 10: netem delay 3000us limit 6000",
    }
    assert plan["a -> r1"].host == "a" and plan["b -> r2"].host == "b"
    assert plan["r1 -> r2"].host is None  # router interfaces: the root namespace
    # c's link has no delay: nothing on c-eth0 nor r2-eth3
    assert not [q for q in plan.values() if q.iface in ("c-eth0", "r2-eth3")]


def test_netem_round_trips_are_the_topologys() -> None:
    """a -> b and back: each one-way delay exactly once (no folding of a host's
    direction into the router's, as ratelab-switch's --link-delay needs)."""
    topo = _topology()
    delay = {q.direction: q.delay_us for q in plan_netem(topo, plan_routers(topo))}
    there = delay["a -> r1"] + delay["r1 -> r2"] + delay["r2 -> b"]
    back = delay["b -> r2"] + delay["r2 -> r1"] + delay["r1 -> a"]
    assert (there, back) == (103_000, 24_000)


def test_dumbbell_netem_gives_its_42ms_round_trip() -> None:
    """The issue's case: BMv2 gave the dumbbell a 0.4 ms round trip; netem's
    four qdiscs add up to its 42 ms."""
    (_, topo), *_ = load_variants(EXAMPLES / "dumbbell.yaml", [], "small-fifo")
    plan = plan_netem(topo, plan_routers(topo))
    assert {q.iface: q.delay_us for q in plan} == {
        "r1-eth1": 1000,
        "r1-eth2": 20000,
        "sender-eth0": 1000,
        "receiver-eth0": 20000,
    }
    assert sum(q.delay_us for q in plan) == 42_000


def test_check_prints_the_bmv2_plan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(TOPOLOGY)
    assert main(["check", str(path), "--target", "bmv2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    # a port's own direction only (ratelab-switch's plan adds a host's delay to it)
    assert "r1 port 1 -> a: 100 Mbit/s, 1 ms, queue 50, fifo" in lines
    assert "r2 port 2 -> b: 10 Mbit/s, 2 ms, queue 100, fifo" in lines
    assert "r2 port 3 -> c: 100 Mbit/s, 0 ms, queue 100, fifo" in lines
    netem = [line for line in lines if line.startswith("netem (")]
    assert netem[0] == (
        "netem (r1 -> a): tc qdisc add dev r1-eth1 root handle 10: netem delay 1000us limit 1000"
    )
    assert len(netem) == 6
    assert main(["check", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "r1 port 1 -> a: 100 Mbit/s, 2 ms, queue 50, fifo" in lines
    assert not [line for line in lines if line.startswith("netem")]


# -- is there netem? ----------------------------------------------------------------


def _fake_tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tc_script: str) -> Path:
    """`unshare` (runs its command) and `tc` (TC_SCRIPT) first on PATH; the args tc
    got are written to tc.args."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "unshare").write_text('#!/bin/sh\n[ "$1" = --net ] || exit 99\nshift\nexec "$@"\n')
    args = tmp_path / "tc.args"
    (bin_dir / "tc").write_text(f'#!/bin/sh\necho "$@" > {args}\n{tc_script}\n')
    for tool in bin_dir.iterdir():
        tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return args


@pytest.mark.parametrize(
    ("tc_script", "expected"),
    [
        ("exit 0", True),
        ('echo "Error: Specified qdisc kind is unknown." >&2; exit 2', False),
        ('echo "RTNETLINK answers: No such file or directory" >&2; exit 2', False),
    ],
    ids=["netem", "no-netem", "no-netem-old-iproute2"],
)
def test_netem_probe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tc_script: str, expected: bool
) -> None:
    args = _fake_tools(tmp_path, monkeypatch, tc_script)
    assert kernel_has_netem() is expected
    assert args.read_text() == "qdisc add dev lo root netem delay 1ms\n"


def test_netem_probe_that_cannot_tell_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_tools(
        tmp_path, monkeypatch, 'echo "RTNETLINK answers: Operation not permitted" >&2; exit 2'
    )
    with pytest.raises(NetemProbeError) as e:
        kernel_has_netem()
    assert str(e.value) == (
        "cannot tell whether this kernel has netem: RTNETLINK answers: Operation not permitted"
    )


def test_netem_probe_without_tc_is_not_a_missing_netem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """util-linux's unshare without a tc to run (seen on a machine without iproute2)."""
    _fake_tools(tmp_path, monkeypatch, "exit 0")
    (tmp_path / "bin" / "unshare").write_text(
        '#!/bin/sh\necho "unshare: failed to execute tc: No such file or directory" >&2\nexit 127\n'
    )
    with pytest.raises(NetemProbeError) as e:
        kernel_has_netem()
    assert str(e.value) == (
        "cannot tell whether this kernel has netem: "
        "unshare: failed to execute tc: No such file or directory"
    )


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (a network namespace)")
def test_netem_probe_on_this_kernel_answers() -> None:
    """The real probe runs (unshare, tc) and answers; this kernel has no netem
    (docs/NET.md), so False here, True where `tc ... netem` works."""
    works = (
        subprocess.run(["unshare", "--net", *delays.NETEM_PROBE], capture_output=True).returncode
        == 0
    )
    assert kernel_has_netem() is works


# -- planning a run's delays, the refusal, --allow-no-delay -------------------------

REFUSED = """duration: 5s
routers: {r1: {}, r2: {}}
hosts: [a, b]
links:
  - {ends: [a, r1], rate: 100mbit}
  - {ends: [r1, r2], rate: 10mbit, delay: 20ms}
  - {ends: [r2, b], rate: 100mbit, delay: 1ms, reverse: {delay: 2ms}}
flows:
  - {name: ping, from: a, to: b, transport: ping}
"""
REFUSAL = (
    "ratelab-net: error: link r1-r2 (links[1]) has delay 20ms (and 1 more link(s)) but the "
    "bmv2 target cannot delay and this kernel has no netem; pass --allow-no-delay to run "
    "without delays\n"
)


def _netem(monkeypatch: pytest.MonkeyPatch, present: bool | None) -> None:
    """The probe answers `present`; None: the probe must not run."""

    def probe() -> bool:
        if present is None:
            raise AssertionError("the netem probe ran")
        return present

    monkeypatch.setattr(cli, "kernel_has_netem", probe)


def _plan(text: str, target: str, allow: bool = False) -> DelayPlan:
    topo = _topology(text)
    return plan_delays(target, topo, plan_routers(topo), allow)


def test_ratelab_target_delays_in_the_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    _netem(monkeypatch, None)
    assert _plan(REFUSED, "ratelab") == DelayPlan([])


def test_bmv2_without_delays_needs_no_netem(monkeypatch: pytest.MonkeyPatch) -> None:
    _netem(monkeypatch, None)
    no_delays = REFUSED.replace("delay: 20ms", "aqm: fifo").replace("delay: 1ms", "aqm: fifo")
    assert _plan(no_delays.replace("{delay: 2ms}", "{}"), "bmv2") == DelayPlan([])


def test_bmv2_with_netem_plans_netem(monkeypatch: pytest.MonkeyPatch) -> None:
    _netem(monkeypatch, True)
    topo = _topology(REFUSED)
    assert _plan(REFUSED, "bmv2", allow=True) == DelayPlan(plan_netem(topo, plan_routers(topo)))
    assert len(_plan(REFUSED, "bmv2").netem) == 4  # r1 -> r2, r2 -> r1, r2 -> b, b -> r2


def test_bmv2_without_netem_refuses(monkeypatch: pytest.MonkeyPatch) -> None:
    _netem(monkeypatch, False)
    with pytest.raises(UsageError) as e:
        _plan(REFUSED, "bmv2")
    assert f"ratelab-net: error: {e.value}\n" == REFUSAL


def test_bmv2_probe_failure_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def probe() -> bool:
        raise NetemProbeError("cannot tell whether this kernel has netem: no")

    monkeypatch.setattr(cli, "kernel_has_netem", probe)
    with pytest.raises(UsageError, match=r"^cannot tell whether this kernel has netem: no$"):
        _plan(REFUSED, "bmv2")


def test_allow_no_delay_notes_every_link_on_top_of_the_report(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _netem(monkeypatch, False)
    plan = _plan(REFUSED, "bmv2", allow=True)
    assert plan.netem == []
    assert plan.note == (
        "delays ignored on links r1-r2 (20ms), r2-b (1ms (r2 -> b), 2ms (b -> r2)): the bmv2 "
        "target cannot delay and this kernel has no netem (--allow-no-delay); round trips "
        "and queues are not the topology's"
    )
    report = render(_topology(REFUSED), [], {}, {}, Balance(0, 0, 0), [plan.note])
    title, note, *_ = report.splitlines()
    assert title.startswith("== ratelab-net: t.yaml")
    assert note == f"note: {plan.note}"
    # without notes the report is as before: the title, then an empty line
    assert render(_topology(REFUSED), [], {}, {}, Balance(0, 0, 0)).splitlines()[1] == ""


def _fake_bmv2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A simple_switch_grpc on PATH that leaves a mark if it is ever started."""
    bin_dir = tmp_path / "bmv2"
    bin_dir.mkdir()
    mark = tmp_path / "switch-started"
    exe = bin_dir / "simple_switch_grpc"
    exe.write_text(f"#!/bin/sh\ntouch {mark}\n")
    exe.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(os, "geteuid", lambda: 0)  # refused before root matters
    return mark


def test_run_refuses_in_one_line_before_anything_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    mark = _fake_bmv2(tmp_path, monkeypatch)
    _netem(monkeypatch, False)

    def started(*_args: object, **_kw: object) -> None:
        raise AssertionError("something was started")

    monkeypatch.setattr(cli, "import_mininet", started)
    monkeypatch.setattr(cli, "compile_router", started)
    path = tmp_path / "t.yaml"
    path.write_text(REFUSED)
    out = tmp_path / "out"
    assert main(["run", str(path), "--target", "bmv2", "--out", str(out)]) == 2
    assert capsys.readouterr().err == REFUSAL
    assert not mark.exists() and not out.exists()


def test_run_with_allow_no_delay_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _fake_bmv2(tmp_path, monkeypatch)
    _netem(monkeypatch, False)

    def reached() -> None:
        raise NetError("went on to build the network")

    monkeypatch.setattr(cli, "import_mininet", reached)
    path = tmp_path / "t.yaml"
    path.write_text(REFUSED)
    args = ["run", str(path), "--target", "bmv2", "--allow-no-delay", "--out", str(tmp_path)]
    assert main(args) == 1
    assert capsys.readouterr().err == "ratelab-net: error: went on to build the network\n"


def test_run_without_bmv2_says_so_before_anything_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no simple_switch_grpc
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    _netem(monkeypatch, None)
    path = tmp_path / "t.yaml"
    path.write_text(REFUSED)
    assert main(["run", str(path), "--target", "bmv2", "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("ratelab-net: error: target bmv2: simple_switch_grpc is not on PATH")
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_bad_delay_of_a_hosts_direction_is_one_line() -> None:
    from ratelab_ctl.configfile import ConfigError

    with pytest.raises(ConfigError) as e:
        _topology(REFUSED.replace("reverse: {delay: 2ms}", "reverse: {delay: 2xx}"))
    assert str(e.value) == (
        "t.yaml:7:65: error: links[2] (b -> r2).delay: expected a delay like 250ms, 1s or "
        "500us, got '2xx'"
    )


# -- queue gauges over Thrift -------------------------------------------------------

LAST_Q, LAST_AVG = GAUGE_REGISTERS["last_q"], GAUGE_REGISTERS["last_avg"]


class FakeStandard:
    """BMv2's Standard service, registers only: each read_all of a register
    returns its next state."""

    def __init__(self, states: dict[str, list[list[int]]]) -> None:
        self.states = {name: iter(values) for name, values in states.items()}
        self.calls: list[tuple[int, str]] = []

    def bm_register_read_all(self, cxt_id: int, register_array_name: str) -> list[int]:
        self.calls.append((cxt_id, register_array_name))
        if register_array_name not in self.states:
            raise InvalidRegisterOperation(RegisterOperationErrorCode.INVALID_REGISTER_NAME)
        return next(self.states[register_array_name])


class FakeThriftServer:
    """BMv2's Thrift layout (multiplexed "standard" service, binary protocol,
    buffered transport) on a free local port, one client at a time."""

    def __init__(self, handler: FakeStandard) -> None:
        self.processor = TMultiplexedProcessor()
        self.processor.registerProcessor("standard", Standard.Processor(handler))
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.05)
        self.port = int(self.listener.getsockname()[1])
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stopping.is_set():
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                continue
            conn.settimeout(None)
            sock = TSocket.TSocket()
            sock.setHandle(conn)
            transport = TTransport.TBufferedTransport(sock)
            protocol = TBinaryProtocol.TBinaryProtocol(transport)
            try:
                while True:
                    self.processor.process(protocol, protocol)
            except TTransport.TTransportException:
                pass  # the client closed
            finally:
                conn.close()

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(timeout=5)
        self.listener.close()


@pytest.fixture
def server_of() -> Iterator[list[FakeThriftServer]]:
    started: list[FakeThriftServer] = []
    yield started
    for server in started:
        server.stop()


def _serve(server_of: list[FakeThriftServer], handler: FakeStandard) -> FakeThriftServer:
    server = FakeThriftServer(handler)
    server_of.append(server)
    return server


def test_thrift_reader_reads_whole_registers(server_of: list[FakeThriftServer]) -> None:
    handler = FakeStandard({LAST_Q: [[0, 5, 7]], LAST_AVG: [[0, 1 << 16, 3 << 15]]})
    server = _serve(server_of, handler)
    with ThriftRegisters("127.0.0.1", server.port, "r1") as registers:
        assert registers.read_all(LAST_Q) == [0, 5, 7]
        assert registers.read_all(LAST_AVG) == [0, 65536, 98304]
        with pytest.raises(NetError) as e:
            registers.read_all("RouterIngress.nothing")
    assert str(e.value) == (
        f"router r1: reading register RouterIngress.nothing over Thrift "
        f"(127.0.0.1:{server.port}) failed: INVALID_REGISTER_NAME"
    )
    assert handler.calls == [(0, LAST_Q), (0, LAST_AVG), (0, "RouterIngress.nothing")]


def test_thrift_reader_without_a_server_says_so() -> None:
    with socket.create_server(("127.0.0.1", 0)) as s:
        port = int(s.getsockname()[1])  # closed again: nobody listens there
    # in a fresh interpreter: thrift logs a failed connect on stderr itself where
    # logging is not set up (pytest's log capture would hide that here)
    script = (
        "from ratelab_net.network import NetError\n"
        "from ratelab_net.thrift_gauges import ThriftRegisters\n"
        "try:\n"
        f"    ThriftRegisters('127.0.0.1', {port}, 'r2').open()\n"
        "except NetError as e:\n"
        "    print(e)\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert proc.stdout == (
        f"router r2: no Thrift runtime server on 127.0.0.1:{port}: "
        f"Could not connect to any of [('127.0.0.1', {port})]\n"
    )
    assert proc.stderr == ""


def _p4runtime_reads(n: int) -> list[CounterSnapshot]:
    """What the controller reads from BMv2 over P4Runtime: counters, no gauges."""
    return [
        CounterSnapshot(
            100.0 + i,
            {1: PortCounters(packets_in=10 * i), 2: PortCounters(packets_out=9 * i)},
            False,
        )
        for i in range(n)
    ]


def test_report_queue_columns_filled_over_thrift(server_of: list[FakeThriftServer]) -> None:
    topo = _topology(REFUSED)
    reads = _p4runtime_reads(3)
    # BMv2's last_q per read, port index = cell (ports 1 and 2 of a 64-cell register)
    last_q = [[0, 1] + [0] * 62, [0, 3, 8] + [0] * 61, [0, 2, 4] + [0] * 61]
    last_avg = [[0, 1 << 16] + [0] * 62, [0] * 64, [0, 0, 5] + [0] * 61]
    server = _serve(server_of, FakeStandard({LAST_Q: last_q, LAST_AVG: last_avg}))
    plain = iter(reads)
    with ThriftRegisters("127.0.0.1", server.port, "r1") as registers:
        read = with_gauges(lambda: next(plain), registers)
        samples = [read() for _ in range(3)]
    assert [s.gauges for s in samples] == [True, True, True]
    assert [(s.ports[1].last_q, s.ports[2].last_q) for s in samples] == [(1, 0), (3, 8), (2, 4)]
    assert samples[0].ports[1].last_avg == 1 << 16 and samples[2].ports[2].last_avg == 5
    assert samples[1].ports[1].packets_in == 10 and samples[1].time == 101.0  # P4Runtime's
    report = render(topo, [], {"r1": samples}, {"r1": samples[-1]}, Balance(0, 0, 0))
    rows = {line.split()[0]: line.split() for line in report.splitlines() if line.strip()}
    assert rows["r1.1"][3] == "2.0/3" and rows["r1.2"][3] == "4.0/8"
    # the same reads without Thrift: BMv2's queue columns stay empty, as before
    report = render(topo, [], {"r1": reads}, {"r1": reads[-1]}, Balance(0, 0, 0))
    rows = {line.split()[0]: line.split() for line in report.splitlines() if line.strip()}
    assert rows["r1.1"][3] == "-" and rows["r1.2"][3] == "-"


def test_gauges_read_over_p4runtime_are_kept(server_of: list[FakeThriftServer]) -> None:
    handler = FakeStandard({})
    server = _serve(server_of, handler)
    snap = CounterSnapshot(1.0, {1: PortCounters(last_q=4)}, True)
    with ThriftRegisters("127.0.0.1", server.port, "r1") as registers:
        assert with_gauges(lambda: snap, registers)() is snap
    assert handler.calls == []  # ratelab-switch's P4Runtime registers: no Thrift read


def test_register_shorter_than_the_ports_is_an_error(server_of: list[FakeThriftServer]) -> None:
    server = _serve(server_of, FakeStandard({LAST_Q: [[0, 1]], LAST_AVG: [[0, 1]]}))
    with ThriftRegisters("127.0.0.1", server.port, "r1") as registers, pytest.raises(NetError) as e:
        fill_gauges(_p4runtime_reads(1)[0], registers)
    assert str(e.value) == f"router r1: register {LAST_Q} has 2 cells, no port 2"


# -- adding the qdiscs ----------------------------------------------------------------


class _FakeHost:
    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.commands: list[str] = []

    def cmd(self, command: str) -> str:
        self.commands.append(command)
        return self.answer


class _FakeMininet:
    def __init__(self, host: _FakeHost) -> None:
        self.host = host

    def get(self, _name: str) -> _FakeHost:
        return self.host


def _network(host: _FakeHost) -> Network:
    topo = _topology(REFUSED)
    net = Network(topo, plan_routers(topo), Path("router.json"), Path("logs"), target="bmv2")
    net.net = _FakeMininet(host)
    return net


def test_a_hosts_netem_runs_in_its_namespace() -> None:
    host = _FakeHost("rc=0")
    qdisc = NetemQdisc("b-eth0", "b", "b -> r2", 2000, 1000, None)
    _network(host)._add_netem(qdisc)
    assert host.commands == [qdisc.command() + " 2>&1; echo rc=$?"]


def test_a_netem_the_kernel_refuses_is_one_line() -> None:
    host = _FakeHost("Error: Specified qdisc kind is unknown.\nrc=2")
    qdisc = NetemQdisc("b-eth0", "b", "b -> r2", 2000, 1000, None)
    with pytest.raises(NetError) as e:
        _network(host)._add_netem(qdisc)
    assert str(e.value) == (
        "host b: `tc qdisc add dev b-eth0 root handle 10: netem delay 2000us limit 1000` "
        "failed: Error: Specified qdisc kind is unknown."
    )


def test_a_routers_netem_runs_in_the_root_namespace() -> None:
    """A router interface lives in the root namespace: tc runs there (on an
    interface that does not exist here, so it fails, naming the command)."""
    host = _FakeHost("rc=0")
    qdisc = NetemQdisc("rlnodev-eth9", None, "r1 -> r2", 2000, 1000, None)
    with pytest.raises(NetError) as e:
        _network(host)._add_netem(qdisc)
    assert str(e.value).startswith(f"`{qdisc.command()}` failed: ")
    assert "\n" not in str(e.value) and host.commands == []


def test_a_host_command_that_fails_is_one_line_with_what_it_said() -> None:
    host = _FakeHost("RTNETLINK answers: File exists\nsecond line\nrc=2")
    net = _network(host)
    name = net.topo.hosts[0]
    with pytest.raises(NetError) as e:
        net._configure_host(name)
    assert str(e.value) == (
        f"host {name}: `{host.commands[0].split(' 2>&1')[0]}` failed: "
        "RTNETLINK answers: File exists second line"
    )
    assert len(host.commands) == 1
