"""The minimal set of table writes that takes a switch from one state to another.

States are lists of the model's `TableEntry` (`ratelab_model.p4_entries`), so
the diff of two configurations is the diff of what they install: an entry is
identified by (table, key); one whose action or parameters changed is
modified, one that appeared is inserted, one that went away is deleted, and
an unchanged one is not touched. A keyless entry (a table's default action)
always exists on the switch, so it is only ever modified.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from ratelab_model.p4_entries import TableEntry

from ratelab_ctl.configfile import ControllerConfig
from ratelab_ctl.priority import config_entries

ChangeKind = Literal["insert", "modify", "delete"]
_ORDER = {"delete": 0, "modify": 1, "insert": 2}


@dataclass(frozen=True)
class Change:
    kind: ChangeKind
    entry: TableEntry


def _key(e: TableEntry) -> tuple[str, tuple[object, ...]]:
    return e.table, e.key


def initial_changes(entries: Iterable[TableEntry]) -> list[Change]:
    """Install `entries` on a freshly pushed pipeline."""
    return [Change("modify" if not e.key else "insert", e) for e in entries]


def diff_entries(old: Iterable[TableEntry], new: Iterable[TableEntry]) -> list[Change]:
    """Deletes first, then modifies, then inserts (so a full table has room), each
    group in the order of `new` (deletes in the order of `old`)."""
    old_by_key = {_key(e): e for e in old}
    new_by_key = {_key(e): e for e in new}
    changes: list[Change] = []
    for k, e in old_by_key.items():
        if k not in new_by_key and e.key:
            changes.append(Change("delete", e))
    for k, e in new_by_key.items():
        before = old_by_key.get(k)
        if before is None:
            changes.append(Change("modify" if not e.key else "insert", e))
        elif before != e:
            changes.append(Change("modify", e))
    changes.sort(key=lambda c: _ORDER[c.kind])
    return changes


def summarize(changes: Sequence[Change], tables: bool = False) -> str:
    """`1 delete, 2 modify` (and which tables): one line for progress output."""
    if not changes:
        return "no change"
    counts: dict[str, int] = {}
    for c in changes:
        counts[c.kind] = counts.get(c.kind, 0) + 1
    text = ", ".join(f"{n} {k}" for k, n in counts.items())
    if tables:
        names = sorted({c.entry.table.rsplit(".", 1)[-1] for c in changes})
        text += f" ({', '.join(names)})"
    return text


def diff_configs(old: ControllerConfig, new: ControllerConfig) -> list[Change]:
    return diff_entries(config_entries(old), config_entries(new))


PORT_TABLE = "RouterIngress.port_config"
_RED_ENABLED, _SEED = 3, 9  # positions in set_port's parameters (p4_entries.port_entries)


def seed_notes(old: Iterable[TableEntry], changes: Iterable[Change]) -> list[str]:
    """Changes that reach the tables but not the data-plane state: a RED port's
    rng register keeps its sequence until the pipeline is pushed again
    (docs/ROUTER_MODEL.md), so a new seed is only a note."""
    before = {_key(e): e for e in old if e.table == PORT_TABLE}
    notes = []
    for c in changes:
        prev = before.get(_key(c.entry))
        if c.kind != "modify" or prev is None:
            continue
        both_red = prev.params[_RED_ENABLED] and c.entry.params[_RED_ENABLED]
        if both_red and prev.params[_SEED] != c.entry.params[_SEED]:
            notes.append(
                f"port {c.entry.key[0]}: the new RED seed takes effect after the next pipeline push"
            )
    return notes
