"""Action profile members and groups, and indirect table entries that run them."""

from __future__ import annotations

import grpc
import pytest
from finsy.proto.p4.v1 import p4runtime_pb2 as p4r
from finsy.proto.p4.v1.p4runtime_pb2_grpc import P4RuntimeStub
from ratelab_switch.arbitration import to_uint128
from ratelab_switch.engine_api import ActionCall, IndirectTarget
from switch_client import (
    DELETE,
    INSERT,
    MODIFY,
    StreamClient,
    code,
    read,
    write,
    write_errors,
)
from switch_fake_engine import FakeEngine
from switch_program import (
    A_DROP,
    A_NOACTION,
    AP_NH,
    T_ECMP,
    T_NH,
    bmv2_json,
    ecmp_entry,
    group,
    member,
    p4info,
)

E = grpc.StatusCode


def _fails(stub: P4RuntimeStub, *updates: tuple[int, p4r.Entity]) -> list[tuple[int, str]]:
    with pytest.raises(grpc.RpcError) as e:
        write(stub, *updates)
    return write_errors(e.value)


def test_members_are_written_read_and_checked(
    stub: P4RuntimeStub, primary: StreamClient, engine: FakeEngine
) -> None:
    write(stub, (INSERT, member(1, port=3)), (INSERT, member(2, port=4)))
    assert sorted(engine.members["ingress.ecmp"].values(), key=lambda a: a.args) == [
        ActionCall("ingress.set_nhop", (3, 1)),
        ActionCall("ingress.set_nhop", (4, 1)),
    ]
    write(stub, (MODIFY, member(2, port=5)))
    got = read(stub, p4r.Entity(action_profile_member=p4r.ActionProfileMember()))
    assert [(e.action_profile_member.member_id, e.action_profile_member.action.params[0].value)
            for e in got] == [(1, b"\x03"), (2, b"\x05")]  # fmt: skip
    no_action = member(9)
    no_action.action_profile_member.ClearField("action")
    errors = _fails(
        stub,
        (INSERT, member(1)),  # exists
        (MODIFY, member(7)),  # does not
        (INSERT, member(0)),  # id 0
        (INSERT, no_action),
        (INSERT, member(8, action=A_DROP)),  # not an action of the profile's table
        (INSERT, member(1, profile=AP_NH)),
        (INSERT, member(2, profile=AP_NH)),
        (INSERT, member(3, profile=AP_NH)),  # the profile holds 2 members
    )
    assert [c for c, _ in errors] == [
        code(E.ALREADY_EXISTS),
        code(E.NOT_FOUND),
        code(E.INVALID_ARGUMENT),
        code(E.INVALID_ARGUMENT),
        code(E.INVALID_ARGUMENT),
        code(E.OK),
        code(E.OK),
        code(E.RESOURCE_EXHAUSTED),
    ]


def test_groups_weights_and_limits(
    stub: P4RuntimeStub, primary: StreamClient, engine: FakeEngine
) -> None:
    write(stub, (INSERT, member(1, port=1)), (INSERT, member(2, port=2)))
    write(stub, (INSERT, group(10, (1, 2), (2, 1))))
    handle_of_port = {a.args[0]: h for h, a in engine.members["ingress.ecmp"].items()}
    [members] = engine.groups["ingress.ecmp"].values()
    # Weight 2 lists member 1 twice.
    assert sorted(members) == sorted([handle_of_port[1], handle_of_port[1], handle_of_port[2]])
    write(stub, (MODIFY, group(10, (2, 1))))
    [members] = engine.groups["ingress.ecmp"].values()
    assert len(members) == 1
    [got] = read(stub, group(10))
    assert [(m.member_id, m.weight) for m in got.action_profile_group.members] == [(2, 1)]
    watched = group(11, (1, 1))
    watched.action_profile_group.members[0].watch_port = b"\x01"
    errors = _fails(
        stub,
        (INSERT, group(11, (9, 1))),  # no member 9
        (INSERT, group(11, (1, 0))),  # weight 0
        (INSERT, group(11, (1, 5))),  # total weight 5 > max_group_size 4
        (INSERT, watched),
        (INSERT, group(11, (1, 1), profile=AP_NH)),  # no selector: no groups
        (INSERT, group(10, (1, 1))),
        (DELETE, member(2)),  # group 10 holds it
    )
    assert [c for c, _ in errors] == [
        code(E.NOT_FOUND),
        code(E.INVALID_ARGUMENT),
        code(E.RESOURCE_EXHAUSTED),
        code(E.UNIMPLEMENTED),
        code(E.INVALID_ARGUMENT),
        code(E.ALREADY_EXISTS),
        code(E.FAILED_PRECONDITION),
    ]
    write(stub, (DELETE, group(10)), (DELETE, member(2)))
    assert engine.groups["ingress.ecmp"] == {}


def test_indirect_entries_run_members_and_groups(
    stub: P4RuntimeStub, primary: StreamClient, engine: FakeEngine
) -> None:
    write(stub, (INSERT, member(1)), (INSERT, member(2)), (INSERT, group(10, (1, 1), (2, 1))))
    write(
        stub,
        (INSERT, ecmp_entry(0x0A000000, member_id=1)),
        (INSERT, ecmp_entry(0x0B000000, group_id=10)),
    )
    targets = {e.key[0].value: e.target for e in engine.tables["ingress.ecmp_t"].values()}
    member_handle = next(h for h in engine.members["ingress.ecmp"])
    group_handle = next(h for h in engine.groups["ingress.ecmp"])
    assert targets[0x0A000000] == IndirectTarget("member", member_handle)
    assert targets[0x0B000000] == IndirectTarget("group", group_handle)
    got = read(stub, p4r.Entity(table_entry=p4r.TableEntry(table_id=T_ECMP)))
    assert sorted(e.table_entry.action.WhichOneof("type") for e in got) == [
        "action_profile_group_id",
        "action_profile_member_id",
    ]
    direct = ecmp_entry(0x0C000000)
    direct.table_entry.action.action.action_id = A_NOACTION
    default = p4r.TableEntry(table_id=T_ECMP, is_default_action=True)
    default.action.action.action_id = A_NOACTION
    errors = _fails(
        stub,
        (INSERT, ecmp_entry(0x0C000000, member_id=5)),  # no member 5
        (INSERT, ecmp_entry(0x0C000000, group_id=5)),  # no group 5
        (INSERT, direct),  # an indirect table takes members / groups only
        (MODIFY, p4r.Entity(table_entry=default)),  # const NoAction for indirect tables
        (DELETE, member(1)),  # an entry runs it
        (DELETE, group(10)),  # an entry runs it
    )
    assert [c for c, _ in errors] == [
        code(E.NOT_FOUND),
        code(E.NOT_FOUND),
        code(E.INVALID_ARGUMENT),
        code(E.PERMISSION_DENIED),
        code(E.FAILED_PRECONDITION),
        code(E.FAILED_PRECONDITION),
    ]
    # Repointing the entry frees the member; deleting the other frees the group.
    write(stub, (MODIFY, ecmp_entry(0x0A000000, member_id=2)))
    write(stub, (DELETE, ecmp_entry(0x0B000000)), (DELETE, group(10)), (DELETE, member(1)))
    assert len(engine.members["ingress.ecmp"]) == 1


def test_a_saved_config_replays_members_groups_and_entries(
    stub: P4RuntimeStub, streams: list[StreamClient], engine: FakeEngine
) -> None:
    s = StreamClient(stub)
    streams.append(s)
    s.arbitrate(10)
    s.get()
    Action = p4r.SetForwardingPipelineConfigRequest
    req = Action(device_id=1, election_id=to_uint128(10), action=Action.VERIFY_AND_SAVE)
    req.config.p4info.CopyFrom(p4info())
    req.config.p4_device_config = bmv2_json()
    stub.SetForwardingPipelineConfig(req)
    write(
        stub,
        (INSERT, member(1)),
        (INSERT, group(10, (1, 2))),
        (INSERT, ecmp_entry(0x0A000000, group_id=10)),
    )
    assert engine.loaded is None
    stub.SetForwardingPipelineConfig(
        Action(device_id=1, election_id=to_uint128(10), action=Action.COMMIT)
    )
    [m] = engine.members["ingress.ecmp"]
    [(g, members)] = engine.groups["ingress.ecmp"].items()
    assert members == (m, m)
    [entry] = engine.tables["ingress.ecmp_t"].values()
    assert entry.target == IndirectTarget("group", g)
    # The replayed handles are the engine's: the objects can be changed and removed.
    write(stub, (DELETE, ecmp_entry(0x0A000000)), (DELETE, group(10)), (DELETE, member(1)))
    assert engine.members["ingress.ecmp"] == {} and engine.groups["ingress.ecmp"] == {}


def test_nexthop_profile_member_table(
    stub: P4RuntimeStub, primary: StreamClient, engine: FakeEngine
) -> None:
    write(stub, (INSERT, member(1, port=9, profile=AP_NH)))
    te = p4r.TableEntry(table_id=T_NH)
    te.match.add(field_id=1).exact.value = b"\x07"
    te.action.action_profile_member_id = 1
    write(stub, (INSERT, p4r.Entity(table_entry=te)))
    [entry] = engine.tables["ingress.nh_t"].values()
    assert entry.target is not None and entry.target.kind == "member"
