"""A small test program: its P4Info and a matching BMv2 JSON skeleton."""

from __future__ import annotations

import json

from finsy.proto.p4.config.v1 import p4info_pb2 as p4i
from finsy.proto.p4.v1 import p4runtime_pb2 as p4r

T_LPM = 0x02000001
T_ACL = 0x02000002
T_SMALL = 0x02000003
T_CONST = 0x02000004
T_KEYLESS = 0x02000005
T_ECMP = 0x02000006
T_NH = 0x02000007
AP_ECMP = 0x11000001
AP_NH = 0x11000002
VS_TYPES = 0x03000001
A_SET_NHOP = 0x01000001
A_DROP = 0x01000002
A_NOACTION = 0x01000003
A_DEFAULT_ONLY = 0x01000004
DC_LPM = 0x13000001
DM_ACL = 0x15000001
C_PORT = 0x12000001
M_PORT = 0x14000001
R_REG = 0x16000001
D_LEARN = 0x17000001
H_PACKET_IN = 0x04000001
H_PACKET_OUT = 0x04000002


def p4info() -> p4i.P4Info:
    info = p4i.P4Info()

    def action(aid: int, name: str, params: list[tuple[int, str, int]]) -> None:
        a = info.actions.add()
        a.preamble.id, a.preamble.name = aid, name
        if "." in name:
            a.preamble.alias = name.split(".")[-1]
        for pid, pname, width in params:
            a.params.add(id=pid, name=pname, bitwidth=width)

    action(A_SET_NHOP, "ingress.set_nhop", [(1, "port", 9), (2, "dmac", 48)])
    action(A_DROP, "ingress.drop", [])
    action(A_NOACTION, "NoAction", [])
    action(A_DEFAULT_ONLY, "ingress.punt", [])

    def table(
        tid: int,
        name: str,
        fields: list[tuple[int, str, int, int]],
        actions: list[tuple[int, int]],
        size: int,
        **extra: object,
    ) -> p4i.Table:
        t = info.tables.add()
        t.preamble.id, t.preamble.name = tid, name
        t.preamble.alias = name.split(".")[-1]
        for fid, fname, width, kind in fields:
            t.match_fields.add(id=fid, name=fname, bitwidth=width, match_type=kind)
        for aid, scope in actions:
            t.action_refs.add(id=aid, scope=scope)
        t.size = size
        for k, v in extra.items():
            setattr(t, k, v)
        return t

    mf = p4i.MatchField
    both = p4i.ActionRef.TABLE_AND_DEFAULT
    lpm = table(
        T_LPM,
        "ingress.ipv4_lpm",
        [(1, "hdr.ipv4.dstAddr", 32, mf.LPM)],
        [(A_SET_NHOP, both), (A_DROP, both), (A_NOACTION, both)],
        1024,
    )
    lpm.direct_resource_ids.append(DC_LPM)
    acl = table(
        T_ACL,
        "ingress.acl",
        [
            (1, "hdr.ethernet.etherType", 16, mf.TERNARY),
            (2, "meta.l4_dport", 16, mf.RANGE),
            (3, "standard_metadata.ingress_port", 9, mf.OPTIONAL),
        ],
        [
            (A_DROP, p4i.ActionRef.TABLE_ONLY),
            (A_NOACTION, both),
            (A_DEFAULT_ONLY, p4i.ActionRef.DEFAULT_ONLY),
        ],
        64,
    )
    acl.direct_resource_ids.append(DM_ACL)
    table(
        T_SMALL,
        "ingress.small",
        [(1, "standard_metadata.ingress_port", 9, mf.EXACT)],
        [(A_SET_NHOP, both), (A_NOACTION, both)],
        2,
    )
    table(
        T_CONST,
        "ingress.fixed",
        [(1, "standard_metadata.ingress_port", 9, mf.EXACT)],
        [(A_DROP, both), (A_NOACTION, both)],
        4,
        is_const_table=True,
        const_default_action_id=A_NOACTION,
    )

    table(T_KEYLESS, "ingress.settings", [], [(A_SET_NHOP, both), (A_NOACTION, both)], 1)
    # Indirect tables: an action selector (groups) and a plain action profile.
    table(
        T_ECMP,
        "ingress.ecmp_t",
        [(1, "hdr.ipv4.dstAddr", 32, mf.LPM)],
        [(A_SET_NHOP, both), (A_NOACTION, both)],
        64,
        implementation_id=AP_ECMP,
    )
    table(
        T_NH,
        "ingress.nh_t",
        [(1, "meta.nexthop", 8, mf.EXACT)],
        [(A_SET_NHOP, both), (A_NOACTION, both)],
        64,
        implementation_id=AP_NH,
    )
    vs = info.value_sets.add()
    vs.preamble.id, vs.preamble.name = VS_TYPES, "ingress.parser.types"
    vs.match.add(id=1, name="ether_type", bitwidth=16, match_type=mf.EXACT)
    vs.size = 3
    for apid, name, tid, selector, size, group_size in (
        (AP_ECMP, "ingress.ecmp", T_ECMP, True, 8, 4),
        (AP_NH, "ingress.nexthops", T_NH, False, 2, 0),
    ):
        ap = info.action_profiles.add()
        ap.preamble.id, ap.preamble.name = apid, name
        ap.table_ids.append(tid)
        ap.with_selector = selector
        ap.size = size
        ap.max_group_size = group_size

    dc = info.direct_counters.add()
    dc.preamble.id, dc.preamble.name = DC_LPM, "ingress.lpm_hits"
    dc.spec.unit = p4i.CounterSpec.BOTH
    dc.direct_table_id = T_LPM
    dm = info.direct_meters.add()
    dm.preamble.id, dm.preamble.name = DM_ACL, "ingress.acl_meter"
    dm.spec.unit = p4i.MeterSpec.BYTES
    dm.direct_table_id = T_ACL
    c = info.counters.add()
    c.preamble.id, c.preamble.name = C_PORT, "ingress.port_pkts"
    c.spec.unit = p4i.CounterSpec.BOTH
    c.size = 16
    m = info.meters.add()
    m.preamble.id, m.preamble.name = M_PORT, "ingress.port_meter"
    m.spec.unit = p4i.MeterSpec.BYTES
    m.size = 4
    r = info.registers.add()
    r.preamble.id, r.preamble.name = R_REG, "ingress.last_seen"
    r.type_spec.bitstring.bit.bitwidth = 32
    r.size = 8

    d = info.digests.add()
    d.preamble.id, d.preamble.name = D_LEARN, "mac_learn_t"
    d.type_spec.struct.name = "mac_learn_t"
    st = info.type_info.structs["mac_learn_t"]
    mem = st.members.add(name="src_mac")
    mem.type_spec.bitstring.bit.bitwidth = 48
    mem = st.members.add(name="port")
    mem.type_spec.bitstring.bit.bitwidth = 9

    for hid, name, field in (
        (H_PACKET_IN, "packet_in", "ingress_port"),
        (H_PACKET_OUT, "packet_out", "egress_port"),
    ):
        h = info.controller_packet_metadata.add()
        h.preamble.id, h.preamble.name = hid, name
        h.metadata.add(id=1, name=field, bitwidth=9)
        h.metadata.add(id=2, name="_pad", bitwidth=7)
    # p4c gives every entity an alias (its shortest unique name); clients rely on it.
    for group in (
        info.tables,
        info.actions,
        info.direct_counters,
        info.direct_meters,
        info.counters,
        info.meters,
        info.registers,
        info.digests,
        info.controller_packet_metadata,
        info.action_profiles,
        info.value_sets,
    ):
        for entity in group:
            if not entity.preamble.alias:
                entity.preamble.alias = entity.preamble.name.split(".")[-1]
    return info


def bmv2_json() -> bytes:
    """Just enough BMv2 JSON for the fake engine and the P4Info cross-check."""
    actions = [
        {"name": "ingress.set_nhop", "id": 0, "runtime_data": [{"name": "port", "bitwidth": 9}]},
        {"name": "ingress.drop", "id": 1, "runtime_data": []},
        {"name": "NoAction", "id": 2, "runtime_data": []},
        {"name": "ingress.punt", "id": 3, "runtime_data": []},
    ]
    tables = [
        {"name": "ingress.ipv4_lpm", "default_entry": {"action_id": 1, "action_data": []}},
        {"name": "ingress.acl", "default_entry": {"action_id": 2, "action_data": []}},
        {"name": "ingress.small", "default_entry": {"action_id": 2, "action_data": []}},
        {"name": "ingress.fixed", "default_entry": {"action_id": 2, "action_data": []}},
        {"name": "ingress.settings", "default_entry": {"action_id": 2, "action_data": []}},
        {"name": "ingress.ecmp_t", "default_entry": {"action_id": 2, "action_data": []}},
        {"name": "ingress.nh_t", "default_entry": {"action_id": 2, "action_data": []}},
    ]
    doc = {"actions": actions, "pipelines": [{"name": "ingress", "tables": tables}]}
    return json.dumps(doc).encode()


# ------------------------------------------------------------ entity builders
def member(mid: int, port: int = 1, profile: int = AP_ECMP, action: int = A_SET_NHOP) -> p4r.Entity:
    m = p4r.ActionProfileMember(action_profile_id=profile, member_id=mid)
    m.action.action_id = action
    if action == A_SET_NHOP:
        m.action.params.add(param_id=1, value=bytes([port]))
        m.action.params.add(param_id=2, value=b"\x01")
    return p4r.Entity(action_profile_member=m)


def group(gid: int, *members: tuple[int, int], profile: int = AP_ECMP) -> p4r.Entity:
    g = p4r.ActionProfileGroup(action_profile_id=profile, group_id=gid)
    for mid, weight in members:
        g.members.add(member_id=mid, weight=weight)
    return p4r.Entity(action_profile_group=g)


def ecmp_entry(prefix: int, *, member_id: int = 0, group_id: int = 0) -> p4r.Entity:
    te = p4r.TableEntry(table_id=T_ECMP)
    te.match.add(field_id=1).lpm.CopyFrom(
        p4r.FieldMatch.LPM(value=prefix.to_bytes(4, "big"), prefix_len=8)
    )
    if member_id:
        te.action.action_profile_member_id = member_id
    if group_id:
        te.action.action_profile_group_id = group_id
    return p4r.Entity(table_entry=te)
