"""Small builders for BMv2 JSON type/value nodes."""

from __future__ import annotations

from typing import Any

Node = dict[str, Any]


def hexstr_digits(value: int, width: int) -> str:
    """Hex string zero-padded to the byte width of `width` bits ("-0x.." if negative)."""
    nbytes = max(1, (width + 7) // 8)
    digits = format(abs(value), "x").rjust(nbytes * 2, "0")
    return ("-0x" if value < 0 else "0x") + digits


def hexstr(value: int, width: int) -> Node:
    return {"type": "hexstr", "value": hexstr_digits(value, width)}


def boolean(value: bool) -> Node:
    return {"type": "bool", "value": bool(value)}


def field(header: str, name: str) -> Node:
    return {"type": "field", "value": [header, name]}


def op(name: str, left: Node | None, right: Node, cond: Node | None = None) -> Node:
    value: dict[str, Any] = {"op": name, "left": left, "right": right}
    if cond is not None:
        value["cond"] = cond
    return {"type": "expression", "value": value}


def is_op(node: Node) -> bool:
    return node.get("type") == "expression"


def mask(node: Node, width: int) -> Node:
    return op("&", node, hexstr((1 << width) - 1, width))


def wrap(node: Node, width: int, signed: bool) -> Node:
    """Reduce an infinite-precision result to the range of bit<width> / int<width>."""
    if signed:
        return op("two_comp_mod", node, hexstr(width, 32))
    return mask(node, width)


def b2d(node: Node) -> Node:
    if is_op(node) and node["value"]["op"] == "d2b":
        return node["value"]["right"]  # type: ignore[no-any-return]
    return op("b2d", None, node)


def d2b(node: Node) -> Node:
    if is_op(node) and node["value"]["op"] == "b2d":
        return node["value"]["right"]  # type: ignore[no-any-return]
    return op("d2b", None, node)


def param(node: Node) -> Node:
    """A node as a primitive / parser-op parameter: operator nodes are wrapped once more
    ("expression" parameters hold a whole node), action data becomes runtime_data."""
    if node.get("type") == "expression":
        return {"type": "expression", "value": node}
    if node.get("type") == "local":
        return {"type": "runtime_data", "value": node["value"]}
    return node


def primitive(name: str, params: list[Node], source: Node | None = None) -> dict[str, Any]:
    prim: dict[str, Any] = {"op": name, "parameters": params}
    if source is not None:
        prim["source_info"] = source
    return prim
