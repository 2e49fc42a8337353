"""ratelab-switch-cli: simple_switch_CLI commands carried over P4Runtime."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from finsy.proto.p4.v1.p4runtime_pb2_grpc import P4RuntimeStub
from ratelab_switch.cli import CliError, main, parse_value
from ratelab_switch.engine_api import ActionCall, CounterValue, KeyField, Replica
from ratelab_switch.schema import MatchKind
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
    assert main(["--grpc-addr", f"127.0.0.1:{server.port}", "--device-id", "1"]) == 1
    err = capsys.readouterr().err
    assert err == "ratelab-switch-cli: error: the switch has no P4Runtime pipeline config yet\n"
