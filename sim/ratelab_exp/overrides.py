"""Overrides on a topology as a dict: `links[1].queue_limit`, as `ratelab-net
--set` paths, plus `[*]` for every item of a list (`flows[*].cc`). A value of
null removes the key (a flow that becomes rbcc has no `cc`)."""

from __future__ import annotations

import copy
import re
from typing import Any

_PART = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)((?:\[(?:\d+|\*)\])*)$")
_INDEX = re.compile(r"\[(\d+|\*)\]")


class OverrideError(Exception):
    """A path that cannot be applied; one line."""


def parse_path(path: str) -> list[str | int]:
    """`flows[*].cc` -> ["flows", "*", "cc"] (indexes as ints)."""
    steps: list[str | int] = []
    if not path:
        raise OverrideError("an empty path")
    for part in path.split("."):
        m = _PART.match(part)
        if m is None:
            raise OverrideError(f"expected a path like links[1].rate or flows[*].cc, got {path!r}")
        steps.append(m.group(1))
        for index in _INDEX.findall(m.group(2)):
            steps.append("*" if index == "*" else int(index))
    return steps


def apply(topology: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """A copy of `topology` with `overrides` applied in order."""
    out = copy.deepcopy(topology)
    for path, value in overrides.items():
        _set(out, parse_path(path), value, path)
    return out


def _set(node: Any, steps: list[str | int], value: Any, path: str) -> None:
    step, rest = steps[0], steps[1:]
    if step == "*":
        if not isinstance(node, list):
            raise OverrideError(f"{path}: [*] needs a list")
        if rest:
            for item in node:
                _set(item, rest, value, path)
        else:
            node[:] = [copy.deepcopy(value) for _ in node]
        return
    if isinstance(step, int):
        if not isinstance(node, list) or step >= len(node):
            raise OverrideError(f"{path}: no item {step}")
        if rest:
            _set(node[step], rest, value, path)
        else:
            node[step] = copy.deepcopy(value)
        return
    if not isinstance(node, dict):
        raise OverrideError(f"{path}: {step!r} is not in a mapping")
    if rest:
        if step not in node:
            node[step] = [] if isinstance(rest[0], int) else {}
        _set(node[step], rest, value, path)
    elif value is None:
        node.pop(step, None)
    else:
        node[step] = copy.deepcopy(value)
