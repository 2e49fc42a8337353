"""SetForwardingPipelineConfig / GetForwardingPipelineConfig / Capabilities."""

from __future__ import annotations

import grpc
import pytest
from finsy.proto.p4.config.v1 import p4info_pb2 as p4i
from finsy.proto.p4.v1 import p4runtime_pb2 as p4r
from finsy.proto.p4.v1.p4runtime_pb2_grpc import P4RuntimeStub
from ratelab_switch.arbitration import to_uint128
from ratelab_switch.device_config import wrap_device_config
from switch_client import DELETE, INSERT, MODIFY, StreamClient, lpm_entry, read, write
from switch_fake_engine import FakeEngine
from switch_program import (
    A_NOACTION,
    A_SET_NHOP,
    T_LPM,
    bmv2_json,
    ecmp_entry,
    group,
    member,
    p4info,
)

Action = p4r.SetForwardingPipelineConfigRequest
Resp = p4r.GetForwardingPipelineConfigRequest


def _set(
    stub: P4RuntimeStub,
    action: int,
    *,
    device_config: bytes | None = None,
    cookie: int | None = None,
    with_config: bool = True,
    election_id: int = 10,
) -> None:
    req = Action(device_id=1, election_id=to_uint128(election_id), action=action)
    if with_config:
        req.config.p4info.CopyFrom(p4info())
        req.config.p4_device_config = bmv2_json() if device_config is None else device_config
        if cookie is not None:
            req.config.cookie.cookie = cookie
    stub.SetForwardingPipelineConfig(req)


def _get(stub: P4RuntimeStub, kind: int = Resp.ALL) -> p4r.ForwardingPipelineConfig:
    return stub.GetForwardingPipelineConfig(Resp(device_id=1, response_type=kind)).config


def _arbitrated(stub: P4RuntimeStub, streams: list[StreamClient]) -> StreamClient:
    s = StreamClient(stub)
    streams.append(s)
    s.arbitrate(10)
    s.get()
    return s


def test_capabilities(stub: P4RuntimeStub) -> None:
    assert stub.Capabilities(p4r.CapabilitiesRequest()).p4runtime_api_version.startswith("1.")


def test_get_before_set_answers_without_config(stub: P4RuntimeStub) -> None:
    reply = stub.GetForwardingPipelineConfig(Resp(device_id=1))
    assert not reply.HasField("config")
    with pytest.raises(grpc.RpcError) as e:
        stub.GetForwardingPipelineConfig(Resp(device_id=2))
    assert e.value.code() == grpc.StatusCode.NOT_FOUND


def test_get_response_types(stub: P4RuntimeStub, primary: StreamClient) -> None:
    full = _get(stub)
    assert full.cookie.cookie == 42 and full.p4info == p4info()
    assert full.p4_device_config == bmv2_json()
    cookie = _get(stub, Resp.COOKIE_ONLY)
    assert cookie.cookie.cookie == 42 and not cookie.HasField("p4info")
    assert not cookie.p4_device_config
    info = _get(stub, Resp.P4INFO_AND_COOKIE)
    assert info.HasField("p4info") and not info.p4_device_config
    dev = _get(stub, Resp.DEVICE_CONFIG_AND_COOKIE)
    assert dev.p4_device_config == bmv2_json() and not dev.HasField("p4info")


def test_verify_does_not_change_anything(
    stub: P4RuntimeStub, streams: list[StreamClient], engine: FakeEngine
) -> None:
    _arbitrated(stub, streams)
    _set(stub, Action.VERIFY)
    assert engine.load_count == 0
    assert not stub.GetForwardingPipelineConfig(Resp(device_id=1)).HasField("config")


def test_verify_and_save_then_commit_replays_writes_made_in_between(
    stub: P4RuntimeStub, streams: list[StreamClient], engine: FakeEngine
) -> None:
    _arbitrated(stub, streams)
    with pytest.raises(grpc.RpcError) as e:
        _set(stub, Action.COMMIT, with_config=False)
    assert e.value.code() == grpc.StatusCode.NOT_FOUND
    _set(stub, Action.VERIFY_AND_SAVE, cookie=7)
    assert engine.load_count == 0
    # Writes now refer to the saved config; the engine sees them only at COMMIT.
    write(stub, (INSERT, lpm_entry(0x0A000000, 8, port=5)))
    assert len(read(stub, p4r.Entity(table_entry=p4r.TableEntry(table_id=T_LPM)))) == 1
    assert engine.tables == {}
    with pytest.raises(grpc.RpcError) as e:
        _set(stub, Action.COMMIT)  # a config with COMMIT is refused
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    _set(stub, Action.COMMIT, with_config=False)
    assert engine.load_count == 1
    assert _get(stub, Resp.COOKIE_ONLY).cookie.cookie == 7
    [entry] = engine.tables["ingress.ipv4_lpm"].values()
    assert entry.action.args == (5, 0xAABBCCDDEEFF)
    # The replayed entry's handle is the engine's own: it can be modified and deleted.
    write(stub, (MODIFY, lpm_entry(0x0A000000, 8, port=6)))
    assert entry.action.args == (6, 0xAABBCCDDEEFF)
    write(stub, (DELETE, lpm_entry(0x0A000000, 8)))
    assert engine.tables["ingress.ipv4_lpm"] == {}


def test_wrapped_device_config_is_accepted_and_returned_as_sent(
    stub: P4RuntimeStub, streams: list[StreamClient], engine: FakeEngine
) -> None:
    _arbitrated(stub, streams)
    wrapped = wrap_device_config(bmv2_json())
    _set(stub, Action.VERIFY_AND_COMMIT, device_config=wrapped)
    assert engine.loaded == bmv2_json()
    assert _get(stub).p4_device_config == wrapped


def test_commit_resets_state_and_reconcile_keeps_it(
    stub: P4RuntimeStub, primary: StreamClient, engine: FakeEngine
) -> None:
    write(stub, (INSERT, lpm_entry(0x0A000000, 8)))
    _set(stub, Action.RECONCILE_AND_COMMIT, cookie=43)
    assert engine.load_count == 1  # the same program: nothing reloaded
    assert len(read(stub, p4r.Entity(table_entry=p4r.TableEntry(table_id=T_LPM)))) == 1
    assert _get(stub, Resp.COOKIE_ONLY).cookie.cookie == 43
    _set(stub, Action.VERIFY_AND_COMMIT)
    assert engine.load_count == 2
    assert read(stub, p4r.Entity(table_entry=p4r.TableEntry(table_id=T_LPM))) == []


def _renumbered() -> p4i.P4Info:
    """The test P4Info with every table, action and parameter id changed."""
    info = p4info()
    for t in info.tables:
        t.preamble.id += 0x100
        for ref in t.action_refs:
            ref.id += 0x100
        for f in t.match_fields:
            f.id += 10
    for a in info.actions:
        a.preamble.id += 0x100
        for p in a.params:
            p.id += 10
    for dc in info.direct_counters:
        dc.direct_table_id += 0x100
    for dm in info.direct_meters:
        dm.direct_table_id += 0x100
    for t in info.tables:
        t.const_default_action_id += 0x100 if t.const_default_action_id else 0
    for ap in info.action_profiles:
        ap.table_ids[:] = [tid + 0x100 for tid in ap.table_ids]
    return info


def test_reconcile_with_a_new_p4info_carries_the_state_over_by_name(
    stub: P4RuntimeStub, primary: StreamClient, engine: FakeEngine
) -> None:
    entity = lpm_entry(0x0A000000, 8, port=3)
    entity.table_entry.counter_data.packet_count = 9
    write(stub, (INSERT, entity))
    default = p4r.TableEntry(table_id=T_LPM, is_default_action=True)
    default.action.action.action_id = A_NOACTION
    write(stub, (MODIFY, p4r.Entity(table_entry=default)))
    req = Action(device_id=1, election_id=to_uint128(10), action=Action.RECONCILE_AND_COMMIT)
    req.config.p4info.CopyFrom(_renumbered())
    req.config.p4_device_config = bmv2_json()
    stub.SetForwardingPipelineConfig(req)
    assert engine.load_count == 2
    flt = p4r.TableEntry(table_id=T_LPM + 0x100)
    flt.counter_data.SetInParent()
    [got] = read(stub, p4r.Entity(table_entry=flt))
    te = got.table_entry
    assert te.match[0].field_id == 11 and te.match[0].lpm.prefix_len == 8
    assert te.action.action.action_id == A_SET_NHOP + 0x100
    assert [p.param_id for p in te.action.action.params] == [11, 12]
    assert te.counter_data.packet_count == 9  # direct counters survive
    [fake] = engine.tables["ingress.ipv4_lpm"].values()
    assert fake.action.args == (3, 0xAABBCCDDEEFF)
    assert engine.defaults["ingress.ipv4_lpm"].name == "NoAction"


def test_reconcile_refuses_what_it_cannot_keep(
    stub: P4RuntimeStub, primary: StreamClient, engine: FakeEngine
) -> None:
    write(stub, (INSERT, lpm_entry(0x0A000000, 8, port=3)))
    info = _renumbered()
    for a in info.actions:
        if a.preamble.name == "ingress.set_nhop":
            a.preamble.name = "ingress.set_next_hop"
    req = Action(device_id=1, election_id=to_uint128(10), action=Action.RECONCILE_AND_COMMIT)
    req.config.p4info.CopyFrom(info)
    req.config.p4_device_config = bmv2_json()
    with pytest.raises(grpc.RpcError) as e:
        stub.SetForwardingPipelineConfig(req)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "ingress.set_nhop" in e.value.details()
    assert engine.load_count == 1  # nothing changed
    assert len(read(stub, p4r.Entity(table_entry=p4r.TableEntry(table_id=T_LPM)))) == 1


@pytest.mark.parametrize(
    ("device_config", "needle"),
    [
        (b"not json at all", "neither BMv2 JSON"),
        (b"{not json", "not valid JSON"),
        (b'{"pipelines": [{"tables": []}]}', "P4Info tables not in the BMv2 JSON"),
    ],
)
def test_bad_device_config_is_invalid_argument(
    stub: P4RuntimeStub, streams: list[StreamClient], device_config: bytes, needle: str
) -> None:
    _arbitrated(stub, streams)
    with pytest.raises(grpc.RpcError) as e:
        _set(stub, Action.VERIFY_AND_COMMIT, device_config=device_config)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert needle in e.value.details()


def test_set_pipeline_needs_primary_and_action(
    stub: P4RuntimeStub, streams: list[StreamClient]
) -> None:
    with pytest.raises(grpc.RpcError) as e:
        _set(stub, Action.VERIFY_AND_COMMIT)
    assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED
    _arbitrated(stub, streams)
    with pytest.raises(grpc.RpcError) as e:
        _set(stub, Action.UNSPECIFIED)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(grpc.RpcError) as e:
        _set(stub, Action.VERIFY_AND_COMMIT, election_id=9)
    assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED


def test_reconcile_carries_action_profiles_over(
    stub: P4RuntimeStub, primary: StreamClient, engine: FakeEngine
) -> None:
    write(stub, (INSERT, member(1, port=3)), (INSERT, group(10, (1, 2))))
    write(stub, (INSERT, ecmp_entry(0x0A000000, group_id=10)))
    req = Action(device_id=1, election_id=to_uint128(10), action=Action.RECONCILE_AND_COMMIT)
    req.config.p4info.CopyFrom(_renumbered())
    req.config.p4_device_config = bmv2_json()
    stub.SetForwardingPipelineConfig(req)
    assert engine.load_count == 2
    [m] = read(stub, p4r.Entity(action_profile_member=p4r.ActionProfileMember()))
    assert m.action_profile_member.action.action_id == A_SET_NHOP + 0x100
    [(g, members)] = engine.groups["ingress.ecmp"].items()
    assert members == (next(iter(engine.members["ingress.ecmp"])),) * 2
    [entry] = engine.tables["ingress.ecmp_t"].values()
    assert entry.target is not None and entry.target.handle == g
