"""Shared helpers for the front-end unit tests: a small inline core/architecture prelude
(so the tests do not depend on p4include/) and check/expect-error shortcuts."""

from __future__ import annotations

import pytest
from ratelab_p4c import ast
from ratelab_p4c.errors import CompileError
from ratelab_p4c.frontend import parse_and_check_text

PRELUDE = """
error { NoError, PacketTooShort, NoMatch, StackOutOfBounds, HeaderTooShort }
extern packet_in {
    void extract<T>(out T hdr);
    void extract<T>(out T variableSizeHeader, in bit<32> variableFieldSizeInBits);
    T lookahead<T>();
    void advance(in bit<32> sizeInBits);
    bit<32> length();
}
extern packet_out { void emit<T>(in T hdr); }
extern void verify(in bool check, in error toSignal);
action NoAction() {}
match_kind { exact, ternary, lpm }
match_kind { range, optional, selector }
enum HashAlgorithm { crc32, crc16, identity, csum16 }
enum CounterType { packets, bytes, packets_and_bytes }
extern counter {
    counter(bit<32> size, CounterType type);
    void count(in bit<32> index);
}
extern register<T> {
    register(bit<32> size);
    void read(out T result, in bit<32> index);
    void write(in bit<32> index, in T value);
}
extern void hash<O, T, D, M>(out O result, in HashAlgorithm algo, in T base, in D data, in M max);
extern void random<T>(out T result, in T lo, in T hi);
extern void mark_to_drop();
extern void mark_to_drop(inout bit<9> spec);
extern void log_msg(string msg);
extern void log_msg<T>(string msg, in T data);
extern void update_checksum<T, O>(in bool condition, in T data, inout O checksum,
                                  HashAlgorithm algo);
parser Parser<H, M>(packet_in b, out H parsedHdr, inout M meta);
control Ingress<H, M>(inout H hdr, inout M meta);
control Deparser<H>(packet_out b, in H hdr);
package Switch<H, M>(Parser<H, M> p, Ingress<H, M> ig, Deparser<H> dep);
"""

# Line markers make locations in test sources start at line 1 of "test.p4".
MARK = '# 1 "test.p4"\n'

HEADERS = """
header eth_t { bit<48> dst; bit<48> src; bit<16> etype; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> tos; bit<16> len; bit<16> id; bit<3> flags;
    bit<13> frag; bit<8> ttl; bit<8> proto; bit<16> csum; bit<32> src; bit<32> dst;
}
struct headers { eth_t eth; ipv4_t ipv4; }
struct meta_t { bit<32> a; bit<16> b; bit<8> c; bool flag; int<8> s; }
"""


def check(src: str) -> ast.Program:
    """Type-check `src` after the prelude; source lines are numbered from 1."""
    return parse_and_check_text(PRELUDE + MARK + src, "<prelude>")


def check_with_headers(src: str) -> ast.Program:
    return check(HEADERS + src)


def error_of(src: str) -> CompileError:
    with pytest.raises(CompileError) as info:
        check(src)
    return info.value


def control_body(body: str, locals_: str = "") -> str:
    """A control over the standard test headers/metadata with the given apply body."""
    return (
        HEADERS
        + "control C(inout headers hdr, inout meta_t m) {\n"
        + locals_
        + "\n    apply {\n"
        + body
        + "\n    }\n}\n"
    )


def find(program: ast.Program, name: str) -> ast.Node:
    node = program.find(name)
    assert node is not None, name
    return node


def walk(node: object):
    """All AST nodes reachable from node (depth first)."""
    seen: set[int] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, list):
            stack.extend(reversed(n))
            continue
        if not isinstance(n, ast.Node) or id(n) in seen:
            continue
        seen.add(id(n))
        yield n
        for k, v in vars(n).items():
            if k in ("decl", "parent", "resolved", "type"):
                continue
            if isinstance(v, (ast.Node, list)):
                stack.append(v)
