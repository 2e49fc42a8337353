"""ratelab-switch-cli: simple_switch_CLI commands carried over P4Runtime."""

from __future__ import annotations

import io
import json
import re
import socket
from pathlib import Path

import grpc
import pytest
from finsy.proto.p4.v1.p4runtime_pb2_grpc import P4RuntimeStub
from ratelab_p4info import MatchKind
from ratelab_switch.cli import CliError, main, parse_value
from ratelab_switch.engine_api import ActionCall, CounterValue, KeyField, MeterConfig, Replica
from ratelab_switch.options import QueueRate
from ratelab_switch.port_settings import PORT_STATS_FIELDS, PortConfig
from ratelab_switch.server import P4RuntimeServer
from switch_client import INSERT, StreamClient, lpm_entry, write
from switch_fake_engine import FakeEngine


def test_values() -> None:
    assert parse_value("10.0.0.1", 32, "x") == 0x0A000001
    assert parse_value("00:11:22:33:44:55", 48, "x") == 0x001122334455
    assert parse_value("0x1ff", 9, "x") == 511
    with pytest.raises(CliError, match="does not fit in 9 bits"):
        parse_value("512", 9, "port")
    with pytest.raises(CliError, match="cannot read"):
        parse_value("ten", 9, "port")


COMMANDS = """\
# a runtime commands file, as the P4 tutorials write them
table_add ingress.ipv4_lpm set_nhop 10.0.1.0/24 => 3 00:11:22:33:44:55
table_add acl ingress.drop 0x0800&&&0xffff 80->443 5 => 10
table_set_default ipv4_lpm NoAction
mc_mgrp_create 1
mc_node_create 7 1 2
mc_node_associate 1 0
mirroring_add 5 6
register_write ingress.last_seen 2 258
register_read ingress.last_seen 2
counter_read port_pkts 3
table_num_entries ipv4_lpm
"""


def test_a_commands_file_programs_the_switch(
    server: P4RuntimeServer,
    stub: P4RuntimeStub,
    primary: StreamClient,
    engine: FakeEngine,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    engine.counters[("ingress.port_pkts", 3)] = CounterValue(4, 400)
    path = tmp_path / "s1-commands.txt"
    path.write_text(COMMANDS)
    assert main([str(path), "--grpc-addr", f"127.0.0.1:{server.port}", "--device-id", "1"]) == 0
    out = capsys.readouterr().out
    [lpm] = engine.tables["ingress.ipv4_lpm"].values()
    assert lpm.key == (KeyField(MatchKind.LPM, 0x0A000100, prefix_len=24),)
    assert lpm.action == ActionCall("ingress.set_nhop", (3, 0x001122334455))
    [acl] = engine.tables["ingress.acl"].values()
    assert acl.key[0] == KeyField(MatchKind.TERNARY, 0x0800, mask=0xFFFF)
    assert acl.key[1] == KeyField(MatchKind.RANGE, 80, high=443)
    assert acl.key[2] == KeyField(MatchKind.OPTIONAL, 5, mask=0x1FF)
    assert acl.priority == (1 << 31) - 1 - 10  # BMv2's "smaller wins" turned around
    assert engine.defaults["ingress.ipv4_lpm"].name == "NoAction"
    assert engine.mc_groups[1] == (Replica(1, 7), Replica(2, 7))
    assert engine.clone_sessions[5][0] == (Replica(6, 0),)
    assert engine.registers[("ingress.last_seen", 2)] == 258
    assert "ingress.last_seen[2]= 258" in out
    assert "BmCounterValue(packets=4, bytes=400)" in out
    assert out.rstrip().endswith("1")  # table_num_entries
    # The CLI used its own role: the default role's primary still writes.
    write(stub, (INSERT, lpm_entry(0x0B000000, 8)))


def test_bad_lines_are_reported_and_the_rest_still_runs(
    server: P4RuntimeServer,
    primary: StreamClient,
    engine: FakeEngine,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / "cmds.txt"
    path.write_text(
        "table_add ipv4_lpm set_nhop 10.0.1.0/24 => 600 00:00:00:00:00:01\n"
        "frobnicate\n"
        "table_add ipv4_lpm ingress.drop 10.0.2.0/24 =>\n"
        "table_add ipv4_lpm ingress.drop 10.0.2.0/24 =>\n"
    )
    assert main([str(path), "--grpc-addr", f"127.0.0.1:{server.port}", "--device-id", "1"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("Error (line 1): parameter port: 600 does not fit in 9 bits")
    assert err[1] == "Error (line 2): unknown or unsupported command 'frobnicate'"
    assert err[2].startswith("Error (line 4): ALREADY_EXISTS: table ingress.ipv4_lpm")
    assert len(err) == 3
    assert len(engine.tables["ingress.ipv4_lpm"]) == 1


def test_no_pipeline_or_no_switch_is_one_clear_line(
    server: P4RuntimeServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("table_num_entries ipv4_lpm\n"))
    # No pipeline: the CLI turns to the switch's Thrift server, and none answers here.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed_port = s.getsockname()[1]
    args = ["--grpc-addr", f"127.0.0.1:{server.port}", "--device-id", "1"]
    assert main([*args, "--thrift-port", str(closed_port)]) == 1
    err = capsys.readouterr().err
    assert err == (
        "ratelab-switch-cli: error: the switch has no P4Runtime pipeline config yet, "
        f"and no Thrift server answers on 127.0.0.1:{closed_port}\n"
    )


def _run(server: P4RuntimeServer, tmp_path: Path, text: str) -> int:
    path = tmp_path / "cmds.txt"
    path.write_text(text)
    return main([str(path), "--grpc-addr", f"127.0.0.1:{server.port}", "--device-id", "1"])


def test_entries_by_handle_dump_modify_delete_clear(
    server: P4RuntimeServer,
    primary: StreamClient,
    engine: FakeEngine,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert (
        _run(
            server,
            tmp_path,
            "table_add ipv4_lpm set_nhop 10.0.1.0/24 => 3 00:00:00:00:00:01\n"
            "table_add ipv4_lpm set_nhop 10.0.2.0/24 => 4 00:00:00:00:00:01\n",
        )
        == 0
    )
    out = capsys.readouterr().out.splitlines()
    handles = sorted(engine.tables["ingress.ipv4_lpm"])
    assert out == [f"Entry added to ingress.ipv4_lpm with handle {h}" for h in handles]
    first, second = handles
    assert (
        _run(server, tmp_path, f"table_modify ipv4_lpm set_nhop {second} 7 00:00:00:00:00:02\n")
        == 0
    )
    assert engine.tables["ingress.ipv4_lpm"][second].action == ActionCall(
        "ingress.set_nhop", (7, 2)
    )
    capsys.readouterr()
    assert _run(server, tmp_path, "table_dump ipv4_lpm\n") == 0
    dump = capsys.readouterr().out
    assert f"Dumping entry {hex(first)}" in dump and "0a000100/24" in dump
    assert "Action entry: ingress.set_nhop - 07, 02" in dump
    assert "Dumping default entry\nAction entry: ingress.drop - " in dump
    assert _run(server, tmp_path, f"table_delete ipv4_lpm {first}\n") == 0
    assert list(engine.tables["ingress.ipv4_lpm"]) == [second]
    assert _run(server, tmp_path, "table_clear ipv4_lpm\n") == 0
    assert engine.tables["ingress.ipv4_lpm"] == {}


def test_bad_handles_and_arguments_change_nothing(
    server: P4RuntimeServer,
    primary: StreamClient,
    engine: FakeEngine,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert _run(server, tmp_path, "table_add ipv4_lpm set_nhop 10.0.1.0/24 => 3 0\n") == 0
    [handle] = engine.tables["ingress.ipv4_lpm"]
    capsys.readouterr()
    assert (
        _run(
            server,
            tmp_path,
            f"table_delete ipv4_lpm {handle + 100}\n"
            f"table_modify ipv4_lpm set_nhop {handle} 600 0\n"
            f"table_modify ipv4_lpm nope {handle}\n"
            "table_dump\n"
            "meter_set_rates port_meter 0 0.5:10 0.25:10\n"
            "meter_set_rates port_meter 0 0.5-10 1:10\n"
            "register_reset nope\n",
        )
        == 1
    )
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"Error (line 1): table ingress.ipv4_lpm has no entry with handle {handle + 100}",
        "Error (line 2): parameter port: 600 does not fit in 9 bits",
        "Error (line 3): table ingress.ipv4_lpm has no action 'nope'",
        "Error (line 4): usage: table_dump TABLE",
        "Error (line 5): the committed rate (first) must not exceed the peak rate",
        "Error (line 6): cannot read '0.5-10' as RATE:BURST (units per µs : units)",
        "Error (line 7): no register 'nope'",
    ]
    assert engine.tables["ingress.ipv4_lpm"][handle].action == ActionCall(
        "ingress.set_nhop", (3, 0)
    )
    assert engine.meters == {}


def test_registers_meters_and_the_program_listing(
    server: P4RuntimeServer,
    primary: StreamClient,
    engine: FakeEngine,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    engine.registers[("ingress.last_seen", 1)] = 5
    text = (
        "register_reset last_seen\n"
        "meter_set_rates port_meter 2 0.5:1000 1:2000\n"
        "show_tables\n"
        "show_actions\n"
    )
    assert _run(server, tmp_path, text) == 0
    assert engine.registers[("ingress.last_seen", 1)] == 0
    assert engine.meters[("ingress.port_meter", 2)] == MeterConfig(500_000, 1000, 1_000_000, 2000)
    out = capsys.readouterr().out
    assert "ingress.ipv4_lpm" in out and "mk=ingress.ipv4_lpm" not in out
    assert re.search(r"^ingress\.ipv4_lpm +\[implementation=None, mk=.*\(lpm, 32\)\]$", out, re.M)
    assert re.search(r"^ingress\.set_nhop +\[port\(9\),\t\w+\(48\)\]$", out, re.M)


def test_queue_and_link_settings(
    server: P4RuntimeServer,
    engine: FakeEngine,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # No pipeline yet: port commands alone do not need one.
    text = (
        "set_queue_depth 128\n"
        "set_queue_depth 16 3\n"
        "set_queue_rate 1000 3\n"
        "set_queue_rate 10mbit\n"
        "set_link_delay 3 20ms\n"
        "set_link_delay 4 1.5s\n"
        "set_link_delay 4 0\n"
        "show_ports\n"
    )
    assert _run(server, tmp_path, text) == 0
    default, ports = engine.port_settings()
    # A setting for every port replaces the per-port ones of that field.
    assert default == PortConfig(128, QueueRate(10_000_000, "bps"), 0)
    assert ports == {
        3: PortConfig(16, QueueRate(10_000_000, "bps"), 20_000),
        4: PortConfig(128, QueueRate(10_000_000, "bps"), 0),
    }
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "queue depth of every port set to 128"
    assert out[-2].split() == ["3", "16", "10000000bit", "20000", "0"]


def test_port_stats_lists_ports_with_interfaces_or_settings(
    server: P4RuntimeServer,
    engine: FakeEngine,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    engine.interfaces = {1: "veth1", 2: "veth2"}
    assert _run(server, tmp_path, "set_queue_depth 16 5\nport_stats\nport_stats 2\n") == 0
    out = capsys.readouterr().out.splitlines()
    header = out[1].split()
    assert header == ["port", "iface", *PORT_STATS_FIELDS]
    rows = [line.split() for line in out[2:5]]
    # The fake engine counts port * 100 + the field's position.
    assert rows[0] == ["1", "veth1", *(str(100 + i) for i in range(len(PORT_STATS_FIELDS)))]
    assert [r[:2] for r in rows] == [["1", "veth1"], ["2", "veth2"], ["5", "-"]]
    assert out[6].split()[:3] == ["2", "veth2", "200"]
    assert len(out) == 7


def test_bad_port_stats_requests(
    server: P4RuntimeServer, engine: FakeEngine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(server, tmp_path, "port_stats 1 2\nport_stats 512\n") != 0
    assert capsys.readouterr().err.splitlines() == [
        "Error (line 1): usage: port_stats [PORT]",
        "Error (line 2): port: 512 does not fit in 9 bits",
    ]
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as ch:
        call = ch.unary_unary("/ratelab.SwitchTarget/GetPortStats")
        with pytest.raises(grpc.RpcError) as e:
            call(b'{"device_id": 1, "port": 600}')
        assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT  # type: ignore[attr-defined]
        assert "port 600 is out of range" in e.value.details()  # type: ignore[attr-defined]
        with pytest.raises(grpc.RpcError) as e:
            call(b'{"device_id": 2}')
        assert e.value.code() == grpc.StatusCode.NOT_FOUND  # type: ignore[attr-defined]


def test_bad_queue_and_link_settings_change_nothing(
    server: P4RuntimeServer,
    engine: FakeEngine,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    text = (
        "set_queue_depth 0 3\n"
        "set_queue_depth 16 512\n"
        "set_queue_rate fast 3\n"
        "set_queue_rate 0 3\n"
        "set_link_delay 3 20 ms\n"
        "set_link_delay 3 -5ms\n"
        "set_link_delay 3 2h\n"
        "set_link_delay 3 4000s\n"
        "set_link_delay 3\n"
    )
    assert _run(server, tmp_path, text) == 1
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "Error (line 1): INVALID_ARGUMENT: depth 0 is out of range (1..2147483648)",
        "Error (line 2): port: 512 does not fit in 9 bits",
        "Error (line 3): rate: 'fast' is not a rate like 10mbit, 1000pps or unlimited",
        "Error (line 4): rate: '0pps' must be above zero (or unlimited)",
        "Error (line 5): usage: set_link_delay EGRESS_PORT DELAY",
        "Error (line 6): delay: '-5ms' is not a delay like 20ms, 500us, 1.5s or 100",
        "Error (line 7): delay: '2h' is not a delay like 20ms, 500us, 1.5s or 100",
        "Error (line 8): delay: '4000s' is above an hour",
        "Error (line 9): usage: set_link_delay EGRESS_PORT DELAY",
    ]
    assert engine.port_settings() == (PortConfig(), {})


def test_the_service_refuses_bad_bodies_with_invalid_argument(
    server: P4RuntimeServer, engine: FakeEngine
) -> None:
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as ch:

        def call(method: str, body: bytes) -> grpc.StatusCode:
            try:
                ch.unary_unary(f"/ratelab.SwitchTarget/{method}")(body)
            except grpc.RpcError as e:
                return e.code()  # type: ignore[attr-defined,no-any-return]
            return grpc.StatusCode.OK

        assert call("SetQueueDepth", b"not json") == grpc.StatusCode.INVALID_ARGUMENT
        assert call("SetQueueDepth", b'{"device_id": 1, "depth": "8"}') == (
            grpc.StatusCode.INVALID_ARGUMENT
        )
        assert call("SetQueueDepth", b'{"device_id": 2, "depth": 8}') == grpc.StatusCode.NOT_FOUND
        assert call("SetLinkDelay", b'{"device_id": 1, "port": 1, "delay": true}') == (
            grpc.StatusCode.INVALID_ARGUMENT
        )
        assert call("SetLinkDelay", b'{"device_id": 1, "port": 1, "delay": "5ms"}') == (
            grpc.StatusCode.OK
        )
        got = json.loads(
            ch.unary_unary("/ratelab.SwitchTarget/GetPortSettings")(b'{"device_id": 1}')
        )
    assert got["ports"] == [
        {
            "port": 1,
            "queue_depth": 64,
            "queue_rate": "unlimited",
            "link_delay_us": 5000,
            "in_flight": 0,
        }
    ]
    assert engine.port_settings()[1] == {1: PortConfig(link_delay_us=5000)}
