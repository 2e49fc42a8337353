"""P4Runtime id assignment: p4c's Jenkins hash, prefixes, @id, probing, aliases."""

from __future__ import annotations

import pytest
from ratelab_p4c import p4rt_ids as ids
from ratelab_p4c.errors import CompileError


@pytest.mark.parametrize(
    ("kind", "name", "expected"),
    [
        # From the p4lang/tutorials basic.p4info.txt that p4c generates.
        (ids.TABLE, "MyIngress.ipv4_lpm", 37375156),
        (ids.ACTION, "NoAction", 21257015),
        (ids.ACTION, "MyIngress.drop", 25652968),
        (ids.ACTION, "MyIngress.ipv4_forward", 28792405),
        # Controller headers are hashed on the header type name.
        (ids.CONTROLLER_HEADER, "packet_in_header_t", 81826293),
    ],
)
def test_hashed_ids_match_p4c(kind: int, name: str, expected: int) -> None:
    alloc = ids.IdAllocator()
    alloc.add(kind, name)
    alloc.assign()
    assert alloc.id_of(kind, name) == expected


def test_jenkins_hash_of_empty_string_is_zero() -> None:
    assert ids.jenkins_one_at_a_time("") == 0


def test_explicit_id_gets_the_prefix_and_wins() -> None:
    alloc = ids.IdAllocator()
    alloc.add(ids.TABLE, "t", explicit_id=5)
    alloc.add(ids.COUNTER, "c", explicit_id=0x12000007)
    alloc.assign()
    assert alloc.id_of(ids.TABLE, "t") == 0x02000005
    assert alloc.id_of(ids.COUNTER, "c") == 0x12000007


def test_collision_with_explicit_id_probes_to_the_next_value() -> None:
    name = "MyIngress.ipv4_lpm"
    hashed = (ids.TABLE << 24) | (ids.jenkins_one_at_a_time(name) & 0xFFFFFF)
    alloc = ids.IdAllocator()
    alloc.add(ids.TABLE, "other", explicit_id=hashed)
    alloc.add(ids.TABLE, name)
    alloc.assign()
    assert alloc.id_of(ids.TABLE, "other") == hashed
    assert alloc.id_of(ids.TABLE, name) == hashed + 1


def test_wrong_prefix_is_an_error() -> None:
    alloc = ids.IdAllocator()
    alloc.add(ids.TABLE, "t", explicit_id=0x01000001)
    with pytest.raises(CompileError, match="wrong 8-bit prefix"):
        alloc.assign()


def test_duplicate_explicit_id_is_an_error() -> None:
    alloc = ids.IdAllocator()
    alloc.add(ids.ACTION, "a", explicit_id=7)
    alloc.add(ids.ACTION, "b", explicit_id=7)
    with pytest.raises(CompileError, match="assigned to multiple"):
        alloc.assign()


def test_ids_do_not_depend_on_declaration_order() -> None:
    names = [f"C.t{i}" for i in range(50)]
    a, b = ids.IdAllocator(), ids.IdAllocator()
    for n in names:
        a.add(ids.TABLE, n)
    for n in reversed(names):
        b.add(ids.TABLE, n)
    a.assign()
    b.assign()
    assert all(a.id_of(ids.TABLE, n) == b.id_of(ids.TABLE, n) for n in names)
    assert len({a.id_of(ids.TABLE, n) for n in names}) == len(names)


def test_aliases_are_shortest_unique_suffixes() -> None:
    got = ids.shortest_unique_suffixes(["I.t", "E.t", "I.sub.u", "NoAction", "I.x.y"])
    assert got == {"I.t": "I.t", "E.t": "E.t", "I.sub.u": "u", "NoAction": "NoAction",
                   "I.x.y": "y"}  # fmt: skip
