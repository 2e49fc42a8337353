"""ForwardingPipelineConfig.p4_device_config -> the BMv2 JSON program bytes.

Clients send either the JSON itself (p4runtime-shell, finsy, most scripts) or
the legacy PI wrapper `p4.tmp.P4DeviceConfig` that older BMv2 tutorials use:

    message P4DeviceConfig {
      bool reassign = 1;
      message Extras { map<string, string> kv = 1; }
      Extras extras = 2;
      bytes device_data = 3;   // the BMv2 JSON
    }

The wrapper is decoded from the protobuf wire format directly (three fields do
not justify generated code). A JSON text starts with '{' after optional white
space; 0x7b is no valid first tag of the wrapper, so the two never collide.
"""

from __future__ import annotations

from .errors import invalid

_WS = b" \t\r\n"


def unwrap_device_config(data: bytes) -> bytes:
    """Return the BMv2 JSON held in `data`; INVALID_ARGUMENT if it holds neither form."""
    if not data:
        raise invalid("p4_device_config is empty")
    if data.lstrip(_WS).startswith(b"{"):
        return data
    device_data = _device_data_of_wrapper(data)
    if device_data is None:
        raise invalid("p4_device_config is neither BMv2 JSON nor a P4DeviceConfig message")
    if not device_data.lstrip(_WS).startswith(b"{"):
        raise invalid("P4DeviceConfig.device_data does not hold a BMv2 JSON program")
    return device_data


def _varint(data: bytes, pos: int) -> tuple[int, int] | None:
    value = 0
    shift = 0
    while pos < len(data) and shift < 64:
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7
    return None


def _device_data_of_wrapper(data: bytes) -> bytes | None:
    """Walk the wrapper's fields; None unless it parses fully and has device_data."""
    pos = 0
    device_data: bytes | None = None
    while pos < len(data):
        tag = _varint(data, pos)
        if tag is None:
            return None
        key, pos = tag
        field_no, wire_type = key >> 3, key & 7
        if field_no == 1 and wire_type == 0:  # reassign
            v = _varint(data, pos)
            if v is None:
                return None
            pos = v[1]
        elif field_no in (2, 3) and wire_type == 2:  # extras, device_data
            n = _varint(data, pos)
            if n is None:
                return None
            length, pos = n
            if pos + length > len(data):
                return None
            if field_no == 3:
                device_data = data[pos : pos + length]
            pos += length
        else:
            return None
    return device_data


def wrap_device_config(json_bytes: bytes, reassign: bool = True) -> bytes:
    """Build the legacy wrapper (for tests and for clients of older BMv2 setups)."""
    out = bytearray()
    if reassign:
        out += b"\x08\x01"
    out.append(0x1A)
    n = len(json_bytes)
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            break
    out += json_bytes
    return bytes(out)
