"""Write and Read of table entries over gRPC, against the fake engine."""

from __future__ import annotations

import grpc
import pytest
from finsy.proto.p4.v1 import p4runtime_pb2 as p4r
from finsy.proto.p4.v1.p4runtime_pb2_grpc import P4RuntimeStub
from ratelab_p4info import MatchKind
from ratelab_switch.arbitration import to_uint128
from ratelab_switch.engine_api import ActionCall, KeyField
from switch_client import (
    DELETE,
    INSERT,
    MODIFY,
    StreamClient,
    code,
    commit_pipeline,
    lpm_entry,
    read,
    read_batch,
    write,
    write_errors,
)
from switch_fake_engine import FakeEngine, FakeEntry
from switch_program import (
    A_DEFAULT_ONLY,
    A_DROP,
    A_NOACTION,
    A_SET_NHOP,
    T_ACL,
    T_CONST,
    T_KEYLESS,
    T_LPM,
    T_SMALL,
    bmv2_json,
    p4info,
)

E = grpc.StatusCode


def _fails(stub: P4RuntimeStub, *updates: tuple[int, p4r.Entity]) -> list[tuple[int, str]]:
    with pytest.raises(grpc.RpcError) as e:
        write(stub, *updates)
    return write_errors(e.value)


def acl_entry(
    priority: int,
    ethertype: tuple[int, int] | None = (0x0800, 0xFFFF),
    dport: tuple[int, int] | None = None,
    port: int | None = None,
    action: int = A_DROP,
) -> p4r.Entity:
    te = p4r.TableEntry(table_id=T_ACL, priority=priority)
    if ethertype is not None:
        te.match.add(field_id=1).ternary.CopyFrom(
            p4r.FieldMatch.Ternary(
                value=ethertype[0].to_bytes(2, "big"), mask=ethertype[1].to_bytes(2, "big")
            )
        )
    if dport is not None:
        te.match.add(field_id=2).range.CopyFrom(
            p4r.FieldMatch.Range(low=dport[0].to_bytes(2, "big"), high=dport[1].to_bytes(2, "big"))
        )
    if port is not None:
        te.match.add(field_id=3).optional.value = port.to_bytes(2, "big")
    te.action.action.action_id = action
    return p4r.Entity(table_entry=te)


def test_insert_reaches_engine_and_reads_back_canonical(
    stub: P4RuntimeStub, primary: StreamClient, engine: FakeEngine
) -> None:
    write(stub, (INSERT, lpm_entry(0x0A000100, 24, port=3)))
    [(_handle, entry)] = engine.tables["ingress.ipv4_lpm"].items()
    assert entry.key == (KeyField(MatchKind.LPM, 0x0A000100, prefix_len=24),)
    assert entry.action.name == "ingress.set_nhop" and entry.action.args == (3, 0xAABBCCDDEEFF)
    [got] = read(stub, p4r.Entity(table_entry=p4r.TableEntry(table_id=T_LPM)))
    te = got.table_entry
    assert te.match[0].lpm.value == b"\x0a\x00\x01\x00" and te.match[0].lpm.prefix_len == 24
    # Padded param b"\x00\x03" comes back canonical.
    assert [p.value for p in te.action.action.params] == [b"\x03", bytes.fromhex("aabbccddeeff")]


def test_duplicate_insert_and_missing_modify_delete(
    stub: P4RuntimeStub, primary: StreamClient
) -> None:
    write(stub, (INSERT, lpm_entry(0x0A000000, 8)))
    errors = _fails(
        stub,
        (INSERT, lpm_entry(0x0A000000, 8, port=2)),
        (MODIFY, lpm_entry(0x0B000000, 8)),
        (DELETE, lpm_entry(0x0C000000, 8)),
        (INSERT, lpm_entry(0x0D000000, 8)),
    )
    assert [c for c, _ in errors] == [
        code(E.ALREADY_EXISTS),
        code(E.NOT_FOUND),
        code(E.NOT_FOUND),
        code(E.OK),
    ]
    # CONTINUE_ON_ERROR: the last update was applied despite the earlier failures.
    assert len(read(stub, p4r.Entity(table_entry=p4r.TableEntry(table_id=T_LPM)))) == 2


def test_modify_and_delete(stub: P4RuntimeStub, primary: StreamClient, engine: FakeEngine) -> None:
    write(stub, (INSERT, lpm_entry(0x0A000000, 8, port=1)))
    write(stub, (MODIFY, lpm_entry(0x0A000000, 8, port=None)))
    [entry] = engine.tables["ingress.ipv4_lpm"].values()
    assert entry.action.name == "ingress.drop"
    [got] = read(stub, p4r.Entity(table_entry=p4r.TableEntry(table_id=T_LPM)))
    assert got.table_entry.action.action.action_id == A_DROP
    write(stub, (DELETE, lpm_entry(0x0A000000, 8, port=None)))
    assert engine.tables["ingress.ipv4_lpm"] == {}


@pytest.mark.parametrize(
    ("mutate", "needle", "status"),
    [
        (
            lambda te: setattr(te.match[0].lpm, "prefix_len", 33),
            "prefix length",
            E.INVALID_ARGUMENT,
        ),
        (lambda te: setattr(te.match[0].lpm, "prefix_len", 0), "prefix length", E.INVALID_ARGUMENT),
        (
            lambda te: setattr(te.match[0].lpm, "value", b"\x0a\x00\x00\x01"),
            "beyond the /8",
            E.INVALID_ARGUMENT,
        ),
        (
            lambda te: setattr(te.match[0].lpm, "value", b"\x01\x0a\x00\x00\x00"),
            "32 bits",
            E.INVALID_ARGUMENT,
        ),
        (
            lambda te: setattr(te.action.action.params[0], "value", b"\x02\x00"),
            "parameter port",
            E.INVALID_ARGUMENT,
        ),
        (lambda te: te.action.action.params.pop(), "dmac is missing", E.INVALID_ARGUMENT),
        (
            lambda te: setattr(te.action.action, "action_id", A_DEFAULT_ONLY),
            "not one of",
            E.INVALID_ARGUMENT,
        ),
        (lambda te: setattr(te.match[0], "field_id", 9), "unknown match field", E.INVALID_ARGUMENT),
        (lambda te: setattr(te, "priority", 5), "priority must be 0", E.INVALID_ARGUMENT),
        (lambda te: te.ClearField("action"), "no action", E.INVALID_ARGUMENT),
    ],
)
def test_malformed_entries_are_rejected_naming_the_field(
    stub: P4RuntimeStub,
    primary: StreamClient,
    mutate: object,
    needle: str,
    status: grpc.StatusCode,
) -> None:
    entity = lpm_entry(0x0A000000, 8)
    mutate(entity.table_entry)  # type: ignore[operator]
    [(c, msg)] = _fails(stub, (INSERT, entity))
    assert c == code(status), msg
    assert needle in msg


def test_unknown_table_is_not_found(stub: P4RuntimeStub, primary: StreamClient) -> None:
    entity = lpm_entry(0x0A000000, 8)
    entity.table_entry.table_id = 0x02FFFFFF
    [(c, _)] = _fails(stub, (INSERT, entity))
    assert c == code(E.NOT_FOUND)


def test_ternary_range_optional_and_priorities(
    stub: P4RuntimeStub, primary: StreamClient, engine: FakeEngine
) -> None:
    write(
        stub,
        (INSERT, acl_entry(10, dport=(80, 443), port=5)),
        (INSERT, acl_entry(20, dport=(80, 443), port=5)),  # same key, other priority: distinct
        (INSERT, acl_entry(30, ethertype=None)),
    )
    keys = {e.priority: e.key for e in engine.tables["ingress.acl"].values()}
    assert keys[10] == (
        KeyField(MatchKind.TERNARY, 0x0800, mask=0xFFFF),
        KeyField(MatchKind.RANGE, 80, high=443),
        KeyField(MatchKind.OPTIONAL, 5, mask=0x1FF),
    )
    # Omitted fields become full wildcards.
    assert keys[30] == (
        KeyField(MatchKind.TERNARY, 0, mask=0),
        KeyField(MatchKind.RANGE, 0, high=0xFFFF),
        KeyField(MatchKind.OPTIONAL, 0, mask=0),
    )
    only_20 = acl_entry(20, dport=(80, 443), port=5)
    [got] = read(stub, only_20)
    assert got.table_entry.priority == 20
    assert len(read(stub, p4r.Entity(table_entry=p4r.TableEntry(table_id=T_ACL)))) == 3
    errors = _fails(
        stub,
        (INSERT, acl_entry(0)),
        (INSERT, acl_entry(1, ethertype=(0x0801, 0xFF00))),
        (INSERT, acl_entry(1, ethertype=(0, 0))),
        (INSERT, acl_entry(1, dport=(500, 80))),
        (INSERT, acl_entry(1, dport=(0, 0xFFFF))),
        (INSERT, acl_entry(1, action=A_DEFAULT_ONLY)),
    )
    # The action's scope (@defaultonly) is a permission, the rest malformed entries.
    assert [c for c, _ in errors] == [code(E.INVALID_ARGUMENT)] * 5 + [code(E.PERMISSION_DENIED)]
    assert "priority must be > 0" in errors[0][1]
    assert "outside the mask" in errors[1][1]
    assert "mask is zero" in errors[2][1]
    assert "above high" in errors[3][1]
    assert "full range" in errors[4][1]
    assert "defaultonly" in errors[5][1]


def test_table_full_is_resource_exhausted(stub: P4RuntimeStub, primary: StreamClient) -> None:
    def small(port: int) -> p4r.Entity:
        te = p4r.TableEntry(table_id=T_SMALL)
        te.match.add(field_id=1).exact.value = bytes([port])
        te.action.action.action_id = A_NOACTION
        return p4r.Entity(table_entry=te)

    write(stub, (INSERT, small(1)), (INSERT, small(2)))
    [(c, _)] = _fails(stub, (INSERT, small(3)))
    assert c == code(E.RESOURCE_EXHAUSTED)
    missing = small(1)
    del missing.table_entry.match[:]
    [(c, msg)] = _fails(stub, (INSERT, missing))
    assert c == code(E.INVALID_ARGUMENT) and "exact match field is missing" in msg


def test_const_table_is_permission_denied(stub: P4RuntimeStub, primary: StreamClient) -> None:
    te = p4r.TableEntry(table_id=T_CONST)
    te.match.add(field_id=1).exact.value = b"\x01"
    te.action.action.action_id = A_DROP
    [(c, _)] = _fails(stub, (INSERT, p4r.Entity(table_entry=te)))
    assert c == code(E.PERMISSION_DENIED)


def test_default_entry_modify_read_and_reset(
    stub: P4RuntimeStub, primary: StreamClient, engine: FakeEngine
) -> None:
    default = p4r.TableEntry(table_id=T_LPM, is_default_action=True)
    [got] = read(stub, p4r.Entity(table_entry=default))
    assert got.table_entry.is_default_action
    assert got.table_entry.action.action.action_id == A_DROP  # the program's default

    new = p4r.TableEntry(table_id=T_LPM, is_default_action=True)
    new.action.action.action_id = A_SET_NHOP
    new.action.action.params.add(param_id=1, value=b"\x07")
    new.action.action.params.add(param_id=2, value=b"\x01")
    write(stub, (MODIFY, p4r.Entity(table_entry=new)))
    assert engine.defaults["ingress.ipv4_lpm"].args == (7, 1)
    [got] = read(stub, p4r.Entity(table_entry=default))
    assert got.table_entry.action.action.action_id == A_SET_NHOP
    assert [p.value for p in got.table_entry.action.action.params] == [b"\x07", b"\x01"]
    # Default entries are not listed among ordinary entries.
    assert read(stub, p4r.Entity(table_entry=p4r.TableEntry(table_id=T_LPM))) == []

    # MODIFY without an action restores the program's default.
    write(stub, (MODIFY, p4r.Entity(table_entry=default)))
    assert engine.defaults["ingress.ipv4_lpm"].name == "ingress.drop"

    errors = _fails(
        stub, (INSERT, p4r.Entity(table_entry=new)), (DELETE, p4r.Entity(table_entry=new))
    )
    assert [c for c, _ in errors] == [code(E.INVALID_ARGUMENT)] * 2
    # @tableonly actions cannot be the default; a const default cannot change.
    acl_default = p4r.TableEntry(table_id=T_ACL, is_default_action=True)
    acl_default.action.action.action_id = A_DROP
    const_default = p4r.TableEntry(table_id=T_CONST, is_default_action=True)
    const_default.action.action.action_id = A_DROP
    errors = _fails(
        stub,
        (MODIFY, p4r.Entity(table_entry=acl_default)),
        (MODIFY, p4r.Entity(table_entry=const_default)),
    )
    assert [c for c, _ in errors] == [code(E.PERMISSION_DENIED)] * 2


def test_read_all_tables_with_table_id_zero(stub: P4RuntimeStub, primary: StreamClient) -> None:
    write(stub, (INSERT, lpm_entry(0x0A000000, 8)), (INSERT, acl_entry(5)))
    got = read(stub, p4r.Entity(table_entry=p4r.TableEntry()))
    assert sorted(e.table_entry.table_id for e in got) == [T_LPM, T_ACL]


def test_read_many_entries_streams_several_responses(
    stub: P4RuntimeStub, primary: StreamClient
) -> None:
    updates = [(INSERT, lpm_entry(0x0A000000 + (i << 8), 24)) for i in range(1000)]
    write(stub, *updates)
    req = p4r.ReadRequest(device_id=1)
    req.entities.add().table_entry.table_id = T_LPM
    responses = list(stub.Read(req))
    assert sum(len(r.entities) for r in responses) == 1000


def test_write_before_pipeline_is_failed_precondition(
    stub: P4RuntimeStub, streams: list[StreamClient]
) -> None:
    s = StreamClient(stub)
    streams.append(s)
    s.arbitrate(10)
    s.get()
    with pytest.raises(grpc.RpcError) as e:
        write(stub, (INSERT, lpm_entry(0x0A000000, 8)))
    assert e.value.code() == E.FAILED_PRECONDITION
    with pytest.raises(grpc.RpcError) as e:
        read(stub, p4r.Entity(table_entry=p4r.TableEntry()))
    assert e.value.code() == E.FAILED_PRECONDITION


def test_rollback_atomicity_is_unimplemented(stub: P4RuntimeStub, primary: StreamClient) -> None:

    req = p4r.WriteRequest(
        device_id=1, election_id=to_uint128(10), atomicity=p4r.WriteRequest.ROLLBACK_ON_ERROR
    )
    req.updates.add(type=INSERT, entity=lpm_entry(0x0A000000, 8))
    with pytest.raises(grpc.RpcError) as e:
        stub.Write(req)
    assert e.value.code() == E.UNIMPLEMENTED


def test_modify_without_action_keeps_it(
    stub: P4RuntimeStub, primary: StreamClient, engine: FakeEngine
) -> None:
    write(stub, (INSERT, lpm_entry(0x0A000000, 8, port=4)))
    entity = lpm_entry(0x0A000000, 8)
    entity.table_entry.ClearField("action")
    entity.table_entry.controller_metadata = 77
    write(stub, (MODIFY, entity))
    [fake] = engine.tables["ingress.ipv4_lpm"].values()
    assert fake.action.args[0] == 4
    [got] = read(stub, p4r.Entity(table_entry=p4r.TableEntry(table_id=T_LPM)))
    assert got.table_entry.controller_metadata == 77
    assert got.table_entry.action.action.params[0].value == b"\x04"


def test_read_filters_on_action_and_metadata(stub: P4RuntimeStub, primary: StreamClient) -> None:
    a = lpm_entry(0x0A000000, 8, port=1)
    a.table_entry.controller_metadata = 5
    b = lpm_entry(0x0B000000, 8, port=None)
    b.table_entry.metadata = b"tag"
    write(stub, (INSERT, a), (INSERT, b))

    def count(**fields: object) -> int:
        flt = p4r.TableEntry(table_id=T_LPM)
        for k, v in fields.items():
            if k == "action_id":
                flt.action.action.action_id = v  # type: ignore[assignment]
            else:
                setattr(flt, k, v)
        return len(read(stub, p4r.Entity(table_entry=flt)))

    assert count() == 2
    assert count(action_id=A_DROP) == 1
    assert count(controller_metadata=5) == 1
    assert count(metadata=b"tag") == 1
    assert count(metadata=b"other") == 0
    bad = p4r.TableEntry(priority=3)
    _, errors = read_batch(stub, p4r.Entity(table_entry=bad))
    assert [c for c, _ in errors] == [code(E.INVALID_ARGUMENT)]


def test_default_entry_metadata_round_trips_and_resets(
    stub: P4RuntimeStub, primary: StreamClient
) -> None:
    default = p4r.TableEntry(table_id=T_LPM, is_default_action=True)
    new = p4r.TableEntry(table_id=T_LPM, is_default_action=True, controller_metadata=9)
    new.metadata = b"why"
    new.action.action.action_id = A_NOACTION
    write(stub, (MODIFY, p4r.Entity(table_entry=new)))
    [got] = read(stub, p4r.Entity(table_entry=default))
    assert (got.table_entry.controller_metadata, got.table_entry.metadata) == (9, b"why")
    write(stub, (MODIFY, p4r.Entity(table_entry=default)))
    [got] = read(stub, p4r.Entity(table_entry=default))
    assert (got.table_entry.controller_metadata, got.table_entry.metadata) == (0, b"")
    assert got.table_entry.action.action.action_id == A_DROP


def test_idle_timeout_meter_counters_and_action_profile_fields(
    stub: P4RuntimeStub, primary: StreamClient
) -> None:
    idle = lpm_entry(0x0A000000, 8)
    idle.table_entry.idle_timeout_ns = 1000
    hit = lpm_entry(0x0A000000, 8)
    hit.table_entry.time_since_last_hit.elapsed_ns = 0
    member = lpm_entry(0x0A000000, 8)
    member.table_entry.action.action_profile_member_id = 3
    zeros = acl_entry(5)
    zeros.table_entry.meter_counter_data.green.packet_count = 0
    zeros.table_entry.meter_counter_data.SetInParent()
    nonzero = acl_entry(6)
    nonzero.table_entry.meter_counter_data.red.packet_count = 1
    errors = _fails(
        stub,
        (INSERT, idle),
        (INSERT, hit),
        (INSERT, member),
        (INSERT, zeros),
        (INSERT, nonzero),
    )
    assert [c for c, _ in errors] == [
        code(E.INVALID_ARGUMENT),
        code(E.INVALID_ARGUMENT),
        code(E.INVALID_ARGUMENT),
        code(E.OK),
        code(E.INVALID_ARGUMENT),
    ]


def test_key_only_delete_is_const_and_keyless_tables(
    stub: P4RuntimeStub, primary: StreamClient, engine: FakeEngine
) -> None:
    write(stub, (INSERT, lpm_entry(0x0A000000, 8)))
    # DELETE looks at the key only: nonsense elsewhere is ignored.
    nonsense = lpm_entry(0x0A000000, 8)
    nonsense.table_entry.action.action.action_id = 0x01FFFFFF
    nonsense.table_entry.idle_timeout_ns = 5
    write(stub, (DELETE, nonsense))
    assert engine.tables["ingress.ipv4_lpm"] == {}
    const = lpm_entry(0x0A000000, 8)
    const.table_entry.is_const = True
    keyless = p4r.TableEntry(table_id=T_KEYLESS)
    keyless.action.action.action_id = A_NOACTION
    long_value = acl_entry(3, ethertype=(0x0800, 0xFFFF))
    long_value.table_entry.match[0].ternary.value = b"\x00\x00\x08\x00"
    errors = _fails(
        stub, (INSERT, const), (INSERT, p4r.Entity(table_entry=keyless)), (INSERT, long_value)
    )
    assert [c for c, _ in errors] == [code(E.INVALID_ARGUMENT)] * 3
    # A keyless table is driven through its default entry.
    keyless.is_default_action = True
    write(stub, (MODIFY, p4r.Entity(table_entry=keyless)))
    assert engine.defaults["ingress.settings"].name == "NoAction"


def _exact_key(port: int) -> tuple[KeyField, ...]:
    return (KeyField(MatchKind.EXACT, port),)


def test_the_programs_own_entries_read_back_and_const_ones_stay(
    stub: P4RuntimeStub, streams: list[StreamClient], engine: FakeEngine
) -> None:
    engine.initial = {
        "ingress.fixed": [FakeEntry(_exact_key(1), ActionCall("ingress.drop"), 0)],
        "ingress.small": [FakeEntry(_exact_key(2), ActionCall("NoAction"), 0)],
    }
    s = StreamClient(stub)
    streams.append(s)
    s.arbitrate(10)
    s.get()
    commit_pipeline(stub, p4info(), bmv2_json(), device_id=1, election_id=10)

    [fixed] = read(stub, p4r.Entity(table_entry=p4r.TableEntry(table_id=T_CONST)))
    te = fixed.table_entry
    assert te.is_const and te.match[0].exact.value == b"\x01"
    assert te.action.action.action_id == A_DROP

    def small(port: int, action: bool = True) -> p4r.Entity:
        e = p4r.TableEntry(table_id=T_SMALL)
        e.match.add(field_id=1).exact.value = bytes([port])
        if action:
            e.action.action.action_id = A_NOACTION
        return p4r.Entity(table_entry=e)

    def fixed_entry(action: bool) -> p4r.Entity:
        e = p4r.TableEntry(table_id=T_CONST)
        e.match.add(field_id=1).exact.value = b"\x01"
        if action:
            e.action.action.action_id = A_NOACTION
        return p4r.Entity(table_entry=e)

    errors = _fails(
        stub,
        (MODIFY, fixed_entry(action=True)),
        (DELETE, fixed_entry(action=False)),
        (MODIFY, fixed_entry(action=False)),  # direct resources only: allowed
        (INSERT, small(2)),  # the program's entry is there already
        (DELETE, small(2, action=False)),  # a preinitialized entry can go
    )
    assert [c for c, _ in errors] == [
        code(E.PERMISSION_DENIED),
        code(E.PERMISSION_DENIED),
        code(E.OK),
        code(E.ALREADY_EXISTS),
        code(E.OK),
    ]
    assert engine.tables["ingress.small"] == {}
