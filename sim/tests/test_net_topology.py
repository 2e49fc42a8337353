"""ratelab-net's topology file, the router configurations it implies, and the
pure parts of the results (no network needed)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from ratelab_ctl.configfile import ConfigError
from ratelab_ctl.counters import CounterSnapshot
from ratelab_model.counters import PortCounters
from ratelab_net import traffic
from ratelab_net.cli import main
from ratelab_net.network import host_shaping, link_delays
from ratelab_net.results import balance, parse_ping, switch_losses
from ratelab_net.routers import plan_routers
from ratelab_net.topology import load_variants, parse_topology
from ratelab_net.traffic import Command, TrafficError, TrafficRun, plan_commands
from ratelab_sim.build import ROOT

EXAMPLES = ROOT / "sim" / "examples"

LINE = """\
duration: 5s
routers:
  r1: {router_id: 10.0.0.1}
  r2: {}
hosts: [a, b, c]
links:
  - {ends: [a, r1], rate: 100mbit, delay: 1ms}
  - ends: [r1, r2]
    rate: 10mbit
    delay: 20ms
    queue_limit: 2xBDP
    aqm: red-hspa
    reverse: {rate: 20mbit, aqm: fifo, queue_limit: 50}
  - {ends: [r2, b], rate: 100mbit, delay: 2ms, reverse: {rate: 50mbit, delay: 3ms}}
  - {ends: [c, r2], rate: 100mbit}
flows:
  - {name: bulk, from: a, to: b, transport: tcp, cc: reno, start: 1s, stop: 4s}
  - {from: a, to: c, transport: udp, rate: 1mbit, pattern: onoff, on: 1s, off: 1s}
  - {from: c, to: a, transport: rbcc, rate: 2mbit}
  - {from: b, to: a, transport: ping, interval: 0.2s}
"""


def test_routers_ports_routes_and_link_settings() -> None:
    topo = parse_topology(LINE, "line.yaml")
    r1, r2 = plan_routers(topo)
    assert [(p.port, p.peer) for p in r1.ports] == [(1, "a"), (2, "r2")]
    assert [(p.port, p.peer) for p in r2.ports] == [(1, "r1"), (2, "b"), (3, "c")]
    ports1 = {p.port: p for p in r1.config.router.ports}
    ports2 = {p.port: p for p in r2.config.router.ports}
    # r1 -> r2 is the link's forward direction, r2 -> r1 its reverse one
    assert (ports1[2].rate_bps, ports1[2].aqm.mode, ports1[2].queue_limit) == (10**7, "red", 68)
    assert (ports2[1].rate_bps, ports2[1].aqm.mode, ports2[1].queue_limit) == (
        2 * 10**7,
        "fifo",
        50,
    )
    assert ports1[2].rbcc_capacity == 10**7 * 95 // 100 // 8
    # routes: every host's /24, through the shortest path
    hops1 = {h.id: h for h in r1.config.router.next_hops}
    via1 = {(r.prefix >> 8) & 0xFF: hops1[r.next_hop].port for r in r1.config.router.routes}
    assert via1 == {1: 1, 2: 2, 3: 2}
    hops2 = {h.id: h for h in r2.config.router.next_hops}
    r2_routes = {(r.prefix >> 8) & 0xFF: hops2[r.next_hop] for r in r2.config.router.routes}
    assert r2_routes[1].port == 1 and r2_routes[1].mac == bytes.fromhex("020000000102")
    assert r2_routes[2].mac == bytes.fromhex("020000010002")  # host b's MAC
    # delays: r2 -> b carries both directions of the host link (a host adds none)
    assert link_delays(topo, r1) == {1: 2000, 2: 20000}
    assert link_delays(topo, r2) == {1: 20000, 2: 5000}
    assert host_shaping(topo, "b").rate_bps == 50 * 10**6
    assert host_shaping(topo, "c").rate_bps == 100 * 10**6
    assert topo.host_address("c") == ("10.0.3.1", "10.0.3.254")
    assert [f.name for f in topo.flows] == ["bulk", "f2", "f3", "f4"]


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.yaml")), ids=lambda p: p.stem)
def test_examples_are_valid(path: Path) -> None:
    for _, topo in load_variants(path):
        assert plan_routers(topo)


def test_variants(tmp_path: Path) -> None:
    path = tmp_path / "v.yaml"
    path.write_text(LINE + "variants:\n  big:\n    links[1].queue_limit: 300\n  red: {}\n")
    runs = load_variants(path)
    assert [name for name, _ in runs] == ["big", "red"]
    limits = [
        next(p for p in plan_routers(t)[0].config.router.ports if p.port == 2).queue_limit
        for _, t in runs
    ]
    assert limits == [300, 68]  # each variant from the file as written
    assert [n for n, _ in load_variants(path, only="red")] == ["red"]
    with pytest.raises(ConfigError, match="no variant 'blue' \\(the file has: big, red\\)"):
        load_variants(path, only="blue")
    path.write_text(LINE + "variants:\n  big:\n    links[7].rate: 1mbit\n")
    with pytest.raises(ConfigError, match=r"v.yaml:23:.*no list item \[7\]"):
        load_variants(path)


@pytest.mark.parametrize(
    ("edit", "where", "message"),
    [
        (("rate: 10mbit\n", "rate: fast\n"), "line.yaml:9:11", "links[1] (r1 -> r2).rate"),
        (("[r2, b]", "[r2, z]"), "line.yaml:14:", "'z' is neither a router nor a host"),
        (("[c, r2]", "[c, a]"), "line.yaml:15:", "hosts connect to routers"),
        (("aqm: red-hspa", "aqm: nonesuch"), "line.yaml:12:10", "links[1] (r1 -> r2).aqm"),
        (("cc: reno", "cc: reno, rate: x"), "line.yaml:17:", "flows[0].rate"),
        (("stop: 4s", "stop: 9s"), "line.yaml:17:", "start < stop <= 5 s"),
        (("pattern: onoff, on: 1s, off: 1s", "pattern: onoff"), "line.yaml:18:", "on and off"),
        (("transport: ping", "transport: quic"), "line.yaml:20:", "expected one of"),
        (("duration: 5s", "duration: 0s"), "line.yaml:1:", "above 0"),
        (("hosts: [a, b, c]", "hosts: [a, b, c, d]"), "line.yaml:5:", "exactly one link"),
        (
            ("cc: reno", "cc: nonesuch"),
            "line.yaml:17:",
            "not available in this kernel (available: ",
        ),
    ],
)
def test_bad_topologies_name_the_place(edit: tuple[str, str], where: str, message: str) -> None:
    old, new = edit
    assert old in LINE
    with pytest.raises(ConfigError) as info:
        plan_routers(parse_topology(LINE.replace(old, new, 1), "line.yaml"))
    text = str(info.value)
    assert text.startswith(where) and message in text and "\n" not in text


def test_overrides() -> None:
    topo = parse_topology(
        LINE, "line.yaml", ["links[1].queue_limit=30", "links[1].utilisation=0.5"]
    )
    r1 = plan_routers(topo)[0]
    port = next(p for p in r1.config.router.ports if p.port == 2)
    assert (port.queue_limit, port.rbcc_capacity) == (30, 10**7 // 2 // 8)
    for bad, message in [
        ("links[9].rate=1mbit", "no list item [9]"),
        ("nothing", "expected PATH=VALUE"),
        ("links..x=1", "expected a path"),
        ("routers.r9.rbcc.x=1", "no key 'r9'"),
        ("links[1].rate=", "expected PATH=VALUE"),
    ]:
        with pytest.raises(ConfigError, match=message.replace("[", r"\[")):
            parse_topology(LINE, "line.yaml", [bad])


def test_check_command(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "line.yaml"
    path.write_text(LINE)
    assert main(["check", str(path)]) == 0
    out = capsys.readouterr().out
    assert "r1 port 2 -> r2: 10 Mbit/s, 20 ms, queue 68, red-hspa" in out
    assert out.strip().endswith("ok: 2 routers, 3 hosts, 4 flows, 5 s")
    path.write_text(LINE.replace("rate: 10mbit", "rate: -3"))
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "links[1] (r1 -> r2).rate" in err and "Traceback" not in err
    assert main(["check", str(tmp_path / "missing.yaml")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_parse_ping() -> None:
    text = """PING 10.0.1.1 (10.0.1.1) 56(84) bytes of data.
[1700000000.100000] 64 bytes from 10.0.1.1: icmp_seq=1 ttl=63 time=41.2 ms
[1700000000.300000] 64 bytes from 10.0.1.1: icmp_seq=2 ttl=63 time=43.0 ms

--- 10.0.1.1 ping statistics ---
3 packets transmitted, 2 received, 33.3333% packet loss, time 402ms
"""
    samples, sent, received = parse_ping(text)
    assert (sent, received) == (3, 2)
    assert samples == [(0.0, 41.2), (pytest.approx(0.2), 43.0)]


def test_balance() -> None:
    def snap(drops: int) -> CounterSnapshot:
        return CounterSnapshot(0.0, {1: PortCounters(drop_red_early=drops)}, True)

    bal = balance(
        {"a": (10, 0), "b": (0, 5)},
        {"a": (110, 50), "b": (60, 95)},
        {"r1": snap(12)},
        {"r1": snap(2)},
    )
    assert (bal.host_tx, bal.host_rx, bal.router_drops) == (160, 140, 10)
    assert bal.unaccounted == 10 and bal.switch_losses is None

    # The switches' own losses account for the rest; a BMv2 router reports none.
    def ports(rx_drops: int, mtu_drops: int) -> dict[int, dict[str, int]]:
        return {1: {"rx_drops": rx_drops, "tx_packets": 99}, 2: {"mtu_drops": mtu_drops}}

    bal = balance(
        {"a": (10, 0), "b": (0, 5)},
        {"a": (110, 50), "b": (60, 95)},
        {"r1": snap(12)},
        {"r1": snap(2)},
        {"r1": ports(9, 4), "r2": None},
        {"r1": ports(1, 2), "r2": None},
    )
    assert (bal.switch_losses, bal.unaccounted) == (10, 0)
    assert switch_losses({"r2": None}, {"r2": None}) is None


def test_flows_become_host_commands(tmp_path: Path) -> None:
    topo = parse_topology(
        LINE.replace("pattern: onoff, on: 1s, off: 1s", "pattern: onoff, on: 1s, off: 2s")
        + "  - {name: vid, from: c, to: a, transport: tcp, cc: bbr,"
        + " pattern: stream, rate: 2mbit}\n",
        "line.yaml",
    )
    receivers, senders = plan_commands(topo, tmp_path)
    args = {c.label: c.args[3:] for c in [*receivers, *senders]}  # after python -m ratelab_hosts
    assert args["bulk sink"][:3] == ["tcp-sink", "--listen", "10.0.2.1:6000"]
    assert args["bulk"][:6] == ["tcp-send", "--dst", "10.0.2.1:6000", "--cc", "reno", "--pattern"]
    bulk = args["bulk"]
    assert bulk[bulk.index("--duration") + 1] == "3"  # stop - start
    assert args["f2"][:5] == ["udp-send", "--dst", "10.0.3.1:5001", "--rate", "1000000bit"]
    assert args["f2"][7:11] == ["--on", "1", "--off", "2"]
    assert args["vid"][5:9] == ["--pattern", "stream", "--rate", "2000000bit"]
    assert args["rbcc receiver on a"][:3] == ["rbcc-recv", "--listen", "10.0.1.1"]
    assert all(c.waits_ready for c in receivers) and not any(c.waits_ready for c in senders)
    ping = next(c for c in senders if c.label == "f4")
    assert ping.args == ["ping", "-D", "-n", "-i", "0.2", "-c", "25", "10.0.1.1"]
    assert ping.ping_out == tmp_path / "f4.ping.txt"


def _local(_host: str, args: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_traffic_run_fails_late_and_silent_commands(monkeypatch: pytest.MonkeyPatch) -> None:
    run = TrafficRun(_local)
    with pytest.raises(TrafficError, match="quiet sink did not start: oops"):
        run.start_receivers([Command("h", ["sh", "-c", "echo oops >&2"], "quiet sink", 0, True)])
    monkeypatch.setattr(traffic, "SENDER_GRACE_S", 0.2)
    with pytest.raises(TrafficError, match=r"slow did not finish within 0\.2 s"):
        run.run_senders([Command("h", ["sleep", "30"], "slow")], lambda _m: None)
    with pytest.raises(TrafficError, match=r"bad failed \(status 3\): broken"):
        run.run_senders([Command("h", ["sh", "-c", "echo broken >&2; exit 3"], "bad")], print)
    run.kill_all()
