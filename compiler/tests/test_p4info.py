"""P4Info ids: the resource-type prefix, @id, and the values p4c computes (so that ids
are stable across compiles and do not move when unrelated objects are added)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.builder import Builder
from support.integrity import PREFIXES
from support.program import Compiled
from support.runner import PROGRAMS_DIR, compile_file

# Programs without @id annotations: every id must be the one p4c derives from the name.
HASHED_PROGRAMS = [
    "tutorials/basic.p4",
    "tutorials/load_balance.p4",
    "tutorials/mri.p4",
    "tutorials/direct_resources.p4",
    "tutorials/value_set.p4",
    "tutorials/p4runtime_cpu.p4",
    "tutorials/digest_learn.p4",
    "constructs/externs.p4",
    "constructs/tables.p4",
    "constructs/action_profiles.p4",
]


def jenkins_one_at_a_time(name: str) -> int:
    """The hash p4c uses for P4Runtime ids (written out here, independently)."""
    h = 0
    for byte in name.encode():
        h = (h + byte) & 0xFFFFFFFF
        h = (h + (h << 10)) & 0xFFFFFFFF
        h ^= h >> 6
    h = (h + (h << 3)) & 0xFFFFFFFF
    h ^= h >> 11
    h = (h + (h << 15)) & 0xFFFFFFFF
    return h


def p4c_id(prefix: int, name: str) -> int:
    return (prefix << 24) | (jenkins_one_at_a_time(name) & 0xFFFFFF)


# p4c hashes a controller header's type name, not its "packet_in"/"packet_out" name.
HASHED_AS = {"packet_in": "packet_in_header_t", "packet_out": "packet_out_header_t"}


def expected_id(kind: str, name: str) -> int:
    if kind == "controller_packet_metadata":
        name = HASHED_AS[name]
    return p4c_id(PREFIXES[kind], name)


def all_entities(c: Compiled) -> list[tuple[str, int, str]]:
    return [
        (kind, e.preamble.id, e.preamble.name) for kind in PREFIXES for e in getattr(c.p4info, kind)
    ]


def test_hash_matches_published_p4c_ids() -> None:
    """Sanity check of the reference hash against ids p4c printed for the basic tutorial."""
    assert p4c_id(0x01, "NoAction") == 21257015
    assert p4c_id(0x02, "MyIngress.ipv4_lpm") == 37375156
    # a controller header in a published P4Info (type packet_in_header_t)
    assert p4c_id(0x04, "packet_in_header_t") == 81826293


@pytest.mark.parametrize("program", HASHED_PROGRAMS)
def test_ids_are_the_ones_p4c_computes(build: Builder, program: str) -> None:
    c = build(program)
    entities = all_entities(c)
    assert entities
    wrong = [
        f"{kind} {name}: {pid:#010x} != {expected_id(kind, name):#010x}"
        for kind, pid, name in entities
        if pid != expected_id(kind, name)
    ]
    assert wrong == []


def test_explicit_ids_and_the_rest_hashed(build: Builder) -> None:
    c = build("constructs/annotations.p4")
    explicit = {
        "MyIngress.with_id": 0x02000202,
        "MyIngress.set_y": 0x01000101,
        "MyIngress.hits": 0x12000042,
        "MyIngress.flow_state": 0x16000099,
    }
    for kind, pid, name in all_entities(c):
        expected = explicit.get(name, p4c_id(PREFIXES[kind], name))
        assert pid == expected, f"{kind} {name}: {pid:#x} != {expected:#x}"


def test_ids_do_not_move_when_objects_are_added(tmp_path: Path) -> None:
    src = PROGRAMS_DIR / "cli" / "include_and_define.p4"
    inc = ("-I", str(PROGRAMS_DIR / "cli" / "incdir"))
    small = Compiled.load(compile_file(src, tmp_path / "small", inc))
    large = Compiled.load(compile_file(src, tmp_path / "large", (*inc, "-DWITH_ACL")))
    ids_small = {(k, n): i for k, i, n in all_entities(small)}
    ids_large = {(k, n): i for k, i, n in all_entities(large)}
    assert ids_small.items() <= ids_large.items()
    assert len(ids_large) > len(ids_small)


def test_ids_stable_across_compiles(build: Builder, tmp_path: Path) -> None:
    first = build("constructs/externs.p4")
    again = Compiled.load(compile_file(PROGRAMS_DIR / "constructs/externs.p4", tmp_path / "again"))
    assert all_entities(first) == all_entities(again)
    assert first.p4info == again.p4info


def test_aliases_are_shortest_unique_suffixes(build: Builder) -> None:
    c = build("tutorials/load_balance.p4")
    # drop exists in both MyIngress and MyEgress, so its alias must keep the control name
    aliases = {a.preamble.name: a.preamble.alias for a in c.p4info.actions}
    assert aliases["MyIngress.drop"] == "MyIngress.drop"
    assert aliases["MyEgress.drop"] == "MyEgress.drop"
    assert aliases["MyIngress.set_nhop"] == "set_nhop"
    tables = {t.preamble.name: t.preamble.alias for t in c.p4info.tables}
    assert tables["MyIngress.ecmp_group"] == "ecmp_group"
