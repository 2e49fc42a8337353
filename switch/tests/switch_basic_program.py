"""P4Info for data/basic.json (the P4 tutorials' basic IPv4 forwarding program)."""

from __future__ import annotations

from pathlib import Path

from finsy.proto.p4.config.v1 import p4info_pb2 as p4i
from finsy.proto.p4.v1 import p4runtime_pb2 as p4r
from finsy.proto.p4.v1.p4runtime_pb2_grpc import P4RuntimeStub
from ratelab_switch.arbitration import to_uint128
from switch_client import INSERT, write

BASIC_JSON = Path(__file__).parent / "data" / "basic.json"
T_IPV4_LPM = 0x02000001
A_FORWARD = 0x01000001
A_DROP = 0x01000002
A_NOACTION = 0x01000003


def basic_p4info() -> p4i.P4Info:
    info = p4i.P4Info()
    for aid, name, alias, params in (
        (A_FORWARD, "MyIngress.ipv4_forward", "ipv4_forward", [("dstAddr", 48), ("port", 9)]),
        (A_DROP, "MyIngress.drop", "drop", []),
        (A_NOACTION, "NoAction", "NoAction", []),
    ):
        a = info.actions.add()
        a.preamble.id, a.preamble.name, a.preamble.alias = aid, name, alias
        for i, (pname, width) in enumerate(params, start=1):
            a.params.add(id=i, name=pname, bitwidth=width)
    t = info.tables.add()
    t.preamble.id, t.preamble.name, t.preamble.alias = T_IPV4_LPM, "MyIngress.ipv4_lpm", "ipv4_lpm"
    t.match_fields.add(id=1, name="hdr.ipv4.dstAddr", bitwidth=32, match_type=p4i.MatchField.LPM)
    for aid in (A_FORWARD, A_DROP, A_NOACTION):
        t.action_refs.add(id=aid)
    t.size = 1024
    return info


def route(prefix: bytes, plen: int, port: int, mac: int = 0x0222) -> p4r.Entity:
    """An ipv4_lpm entry: prefix/plen -> ipv4_forward(mac, port)."""
    te = p4r.TableEntry(table_id=T_IPV4_LPM)
    te.match.add(field_id=1).lpm.CopyFrom(p4r.FieldMatch.LPM(value=prefix, prefix_len=plen))
    te.action.action.action_id = A_FORWARD
    te.action.action.params.add(param_id=1, value=mac.to_bytes(6, "big"))
    te.action.action.params.add(param_id=2, value=port.to_bytes(2, "big"))
    return p4r.Entity(table_entry=te)


def ipv4_packet(dst: bytes, ttl: int = 64, payload: bytes = b"hello") -> bytes:
    """Ethernet + IPv4 (valid header checksum) + payload."""
    total = 20 + len(payload)
    hdr = bytearray(
        bytes([0x45, 0, total >> 8, total & 0xFF, 0, 1, 0, 0, ttl, 17, 0, 0])
        + bytes([10, 0, 1, 1])
        + dst
    )
    s = sum(int.from_bytes(hdr[i : i + 2], "big") for i in range(0, 20, 2))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    hdr[10:12] = (~s & 0xFFFF).to_bytes(2, "big")
    eth = bytes.fromhex("020000000001") + bytes.fromhex("020000000002") + b"\x08\x00"
    return eth + bytes(hdr) + payload


# ------------------------------------------------------------------ features.json
FEATURES_JSON = Path(__file__).parent / "data" / "features.json"
F_CTL = 0x02000010
F_ACL = 0x02000011
F_FWD = 0x01000010
F_DO_COUNT = 0x01000011
F_DO_DIGEST = 0x01000012
F_ACL_DENY = 0x01000013
F_ACL_PERMIT = 0x01000014
F_NOACTION = 0x01000015
F_DO_MCAST = 0x01000016
F_DO_CLONE = 0x01000017
F_ACL_CTR = 0x13000010
F_CTR = 0x12000010
F_REG = 0x16000010
F_DIGEST = 0x17000010
F_PVS = 0x03000010


def features_p4info() -> p4i.P4Info:
    """P4Info for the parts of data/features.json the tests drive: ctl (exact on
    cmd.op), acl (ternary cmd.val, range cmd.arg, direct counter), ctr, reg, digest_t."""
    info = p4i.P4Info()
    for aid, name, params in (
        (F_FWD, "MyIngress.fwd", [("port", 9)]),
        (F_DO_COUNT, "MyIngress.do_count", []),
        (F_DO_DIGEST, "MyIngress.do_digest", []),
        (F_ACL_DENY, "MyIngress.acl_deny", []),
        (F_ACL_PERMIT, "MyIngress.acl_permit", [("tag", 32)]),
        (F_NOACTION, "NoAction", []),
        (F_DO_MCAST, "MyIngress.do_mcast", [("grp", 16)]),
        (F_DO_CLONE, "MyIngress.do_clone", [("session", 32), ("port", 9)]),
    ):
        a = info.actions.add()
        a.preamble.id, a.preamble.name, a.preamble.alias = aid, name, name.split(".")[-1]
        for i, (pname, width) in enumerate(params, start=1):
            a.params.add(id=i, name=pname, bitwidth=width)
    mf = p4i.MatchField
    ctl = info.tables.add()
    ctl.preamble.id, ctl.preamble.name, ctl.preamble.alias = F_CTL, "MyIngress.ctl", "ctl"
    ctl.match_fields.add(id=1, name="hdr.cmd.op", bitwidth=8, match_type=mf.EXACT)
    for aid in (F_FWD, F_DO_COUNT, F_DO_DIGEST, F_NOACTION, F_DO_MCAST, F_DO_CLONE):
        ctl.action_refs.add(id=aid)
    ctl.size = 1024
    acl = info.tables.add()
    acl.preamble.id, acl.preamble.name, acl.preamble.alias = F_ACL, "MyIngress.acl", "acl"
    acl.match_fields.add(id=1, name="hdr.cmd.val", bitwidth=32, match_type=mf.TERNARY)
    acl.match_fields.add(id=2, name="hdr.cmd.arg", bitwidth=16, match_type=mf.RANGE)
    for aid in (F_ACL_DENY, F_ACL_PERMIT, F_NOACTION):
        acl.action_refs.add(id=aid)
    acl.direct_resource_ids.append(F_ACL_CTR)
    acl.size = 1024
    dc = info.direct_counters.add()
    dc.preamble.id, dc.preamble.name, dc.preamble.alias = F_ACL_CTR, "MyIngress.acl_ctr", "acl_ctr"
    dc.spec.unit = p4i.CounterSpec.BOTH
    dc.direct_table_id = F_ACL
    c = info.counters.add()
    c.preamble.id, c.preamble.name, c.preamble.alias = F_CTR, "MyIngress.ctr", "ctr"
    c.spec.unit = p4i.CounterSpec.BOTH
    c.size = 8
    r = info.registers.add()
    r.preamble.id, r.preamble.name, r.preamble.alias = F_REG, "MyIngress.reg", "reg"
    r.type_spec.bitstring.bit.bitwidth = 32
    r.size = 16
    vs = info.value_sets.add()
    vs.preamble.id, vs.preamble.name, vs.preamble.alias = F_PVS, "MyParser.pvs", "pvs"
    vs.match.add(id=1, name="ether_type", bitwidth=16, match_type=p4i.MatchField.EXACT)
    vs.size = 4
    d = info.digests.add()
    d.preamble.id, d.preamble.name, d.preamble.alias = F_DIGEST, "digest_t", "digest_t"
    d.type_spec.struct.name = "digest_t"
    st = info.type_info.structs["digest_t"]
    st.members.add(name="val").type_spec.bitstring.bit.bitwidth = 32
    st.members.add(name="port").type_spec.bitstring.bit.bitwidth = 9
    return info


def cmd_packet(op: int, arg: int, val: int) -> bytes:
    """Ethernet (type 0x88b5) + features.p4's cmd header."""
    eth = bytes.fromhex("020000000001") + bytes.fromhex("020000000002") + b"\x88\xb5"
    return eth + bytes([op]) + arg.to_bytes(2, "big") + val.to_bytes(4, "big")


def commit_routed(stub: P4RuntimeStub, device_id: int = 1, election_id: int = 1) -> None:
    """Commits basic.json (with its P4Info) and routes 10.0.2.0/24 to port 2, as the
    primary controller `election_id` (the caller has arbitrated)."""
    req = p4r.SetForwardingPipelineConfigRequest(
        device_id=device_id,
        election_id=to_uint128(election_id),
        action=p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT,
    )
    req.config.p4info.CopyFrom(basic_p4info())
    req.config.p4_device_config = BASIC_JSON.read_bytes()
    stub.SetForwardingPipelineConfig(req)
    write(stub, (INSERT, route(b"\x0a\x00\x02\x00", 24, 2)), election_id=election_id)
