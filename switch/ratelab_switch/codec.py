"""P4Runtime bytestrings <-> unsigned integers, with the field's bit width checked.

The P4Runtime spec (section "Bytestrings") lets a client send a value either in
canonical form (no leading zero bytes) or padded with any number of zero bytes;
the server accepts both as long as the value fits in the field's width and
answers reads in canonical form. A value that does not fit, or an empty
bytestring (zero is b"\\x00"), is refused with INVALID_ARGUMENT: the sections on
match fields, action parameters, register data and packet metadata all ask for
that code (the general "Bytestrings" section mentions OUT_OF_RANGE).
"""

from __future__ import annotations

from .errors import invalid


def decode(data: bytes, width: int, what: str) -> int:
    """Decode a bytestring for a field of `width` bits; INVALID_ARGUMENT if it does not fit."""
    if not data:
        raise invalid(f"{what}: empty bytestring (zero is encoded as one 0x00 byte)")
    value = int.from_bytes(data, "big")
    if value.bit_length() > width:
        raise invalid(f"{what}: value 0x{data.hex()} does not fit in {width} bits")
    return value


def encode(value: int, width: int) -> bytes:
    """Canonical encoding: the shortest bytestring holding `value` (at least one byte)."""
    if value < 0 or value.bit_length() > width:
        raise ValueError(f"value {value} does not fit in {width} bits")
    return value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")


def encode_padded(value: int, width: int) -> bytes:
    """The full-width encoding, ceil(width / 8) bytes (used in packet headers)."""
    return value.to_bytes((width + 7) // 8, "big")


def mask_of(width: int) -> int:
    return (1 << width) - 1


def prefix_mask(prefix_len: int, width: int) -> int:
    """The mask with the top `prefix_len` bits of a `width`-bit field set."""
    return mask_of(width) ^ mask_of(width - prefix_len)
