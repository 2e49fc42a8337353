"""Pure helpers: value codec, device-config unwrapping, controller headers, schema."""

from __future__ import annotations

import grpc
import pytest
from finsy.proto.p4.v1 import p4runtime_pb2 as p4r
from ratelab_p4info import MatchKind, ScalarType
from ratelab_switch import codec
from ratelab_switch.device_config import unwrap_device_config, wrap_device_config
from ratelab_switch.errors import P4RuntimeError
from ratelab_switch.packet_io import build_packet_out, parse_packet_in
from ratelab_switch.schema import Schema
from switch_program import A_SET_NHOP, T_ACL, T_LPM, p4info


def test_decode_accepts_canonical_and_padded() -> None:
    assert codec.decode(b"\x01", 9, "f") == 1
    assert codec.decode(b"\x00\x01", 9, "f") == 1
    assert codec.decode(b"\x00\x00\x00\x01", 9, "f") == 1  # extra zero bytes are fine
    assert codec.decode(b"\x01\xff", 9, "f") == 511


@pytest.mark.parametrize("data", [b"\x02\x00", b"\x01\x00\x00", b""])
def test_decode_rejects_values_wider_than_the_field(data: bytes) -> None:
    with pytest.raises(P4RuntimeError) as e:
        codec.decode(data, 9, "port")
    assert e.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert "port" in e.value.message


def test_encode_is_canonical() -> None:
    assert codec.encode(0, 32) == b"\x00"
    assert codec.encode(1, 32) == b"\x01"
    assert codec.encode(0x1FF, 9) == b"\x01\xff"
    with pytest.raises(ValueError):
        codec.encode(512, 9)
    assert codec.prefix_mask(24, 32) == 0xFFFFFF00


def test_device_config_raw_json_passes_through() -> None:
    assert unwrap_device_config(b'  {"a": 1}') == b'  {"a": 1}'


def test_device_config_wrapper_is_unwrapped() -> None:
    program = b'{"pipelines": []}' * 20  # > 127 bytes: a two-byte length varint
    assert unwrap_device_config(wrap_device_config(program)) == program
    assert unwrap_device_config(wrap_device_config(program, reassign=False)) == program
    # An extras field (field 2) before device_data is skipped.
    extras = b"\x12\x04\x0a\x02\x61\x62"
    assert unwrap_device_config(extras + wrap_device_config(program)) == program


@pytest.mark.parametrize("data", [b"", b"\x08", b"\x1a\x05{}", b"\x22\x01x", b"\x1a\x02ab"])
def test_device_config_garbage_is_invalid_argument(data: bytes) -> None:
    with pytest.raises(P4RuntimeError) as e:
        unwrap_device_config(data)
    assert e.value.code == grpc.StatusCode.INVALID_ARGUMENT


def test_schema_lookups_by_id_name_and_alias() -> None:
    s = Schema(p4info())
    assert s.tables[T_LPM].name == "ingress.ipv4_lpm"
    assert s.tables["ipv4_lpm"].id == T_LPM
    assert s.tables[T_ACL].needs_priority
    assert not s.tables[T_LPM].needs_priority
    assert [f.kind for f in s.tables[T_ACL].match_fields] == [
        MatchKind.TERNARY,
        MatchKind.RANGE,
        MatchKind.OPTIONAL,
    ]
    assert [p.bitwidth for p in s.actions[A_SET_NHOP].params] == [9, 48]
    assert s.registers["ingress.last_seen"].value == ScalarType("bitstring", 32)
    assert s.digests["mac_learn_t"].members == (
        ScalarType("bitstring", 48),
        ScalarType("bitstring", 9),
    )
    with pytest.raises(P4RuntimeError) as e:
        s.tables[0x02FFFFFF]
    assert e.value.code == grpc.StatusCode.NOT_FOUND


def test_schema_rejects_duplicate_ids() -> None:
    info = p4info()
    info.tables[1].preamble.id = info.tables[0].preamble.id
    with pytest.raises(P4RuntimeError, match="duplicate id"):
        Schema(info)


def test_packet_out_header_is_packed_msb_first() -> None:
    header = Schema(p4info()).packet_out
    msg = p4r.PacketOut(payload=b"PAYLOAD")
    msg.metadata.add(metadata_id=1, value=b"\x01\x03")  # port 259
    msg.metadata.add(metadata_id=2, value=b"\x00")
    # 9 bits of 259 = 1_0000_0011, then 7 zero bits: 1000 0001 | 1000 0000
    assert build_packet_out(header, msg) == b"\x81\x80PAYLOAD"


def test_packet_out_missing_or_wide_metadata_is_rejected() -> None:
    header = Schema(p4info()).packet_out
    msg = p4r.PacketOut(payload=b"x")
    msg.metadata.add(metadata_id=1, value=b"\x01")
    with pytest.raises(P4RuntimeError, match="_pad is missing"):
        build_packet_out(header, msg)
    msg.metadata.add(metadata_id=2, value=b"\x80")  # 8 bits in a 7-bit field
    with pytest.raises(P4RuntimeError, match="does not fit"):
        build_packet_out(header, msg)


def test_packet_in_header_is_parsed_off() -> None:
    header = Schema(p4info()).packet_in
    msg = parse_packet_in(header, b"\x81\x80DATA")
    assert msg.payload == b"DATA"
    assert [(m.metadata_id, m.value) for m in msg.metadata] == [(1, b"\x01\x03"), (2, b"\x00")]
    with pytest.raises(P4RuntimeError):
        parse_packet_in(header, b"\x81")


def test_enum_bool_and_new_type_values_are_scalars_others_unsupported() -> None:
    info = p4info()
    ti = info.type_info
    ti.serializable_enums["Kind"].underlying_type.bitwidth = 8
    ti.new_types["Port_t"].original_type.bitstring.bit.bitwidth = 9
    st = ti.structs["learn2_t"]
    st.members.add(name="kind").type_spec.serializable_enum.name = "Kind"
    st.members.add(name="port").type_spec.new_type.name = "Port_t"
    st.members.add(name="flag").type_spec.bool.SetInParent()
    d = info.digests.add()
    d.preamble.id, d.preamble.name = 0x17000002, "learn2_t"
    d.type_spec.struct.name = "learn2_t"
    r = info.registers.add()
    r.preamble.id, r.preamble.name = 0x16000002, "hdr_reg"
    r.type_spec.header.name = "some_header_t"
    s = Schema(info)
    assert s.digests["learn2_t"].members == (
        ScalarType("enum", 8),
        ScalarType("bitstring", 9),
        ScalarType("bool", 1),
    )
    assert s.registers["hdr_reg"].value is None  # refused per operation, not per program


def test_scalar_p4data_round_trip() -> None:
    from finsy.proto.p4.v1 import p4data_pb2
    from ratelab_switch.translate import decode_scalar, encode_scalar

    enum = ScalarType("enum", 8)
    assert encode_scalar(3, enum) == p4data_pb2.P4Data(enum_value=b"\x03")
    assert decode_scalar(p4data_pb2.P4Data(enum_value=b"\x03"), enum, "x") == 3
    assert encode_scalar(1, ScalarType("bool", 1)) == p4data_pb2.P4Data(bool=True)
    with pytest.raises(P4RuntimeError, match="expected a enum_value"):
        decode_scalar(p4data_pb2.P4Data(bitstring=b"\x03"), enum, "x")
