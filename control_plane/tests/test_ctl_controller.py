"""The controller against the in-process P4Runtime test double: what it sends."""

from __future__ import annotations

from pathlib import Path

import pytest
from ctl_support import Compiled
from finsy.proto.p4.v1 import p4runtime_pb2
from p4rt_double import FakeP4Runtime, FakeServer
from ratelab_ctl.configfile import load_config
from ratelab_ctl.connection import SwitchConnection, SwitchError, WriteError
from ratelab_ctl.controller import Controller
from ratelab_ctl.counters import COUNTER_OBJECTS
from ratelab_ctl.entities import entry_from_pb
from ratelab_model.p4_entries import all_entries
from ratelab_p4info import Schema


def pushed(server: FakeServer, compiled: Compiled, example: Path) -> Controller:
    conn = SwitchConnection(server.address, timeout=5).open()
    ctl = Controller(conn)
    ctl.push_pipeline(compiled.json, compiled.p4info)
    ctl.apply_config(load_config(example))
    return ctl


def test_push_and_apply_send_exactly_the_model_entries(
    fake_switch: FakeServer, compiled: Compiled, example_path: Path
) -> None:
    ctl = pushed(fake_switch, compiled, example_path)
    try:
        fake = fake_switch.servicer
        (push,) = fake.pipelines
        assert push.action == p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT
        assert push.config.p4_device_config == compiled.json.read_bytes()
        assert push.config.p4info == compiled.schema.p4info
        assert (push.election_id.high, push.election_id.low) == (0, 1)
        updates = fake.updates()
        sent = [entry_from_pb(compiled.schema, u.entity.table_entry) for u in updates]
        assert sent == all_entries(load_config(example_path).router)
        assert updates[0].type == p4runtime_pb2.Update.MODIFY  # the router_config default
        assert all(u.type == p4runtime_pb2.Update.INSERT for u in updates[1:])
        assert all(len(w.updates) <= 1000 for w in fake.writes)
        # read back from the switch: the same entries, so nothing to reconcile
        assert sorted(map(repr, ctl.installed_entries())) == sorted(map(repr, sent))
        assert ctl.reconcile(load_config(example_path)) == []
        assert ctl.configured_ports() == [1, 2, 3]
    finally:
        ctl.conn.close()


def test_update_writes_only_the_difference(
    fake_switch: FakeServer, compiled: Compiled, example_path: Path
) -> None:
    ctl = pushed(fake_switch, compiled, example_path)
    try:
        fake = fake_switch.servicer
        before = len(fake.writes)
        old = load_config(example_path)
        new = load_config(example_path, ["ports.1.utilisation=0.5"])
        ctl.update(old, new)
        (write,) = fake.writes[before:]
        (u,) = write.updates
        assert u.type == p4runtime_pb2.Update.MODIFY
        e = entry_from_pb(compiled.schema, u.entity.table_entry)
        assert (e.table, e.key, e.params[1]) == ("RouterIngress.port_config", (1,), 62_500_000)
        # a reconcile from the switch's state to a new preset: deletes before modifies
        n = len(fake.writes)
        changes = ctl.reconcile(load_config(example_path, ["ports.3.aqm=redok-edge"]))
        kinds = [
            [u.type for u in w.updates] for w in fake.writes[n:]
        ]  # one write per kind, in order
        assert [k[0] for k in kinds] == [p4runtime_pb2.Update.DELETE, p4runtime_pb2.Update.MODIFY]
        assert sum(len(k) for k in kinds) == len(changes)
        assert ctl.reconcile(load_config(example_path, ["ports.3.aqm=redok-edge"])) == []
    finally:
        ctl.conn.close()


def test_counters_snapshot(fake_switch: FakeServer, compiled: Compiled, example_path: Path) -> None:
    ctl = pushed(fake_switch, compiled, example_path)
    try:
        s = compiled.schema
        fake = fake_switch.servicer
        fake.counters[s.counters["RouterEgress.port_out"].id, 3] = (7, 10_500)
        fake.counters[s.counters["RouterIngress.admission.drop_red_early"].id, 3] = (2, 0)
        fake.counters[s.counters["RouterIngress.packets_in"].id, 1] = (9, 999)
        fake.counters[s.counters["RouterIngress.rbcc.abt_hits"].id, 5] = (1, 0)  # not configured
        fake.registers[s.registers["RouterIngress.admission.last_q"].id, 3] = 4
        fake.registers[s.registers["RouterIngress.admission.last_avg"].id, 3] = 0x30000
        snap = ctl.read_counters()
        assert snap.gauges and list(snap.ports) == [1, 2, 3]
        p3 = snap.ports[3]
        assert (p3.packets_out, p3.bytes_out, p3.drop_red_early) == (7, 10_500, 2)
        assert (p3.last_q, p3.last_avg) == (4, 0x30000)
        assert snap.ports[1].packets_in == 9
        assert all(v == 0 for v in snap.ports[2].as_dict().values())
        # one read for all 16 counters, wildcard index
        counter_reads = [r for r in fake.reads if r.entities[0].HasField("counter_entry")]
        assert len(counter_reads[-1].entities) == len({o for o, _ in COUNTER_OBJECTS.values()})
        assert not counter_reads[-1].entities[0].counter_entry.HasField("index")
        assert list(ctl.read_counters([5]).ports[5].as_dict().values()).count(1) == 1
    finally:
        ctl.conn.close()


def test_bmv2_like_target_without_registers(compiled: Compiled, example_path: Path) -> None:
    with FakeServer(FakeP4Runtime(serve_registers=False)) as server:
        ctl = pushed(server, compiled, example_path)
        try:
            snap = ctl.read_counters()
            assert not snap.gauges
            n = len(server.servicer.reads)
            ctl.read_counters()  # does not ask for registers again
            assert len(server.servicer.reads) == n + 2  # port_config + counters
        finally:
            ctl.conn.close()


def test_write_errors_are_decoded(
    fake_switch: FakeServer, compiled: Compiled, example_path: Path
) -> None:
    ctl = pushed(fake_switch, compiled, example_path)
    try:
        with pytest.raises(WriteError) as info:
            ctl.apply_config(load_config(example_path))  # everything exists already
        err = info.value
        assert str(err).startswith(
            "write failed: insert RouterIngress.ipv4_lpm 10.0.1.0/24: ALREADY_EXISTS: entry exists "
            "(and "
        )
        assert err.errors[0].index == 0 and err.errors[0].code == "ALREADY_EXISTS"
    finally:
        ctl.conn.close()


def test_arbitration_and_schema_from_the_switch(
    fake_switch: FakeServer, compiled: Compiled, example_path: Path
) -> None:
    ctl = pushed(fake_switch, compiled, example_path)
    ctl.conn.close()
    high = SwitchConnection(fake_switch.address, election_id=5, timeout=5).open()
    try:
        with pytest.raises(SwitchError, match="not the primary controller of device 0"):
            SwitchConnection(fake_switch.address, election_id=2, timeout=5).open()
        # the P4Info is fetched from the switch when none is given
        assert Controller(high).schema.p4info == Schema.load(compiled.p4info).p4info
        reader = SwitchConnection(fake_switch.address, election_id=2, timeout=5).open(
            arbitrate=False
        )
        with reader:
            assert Controller(reader).configured_ports() == [1, 2, 3]
            assert not reader.is_primary
    finally:
        high.close()


def test_unreachable_switch() -> None:
    with pytest.raises(SwitchError) as info:
        SwitchConnection("127.0.0.1:1", timeout=0.3).open()
    assert str(info.value) == "cannot reach the switch at 127.0.0.1:1 (no answer in 0.3 s)"
