"""Strict-priority queues in the configuration file: the keys, the classification
entries, the switch options, run-time diffs, what the compiled program and the
Verilog core accept, and every class of bad value at its place in the file."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from ctl_support import Compiled
from finsy.proto.p4.v1 import p4runtime_pb2
from hypothesis import given
from hypothesis import strategies as st
from p4rt_double import FakeServer
from ratelab_ctl.cli import main
from ratelab_ctl.configfile import ConfigError, PortPriority, load_config, parse_config
from ratelab_ctl.connection import SwitchConnection
from ratelab_ctl.controller import Controller, check_program
from ratelab_ctl.diff import diff_configs
from ratelab_ctl.entities import entry_from_pb
from ratelab_ctl.hdl_driver import core_writes
from ratelab_ctl.priority import (
    DST_PORT_TABLE,
    PRIORITY_TABLES,
    PROTOCOL_TABLE,
    SET_PRIORITY,
    SRC_PORT_TABLE,
    config_entries,
    priority_queues,
)
from ratelab_ctl.switch_options import switch_options
from ratelab_model.p4_entries import TableEntry, all_entries

BASE = """\
router_id: 10.0.0.1
ports:
  1: {mac: 02:00:00:00:00:01, rate: 1gbit, queue_limit: 64}
  3:
    mac: 02:00:00:00:00:03
    rate: 10mbit
    queue_limit: 200
    priority_queues: 3
    priority: {protocols: {icmp: 2, 17: 1}, ports: {80: 1, 5000-5002: 2}, dscp: {46: 2}}
next_hops:
  a: {port: 1, mac: 02:00:00:00:01:01}
  b: {port: 3, mac: 02:00:00:00:01:03}
routes:
  10.0.1.0/24: a
  10.0.3.0/24: b
"""
RULES = "    priority: {protocols: {icmp: 2, 17: 1}, ports: {80: 1, 5000-5002: 2}, dscp: {46: 2}}"


def error_of(text: str, overrides: tuple[str, ...] = ()) -> str:
    with pytest.raises(ConfigError) as info:
        parse_config(text, "r.yaml", overrides)
    return str(info.value)


def test_rules_are_read_into_the_port() -> None:
    cfg = parse_config(BASE, "r.yaml")
    assert cfg.priority == (
        PortPriority(
            3,
            3,
            protocols=((1, 2), (17, 1)),
            l4_ports=((80, 1), (5000, 2), (5001, 2), (5002, 2)),
            dscp=((46, 2),),
        ),
    )
    assert priority_queues(cfg) == {3: 3}


def test_entries_follow_the_models() -> None:
    cfg = parse_config(BASE, "r.yaml")
    entries = config_entries(cfg)
    model = all_entries(cfg.router)
    assert entries[: len(model)] == model
    extra = entries[len(model) :]
    assert {e.table for e in extra} == set(PRIORITY_TABLES)
    assert TableEntry(PROTOCOL_TABLE, (3, 1), SET_PRIORITY, (2,)) in extra
    # a port matches as source or destination
    for table in (SRC_PORT_TABLE, DST_PORT_TABLE):
        assert TableEntry(table, (3, 80), SET_PRIORITY, (1,)) in extra
        assert TableEntry(table, (3, 5001), SET_PRIORITY, (2,)) in extra
    assert len(extra) == 2 + 1 + 2 * 4


def test_no_priority_keys_no_entries_no_options() -> None:
    plain = BASE.replace("    priority_queues: 3\n", "").replace(RULES + "\n", "")
    cfg = parse_config(plain, "r.yaml")
    assert cfg.priority == () and config_entries(cfg) == all_entries(cfg.router)
    assert "--priority-queues" not in switch_options(cfg.router, priority_queues(cfg))


def test_queues_without_rules() -> None:
    cfg = parse_config(BASE.replace(RULES + "\n", ""), "r.yaml")
    assert cfg.priority == (PortPriority(3, 3),)
    assert config_entries(cfg) == all_entries(cfg.router)
    opts = switch_options(cfg.router, priority_queues(cfg))
    assert opts[-2:] == ["--priority-queues", "3=3"]
    one = parse_config(BASE.replace(RULES + "\n", "").replace("queues: 3", "queues: 1"), "r.yaml")
    assert priority_queues(one) == {}


def test_a_changed_rule_is_a_minimal_diff() -> None:
    old = parse_config(BASE, "r.yaml")
    new = parse_config(BASE, "r.yaml", ("ports.3.priority.protocols.icmp=1",))
    changes = diff_configs(old, new)
    assert [(c.kind, c.entry) for c in changes] == [
        ("modify", TableEntry(PROTOCOL_TABLE, (3, 1), SET_PRIORITY, (1,)))
    ]
    gone = parse_config(BASE, "r.yaml", ("ports.3.priority.ports=~",))
    kinds = {c.kind for c in diff_configs(old, gone)}
    assert kinds == {"delete"} and len(diff_configs(old, gone)) == 8


def test_the_compiled_program_holds_the_rules(compiled: Compiled) -> None:
    check_program(parse_config(BASE, "r.yaml"), compiled.schema)
    many = BASE.replace("5000-5002", "5000-6099")
    with pytest.raises(ConfigError, match=r"need 1101 entries in .*priority_src_port"):
        check_program(parse_config(many, "r.yaml"), compiled.schema)


def test_the_verilog_core_refuses_priority_queues() -> None:
    message = (
        "r.yaml:8:22: error: ports.3.priority_queues: the Verilog core has one queue "
        "per port, no strict-priority queues"
    )
    with pytest.raises(ConfigError) as info:
        core_writes(parse_config(BASE, "r.yaml"))
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("override", "message"),
    [
        (
            "ports.3.priority_queues=9",
            "<command line>:1:25: error: ports.3.priority_queues: expected a number of "
            "strict-priority queues in 1..8, got 9",
        ),
        (
            "ports.3.priority_queues=two",
            "<command line>:1:25: error: ports.3.priority_queues: expected a number of "
            "strict-priority queues in 1..8, got 'two'",
        ),
        (
            "ports.3.priority.protocols.icmp=3",
            "<command line>:1:33: error: ports.3.priority.protocols.icmp: expected a priority "
            "(priority_queues is 3; 0 is every other packet's) in 1..2, got 3",
        ),
        (
            "ports.3.priority.protocols.icmp=0",
            "<command line>:1:33: error: ports.3.priority.protocols.icmp: expected a priority "
            "(priority_queues is 3; 0 is every other packet's) in 1..2, got 0",
        ),
        (
            "ports.3.priority.protocols.icnp=1",
            "<command line>:1:33: error: ports.3.priority.protocols.icnp: expected an IPv4 "
            "protocol (icmp, tcp, udp, rbcc) or a number in 0..255, got 'icnp'",
        ),
        (
            "ports.3.priority.protocols.1=1",
            "<command line>:1:30: error: ports.3.priority.protocols.1: 1 is already given by "
            "ports.3.priority.protocols.icmp",
        ),
        (
            "ports.3.priority.ports.79-81=1",
            "<command line>:1:30: error: ports.3.priority.ports.79-81: 80 is already given by "
            "ports.3.priority.ports.80",
        ),
        (
            "ports.3.priority.ports.0=1",
            "<command line>:1:26: error: ports.3.priority.ports.0: expected a TCP/UDP port "
            "(or LOW-HIGH) in 1..65535, got 0",
        ),
        (
            "ports.3.priority.ports.90-70=1",
            "<command line>:1:30: error: ports.3.priority.ports.90-70: expected a port range "
            "LOW-HIGH in 1..65535, got '90-70'",
        ),
        (
            "ports.3.priority.dscp.64=1",
            "<command line>:1:26: error: ports.3.priority.dscp.64: expected a DSCP in 0..63, "
            "got 64",
        ),
        (
            "ports.3.priority.ttl={1: 1}",
            "<command line>:1:22: error: ports.3.priority.ttl: unknown key; expected one of: "
            "protocols, ports, dscp",
        ),
        (
            "ports.3.priority=[icmp]",
            "<command line>:1:18: error: ports.3.priority: expected a mapping of "
            "classification rules, got a list",
        ),
        (
            "ports.3.priority.dscp=[46]",
            "<command line>:1:23: error: ports.3.priority.dscp: expected a mapping of DSCP "
            "(0..63) to priority, got a list",
        ),
        (
            "ports.3.priority_queues=~",
            "r.yaml:9:15: error: ports.3.priority: needs priority_queues (2..8) beside it to put "
            "packets in",
        ),
        (
            "ports.3.priority_queues=1",
            "r.yaml:9:15: error: ports.3.priority: needs priority_queues of 2 or more, got 1",
        ),
    ],
)
def test_bad_values(override: str, message: str) -> None:
    assert error_of(BASE, (override,)) == message


def test_pushed_read_back_and_changed_over_p4runtime(
    fake_switch: FakeServer, compiled: Compiled, tmp_path: Path
) -> None:
    """push sends the rules with the model's entries; reading them back from the
    switch leaves nothing to reconcile; a changed rule is one MODIFY."""
    path = tmp_path / "r.yaml"
    path.write_text(BASE)
    conn = SwitchConnection(fake_switch.address, timeout=5).open()
    try:
        ctl = Controller(conn)
        ctl.push_pipeline(compiled.json, compiled.p4info)
        cfg = load_config(path)
        ctl.apply_config(cfg)
        fake = fake_switch.servicer
        sent = [entry_from_pb(compiled.schema, u.entity.table_entry) for u in fake.updates()]
        assert sent == config_entries(cfg)
        assert ctl.reconcile(cfg) == []
        before = len(fake.writes)
        ctl.reconcile(load_config(path, ["ports.3.priority.dscp.46=1"]))
        (write,) = fake.writes[before:]
        (update,) = write.updates
        assert update.type == p4runtime_pb2.Update.MODIFY
        assert entry_from_pb(compiled.schema, update.entity.table_entry) == TableEntry(
            "RouterIngress.classify.priority_dscp", (3, 46), SET_PRIORITY, (1,)
        )
    finally:
        conn.close()


# Values of every YAML type for the priority keys, and the edges of their ranges.
_RULE_KEYS = st.one_of(
    st.integers(-2, 70000),
    st.sampled_from(["icmp", "tcp", "udp", "rbcc", "icnp", "1-3", "3-1", "0-5", "65535-65536"]),
    st.sampled_from(["80-90", "1 - 2", "0x50", "-", "", "1e3", "x"]),
    st.text(max_size=6),
)
_LEVELS = st.one_of(
    st.integers(-1, 9), st.none(), st.booleans(), st.text(max_size=3), st.lists(st.integers())
)
_RULES = st.dictionaries(
    st.sampled_from(["protocols", "ports", "dscp", "flows"]),
    st.one_of(st.dictionaries(_RULE_KEYS, _LEVELS, max_size=4), _LEVELS),
    max_size=3,
)


@given(
    queues=st.one_of(st.integers(-1, 10), st.none(), st.text(max_size=3)),
    rules=st.one_of(_RULES, _LEVELS),
)
def test_any_priority_value_is_accepted_or_one_line(queues: object, rules: object) -> None:
    """Accepted (then every entry's priority fits the queues and no key repeats)
    or refused with one `file:line:col: error:` line."""
    text = BASE.replace("    priority_queues: 3\n", "").replace(RULES + "\n", "")
    port = yaml.safe_dump({"priority_queues": queues, "priority": rules}, width=1000)
    text = text.replace("    queue_limit: 200\n", "    queue_limit: 200\n" + _indent(port))
    try:
        cfg = parse_config(text, "r.yaml")
    except ConfigError as e:
        message = str(e)
        assert "\n" not in message and message.startswith("r.yaml:"), message
        assert ": error: " in message, message
        return
    for p in cfg.priority:
        assert 1 <= p.queues <= 8
        levels = [lv for _, lv in (*p.protocols, *p.l4_ports, *p.dscp)]
        assert all(1 <= lv < p.queues for lv in levels)
    entries = config_entries(cfg)
    assert len({(e.table, e.key) for e in entries}) == len(entries)


def _indent(text: str) -> str:
    return "".join(f"    {line}\n" for line in text.splitlines())


def test_set_notes_a_changed_queue_count(
    capsys: pytest.CaptureFixture[str], fake_switch: FakeServer, compiled: Compiled, tmp_path: Path
) -> None:
    path = tmp_path / "r.yaml"
    path.write_text(BASE)
    push = ["push", "--addr", fake_switch.address, "--json", str(compiled.json)]
    assert main([*push, "--p4info", str(compiled.p4info), str(path)]) == 0
    capsys.readouterr()
    assert main(["set", "--addr", fake_switch.address, str(path), "ports.3.priority_queues=4"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-2:] == [
        "note: port 3: 4 priority queue(s) is the switch's setting, made when it starts "
        "(--priority-queues, see `ratelab-ctl switch-args`): restart the switch for it; the "
        "classification rules are written now",
        f"{fake_switch.address}: no change",
    ]
    # a rule alone needs no note
    assert (
        main(["set", "--addr", fake_switch.address, str(path), "ports.3.priority.dscp.46=1"]) == 0
    )
    assert "note:" not in capsys.readouterr().out
