"""Type checking and name resolution: positive cases (types, links, call info) and
negative cases (clear errors at the right place)."""

from __future__ import annotations

import pytest
from frontend_helpers import HEADERS, check, check_with_headers, control_body, error_of, find, walk
from ratelab_p4c import ast
from ratelab_p4c import types as T


def body_stmts(program: ast.Program, control: str = "C") -> list[ast.Node]:
    c = find(program, control)
    assert isinstance(c, ast.ControlDecl)
    return c.body.statements


def test_every_expression_is_typed_and_paths_resolved() -> None:
    p = check(
        control_body(
            """
        bit<32> x = m.a + 1;
        if (hdr.ipv4.isValid() && m.flag) { hdr.ipv4.ttl = hdr.ipv4.ttl - 1; }
        m.a = (bit<16>) x[15:0] ++ hdr.ipv4.ttl[7:0] ++ 8w0 |+| 3;
        """,
        )
    )
    for node in walk(find(p, "C")):
        if isinstance(node, ast.Expression):
            assert node.type is not None, node
        if isinstance(node, ast.PathExpression):
            assert node.decl is not None, node.name


def test_integer_literal_adopts_width_and_wraps() -> None:
    p = check(control_body("m.c = 300; m.s = -1; m.a = 0xFFFF_FFFF;"))
    a, b, c = body_stmts(p)
    assert a.rhs.type == T.BitsType(8) and a.rhs.const_value == 300 & 0xFF
    assert b.rhs.type == T.BitsType(8, True) and b.rhs.const_value == -1
    assert c.rhs.const_value == 0xFFFFFFFF
    assert any("300" in w and "truncated" in w for w in p.warnings)


def test_names_resolve_to_declarations_with_shadowing() -> None:
    p = check(
        HEADERS
        + """
        const bit<8> K = 3;
        control C(inout headers hdr, inout meta_t m) {
            bit<8> K = 4;
            action a(bit<8> v) { m.c = v + K; }
            apply { { bit<8> v = 1; m.c = v; } m.c = .K; }
        }
        """
    )
    c = find(p, "C")
    local_k = c.locals[0]
    act = c.locals[1]
    rhs = act.body.statements[0].rhs
    assert rhs.left.decl is act.params[0]
    assert rhs.right.decl is local_k
    block, top = c.body.statements
    assert block.statements[1].rhs.decl is block.statements[0]
    assert top.rhs.decl is p.find("K") and top.rhs.const_value == 3


def test_type_vs_typedef() -> None:
    p = check(
        HEADERS
        + """
        typedef bit<9> port_t;
        type bit<9> PortId_t;
        control C(inout headers hdr, inout meta_t m) {
            apply {
                port_t a = 5;
                bit<9> b = a;
                PortId_t c = (PortId_t) b;
                bit<9> d = (bit<9>) c;
            }
        }
        """
    )
    a, _, c, _ = body_stmts(p)
    assert a.type == T.BitsType(9)
    assert isinstance(c.type, T.NewType) and c.type.name == "PortId_t"
    err = error_of(
        HEADERS
        + """
        type bit<9> PortId_t;
        control C(inout headers hdr, inout meta_t m) {
            apply { PortId_t c; bit<9> b = c; }
        }
        """
    )
    assert "expected bit<9>, got PortId_t" in err.message


def test_serializable_enum_values_and_casts() -> None:
    p = check(
        """
        enum bit<8> Proto { TCP = 6, UDP = 17 }
        const Proto P = Proto.UDP;
        const bit<8> V = (bit<8>) Proto.TCP;
        const Proto Q = (Proto) 8w17;
        """
    )
    assert find(p, "P").value.const_value == T.EnumValue("Proto", "UDP", 17)
    assert find(p, "V").value.const_value == 6
    assert find(p, "Q").value.const_value == T.EnumValue("Proto", "UDP", 17)
    # Serializable enums convert implicitly to their underlying type, never back.
    p = check(
        HEADERS
        + "enum bit<8> E { A = 1, B = 2 }\n"
        + "control C(inout headers hdr, inout meta_t m) {\n"
        + "    apply { m.c = E.B; if (hdr.ipv4.proto == E.A || E.B == m.c) { m.c = 0; } }\n"
        + "}\n"
    )
    assign, iff = body_stmts(p)
    assert assign.rhs.type == T.BitsType(8) and assign.rhs.const_value == 2
    assert iff.cond.left.right.type == T.BitsType(8)
    assert "type mismatch" in error_of("enum bit<8> E { A = 1 } const E X = 8w1;").message
    assert (
        "cannot combine"
        in error_of(
            "enum bit<8> E { A = 1 } enum bit<8> F { A = 1 } const bool X = E.A == F.A;"
        ).message
    )


def test_bool_is_not_bit1() -> None:
    err = error_of(control_body("bit<1> x = 1; if (x) { }"))
    assert err.message == "condition must be bool, got bit<1>"
    p = check(control_body("bit<1> x = 1; bool b = (bool) x; x = (bit<1>) b;"))
    assert body_stmts(p)[1].init.type == T.BOOL


def test_struct_valued_initializers() -> None:
    p = check(
        HEADERS
        + """
        struct pair_t { bit<8> x; bit<16> y; }
        control C(inout headers hdr, inout meta_t m) {
            apply {
                pair_t p = { 1, 2 };
                pair_t q = { y = 3, x = 4 };
                pair_t r = pair_t { x = 5, y = 6 };
                hdr.eth = { 1, 2, 0x800 };
            }
        }
        """
    )
    p_, q, r, e = body_stmts(p)
    assert p_.init.type.name == "pair_t" and p_.init.const_value == {"x": 1, "y": 2}
    assert q.init.const_value == {"x": 4, "y": 3}
    assert r.init.type.name == "pair_t"
    assert e.rhs.type.name == "eth_t"
    assert (
        "missing field"
        in error_of(
            HEADERS
            + "struct pair_t { bit<8> x; bit<16> y; }\n"
            + "control C(inout headers hdr, inout meta_t m) { apply { pair_t p = { y = 3 }; } }"
        ).message
    )


def test_generic_extern_function_inference() -> None:
    p = check(
        control_body(
            "hash(m.b, HashAlgorithm.crc16, 16w0, { hdr.ipv4.src, hdr.ipv4.dst }, 32w1024);"
            "random(m.a, 0, 100);"
        )
    )
    h, r = body_stmts(p)
    info = h.call.call
    assert info.kind == "extern_function" and info.name == "hash"
    assert info.type_args == [
        T.BitsType(16),
        T.BitsType(16),
        T.TupleType((T.BitsType(32), T.BitsType(32))),
        T.BitsType(32),
    ]
    assert next(pi.type for pi in info.func_type.params) == T.BitsType(16)
    rinfo = r.call.call
    assert rinfo.type_args == [T.BitsType(32)]
    assert r.call.args[1].value.type == T.BitsType(32)


def test_generic_inference_needs_widths() -> None:
    err = error_of(control_body("hash(m.b, HashAlgorithm.crc16, 0, { hdr.ipv4.src }, 1024);"))
    assert "does not match" in err.message or "infer" in err.message


def test_extern_instances_methods_and_overloads() -> None:
    p = check(
        control_body(
            """
            r.read(m.a, 3);
            r.write(m.a, m.a + 1);
            c.count(5);
            mark_to_drop();
            mark_to_drop(sp);
            log_msg("x");
            log_msg("y={}", {m.a});
            """,
            locals_="register<bit<32>>(16) r; counter(8, CounterType.packets) c; bit<9> sp = 0;",
        )
    )
    stmts = body_stmts(p)
    read = stmts[0].call.call
    assert read.kind == "extern_method" and read.name == "read"
    assert read.instance.name == "r"
    assert read.func_type.params[0].type == T.BitsType(32)
    assert stmts[2].call.call.instance.name == "c"
    assert len(stmts[3].call.call.decl.params) == 0
    assert len(stmts[4].call.call.decl.params) == 1
    assert stmts[6].call.call.type_args == [T.TupleType((T.BitsType(32),))]
    r = find(p, "C").locals[0]
    assert r.type == T.ExternType("register", (T.BitsType(32),))
    assert r.ctor is not None and r.params_to_args[0].value.const_value == 16


def test_header_and_stack_operations() -> None:
    p = check(
        HEADERS
        + """
        header lbl_t { bit<20> label; bit<3> tc; bit<1> bos; bit<8> ttl; }
        struct hs { lbl_t[4] lbl; eth_t eth; }
        control C(inout hs h, inout meta_t m) {
            apply {
                h.lbl.push_front(1);
                h.lbl[0].setValid();
                h.lbl[0].label = 20w5;
                h.lbl.pop_front(2);
                m.a = h.lbl.lastIndex;
                m.a = h.lbl.size;
                if (h.lbl[m.c].isValid()) { h.lbl.last.ttl = 1; }
            }
        }
        """
    )
    s = body_stmts(p)
    assert s[0].call.call.kind == "stack_method"
    assert s[1].call.call.kind == "header_method"
    assert s[5].rhs.const_value == 4
    assert (
        "out of bounds"
        in error_of(
            HEADERS
            + "header l_t { bit<8> a; } struct hs { l_t[2] l; }\n"
            + "control C(inout hs h) { apply { h.l[2].a = 1; } }"
        ).message
    )


def test_tables_hit_miss_and_action_run_switch() -> None:
    p = check(
        control_body(
            """
            if (t.apply().hit) { m.c = 1; }
            switch (t.apply().action_run) {
                set: { m.c = 2; }
                NoAction: { }
            }
            """,
            locals_="""
            action set(bit<8> v) { m.c = v; }
            table t {
                key = { hdr.ipv4.dst : lpm; m.flag : exact; }
                actions = { set; NoAction; }
                default_action = set(7);
                const entries = {
                    (0x0a000000 &&& 0xff000000, true) : set(1);
                    (_, false) : NoAction();
                }
                size = 64;
            }
            """,
        )
    )
    c = find(p, "C")
    t = c.locals[1]
    assert t.default_action.decl is c.locals[0]
    assert t.default_action.params_to_args[0].value.const_value == 7
    assert t.entries[0].keys[0].value.type == T.BitsType(32)
    assert t.entries[1].keys[0].type == T.SetType(T.BitsType(32))
    iff, sw = c.body.statements
    assert iff.cond.type == T.BOOL
    assert iff.cond.expr.call.kind == "table_apply"
    assert isinstance(sw.expr.type, T.ActionEnumType)
    assert sw.expr.type.actions == ["set", "NoAction"]
    assert sw.cases[0].label.decl is c.locals[0]


@pytest.mark.parametrize(
    ("locals_", "body", "message"),
    [
        (
            "table t { actions = { a; } default_action = b; } action a() {} action b() {}",
            "",
            "not declared",
        ),
        (
            "action a() {} action b() {} table t { actions = { a; } default_action = b; }",
            "",
            "default action 'b' is not in the actions list",
        ),
        (
            "table t { key = { m.a : fuzzy; } actions = { NoAction; } }",
            "",
            "'fuzzy' is not a declared match_kind",
        ),
        (
            "action a(bit<8> v) {} table t { actions = { a; } default_action = a; }",
            "",
            "needs 1 argument(s)",
        ),
        ("action a() {} table t { actions = { a; a; } }", "", "appears twice"),
        (
            "table t { key = { m.a : exact; } actions = { NoAction; }"
            " const entries = { (1, 2) : NoAction(); } }",
            "",
            "entry has 2 key(s)",
        ),
        ("table t { actions = { NoAction; } size = m.a; }", "", "table size"),
        ("action a() { t.apply(); } table t { actions = { NoAction; } }", "", "not declared"),
        (
            "table t { actions = { NoAction; } } action a() { t.apply(); }",
            "",
            "cannot be applied inside actions",
        ),
        (
            "action a() {} table t { actions = { a; } }",
            "switch (t.apply().action_run) { b: {} }",
            "not an action of table t",
        ),
    ],
)
def test_table_errors(locals_: str, body: str, message: str) -> None:
    assert message in error_of(control_body(body, locals_=locals_)).message


def test_parser_select_value_set_lookahead_verify() -> None:
    p = check(
        HEADERS
        + """
        parser P(packet_in pk, out headers hdr, inout meta_t m) {
            value_set<bit<16>>(4) vs;
            state start {
                pk.extract(hdr.eth);
                bit<8> peek = pk.lookahead<bit<8>>();
                pk.advance(32w8);
                transition select(hdr.eth.etype, peek) {
                    (0x800, 0x45): parse_ipv4;
                    (vs, _): accept;
                    (0x86dd &&& 0xffff, 1 .. 5): accept;
                    default: reject;
                }
            }
            state parse_ipv4 {
                pk.extract(hdr.ipv4);
                verify(hdr.ipv4.ihl >= 5, error.HeaderTooShort);
                transition select(hdr.ipv4.proto) { vs2: accept; default: accept; }
            }
        }
        """.replace("vs2", "6")
    )
    par = find(p, "P")
    start = par.state("start")
    look = start.statements[1].init
    assert look.type == T.BitsType(8) and look.call.type_args == [T.BitsType(8)]
    sel = start.transition
    assert sel.cases[0].state.decl is par.state("parse_ipv4")
    assert sel.cases[0].keyset.elements[0].const_value == 0x800
    assert sel.cases[1].keyset.elements[0].decl is par.locals[0]
    assert sel.cases[3].state.decl.name == "reject"
    ver = par.state("parse_ipv4").statements[1].call.call
    assert ver.kind == "verify"
    assert par.state("parse_ipv4").statements[1].call.args[1].value.const_value == T.ErrorValue(
        "HeaderTooShort"
    )


@pytest.mark.parametrize(
    ("states", "message"),
    [
        ("state s { transition accept; }", "has no 'start' state"),
        ("state start { transition nowhere; }", "state 'nowhere' is not declared"),
        ("state start { transition start; } state start { transition accept; }", "duplicate state"),
        ("state start { transition select(m.a) { 1: accept; (1, 2): accept; } }", "keyset"),
        ("state start { transition select(5) { 1: accept; } }", "select keys need a width"),
        ("state start { transition select(m.c) { m.c: accept; } }", "compile-time constants"),
        ("state start { exit; }", "'exit' is not allowed in a parser"),
    ],
)
def test_parser_errors(states: str, message: str) -> None:
    src = HEADERS + f"parser P(packet_in pk, out headers hdr, inout meta_t m) {{ {states} }}"
    assert message in error_of(src).message


def test_main_package_instantiation_infers_type_arguments() -> None:
    p = check_with_headers(
        """
        parser MyP(packet_in b, out headers h, inout meta_t m) {
            state start { transition accept; }
        }
        control MyI(inout headers h, inout meta_t m) { apply { } }
        control MyD(packet_out b, in headers h) { apply { b.emit(h.eth); } }
        Switch(MyP(), MyI(), MyD()) main;
        """
    )
    assert p.main is not None and p.main.name == "main"
    assert isinstance(p.main.type, T.SpecializedType)
    assert [str(t) for t in p.main.type.type_args] == ["headers", "meta_t"]
    assert p.main.args[0].value.decl is find(p, "MyP")
    assert p.main.decl is find(p, "Switch")


def test_package_argument_signature_mismatch() -> None:
    err = error_of(
        HEADERS
        + """
        parser MyP(packet_in b, out headers h, inout meta_t m) {
            state start { transition accept; }
        }
        control MyI(inout headers h, in meta_t m) { apply { } }
        control MyD(packet_out b, in headers h) { apply { } }
        Switch(MyP(), MyI(), MyD()) main;
        """
    )
    assert "argument 'ig' of 'Switch'" in err.message
    assert (err.location.line, err.location.col) == (HEADERS.count("\n") + 7, 23)


def test_functions_and_direct_action_calls() -> None:
    p = check(
        HEADERS
        + """
        bit<8> max8(in bit<8> a, in bit<8> b) { if (a > b) { return a; } return b; }
        control C(inout headers hdr, inout meta_t m) {
            action set(inout bit<8> x, bit<8> v) { x = v; }
            apply { m.c = max8(m.c, 4); set(m.c, 9); }
        }
        """
    )
    f_call, a_call = body_stmts(p)
    assert f_call.rhs.call.kind == "function" and f_call.rhs.type == T.BitsType(8)
    assert a_call.call.call.kind == "action"
    assert a_call.call.args[1].value.type == T.BitsType(8)
    assert (
        "does not return a value"
        in error_of("bit<8> f(in bit<8> a) { if (a == 1) { return a; } }").message
    )


@pytest.mark.parametrize(
    ("body", "message", "col"),
    [
        ("m.b = m.c;", "type mismatch in assignment: expected bit<16>, got bit<8>", 15),
        ("m.b = m.b + m.c;", "'+': operands have different types bit<16> and bit<8>", 15),
        ("m.a = nothing;", "'nothing' is not declared", 15),
        ("m.flag = 1;", "expected bool, got int", 18),
        ("m.a = m.a ++ 1;", "concatenation needs operands with a width", 22),
        ("m.a = m.a[32:0];", "out of range", 15),
        ("m.b = (bit<16>) m.s;", "cannot cast int<8> to bit<16>", 15),
        ("m.c = (bit<8>) (int<16>) m.s;", "cannot cast int<16> to bit<8>", 15),
        ("hdr.eth.nope = 1;", "eth_t has no field 'nope'", 9),
        ("m.c = hdr.eth;", "expected bit<8>, got eth_t", 15),
        ("1 = m.c;", "not assignable", 9),
        ("hdr.ipv4.isValid() = true;", "not assignable", 9),
        ("m.c = m.flag ? 1 : 2;", "", 0),
        ("m.c = m.flag ? 8w1 : 16w2;", "'?:' branches have different types", 15),
        ("m.c = -m.flag;", "numeric operand", 15),
        ("m.flag = !m.c;", "needs a bool operand", 18),
        ("m.c = m.c << m.s;", "shift amount must be unsigned", 22),
        ("m.a = 1 << m.c;", "give it a width", 15),
        ("bit<8> x; bit<8> x;", "re-declaration of 'x'", 26),
        ("m.c.foo();", "cannot access member 'foo'", 9),
        ("random(m.c, 1);", "'random' called with 2 argument(s); expected 3", 9),
        ("random(m.c + 1, 1, 2);", "not assignable", 16),
        ("hdr.eth.extract();", "eth_t has no field 'extract'", 9),
        ("m.c = 8w1 / 8w0;", "division by zero", 15),
    ],
)
def test_expression_errors(body: str, message: str, col: int) -> None:
    src = control_body("        " + body)
    if not message:
        p = check(src)
        assert body_stmts(p)[0].rhs.type == T.BitsType(8)
        return
    err = error_of(src)
    assert message in err.message
    line = src.count("\n", 0, src.index(body)) + 1
    assert err.location.file == "test.p4"
    assert (err.location.line, err.location.col) == (line, col)


def test_directions_in_out_inout() -> None:
    base = (
        HEADERS
        + "control D(in bit<8> i, out bit<8> o, inout bit<8> io, inout meta_t m)"
        + " { %s apply { %s } }"
    )
    check(base % ("", "o = i; io = io + i; m.c = io;"))
    assert "cannot assign to 'in' parameter 'i'" in error_of(base % ("", "i = 1;")).message
    err = error_of(base % ("action a(bit<8> d) { d = 1; }", ""))
    assert "cannot assign to directionless parameter 'd'" in err.message
    err = error_of(base % ("", "random(i, 8w0, 8w1);"))
    assert "cannot assign to 'in' parameter 'i'" in err.message


def test_errors_and_match_kinds_merge_across_declarations() -> None:
    p = check("error { Extra1 } error { Extra2 } const error E = error.Extra2;")
    assert p.errors[-2:] == ["Extra1", "Extra2"]
    assert "range" in p.match_kinds and "exact" in p.match_kinds
    assert find(p, "E").value.const_value == T.ErrorValue("Extra2")
    assert "declared twice" in error_of("error { NoError }").message
    assert "error.Missing is not declared" in error_of("const error E = error.Missing;").message


def test_annotations_are_typed_and_checked() -> None:
    p = check(
        'const bit<8> FL = 2; @name(".x") @id(3 + 4) @field_list(FL) @whatever(zz)'
        " const bit<8> Y = 1;"
    )
    y = find(p, "Y")
    assert y.annotation("id").int_arg() == 7
    assert y.annotation("field_list").expressions[0].const_value == 2
    assert y.annotation("whatever").expressions[0].type is None
    assert "@name needs a string" in error_of("@name(5) const bit<8> Y = 1;").message


def test_unsupported_constructs_are_reported() -> None:
    assert "not supported" in error_of("struct S<T> { T f; }").message
    assert "not supported" in error_of("T id<T>(in T x) { return x; }").message
    assert (
        "not supported"
        in error_of(
            HEADERS + "header h2 { bit<8> a; } struct s2 { h2 h; }\n"
            "control C(inout s2 s) { apply { bit<32> x = s.h.minSizeInBits(); } }"
        ).message
    )


MISC = """
header opt_t { varbit<320> data; }
header_union ip_u { ipv4_t v4; eth_t e; }
struct hs { eth_t eth; ipv4_t ipv4; opt_t opt; ip_u u; }
extern direct_counter { direct_counter(CounterType type); void count(); }
extern action_selector {
    action_selector(HashAlgorithm algorithm, bit<32> size, bit<32> outputWidth);
}
parser Sub(packet_in pk, inout hs h) {
    state start {
        pk.extract(h.ipv4);
        pk.extract(h.opt, (bit<32>)(h.ipv4.ihl - 5) * 32);
        transition accept;
    }
}
parser P(packet_in pk, out hs h, inout meta_t m) {
    Sub() sub;
    state start {
        pk.extract(h.eth);
        sub.apply(pk, h);
        h.u.v4.setValid();
        transition select(h.u.v4.isValid()) { true: accept; false: reject; }
    }
}
control Inner(inout hs h) { apply { h.eth.etype = 1; } }
control C(inout hs h, inout meta_t m) {
    Inner() inner;
    direct_counter(CounterType.packets) dc;
    action a(bit<9> p) { dc.count(); }
    table t {
        key = { h.eth.dst : exact; h.eth.src : selector; }
        actions = { a; NoAction; }
        counters = dc;
        implementation = action_selector(HashAlgorithm.crc16, 32w128, 32w16);
        const entries = { @priority(3) (1, 2) : a(3); }
    }
    apply {
        inner.apply(h);
        t.apply();
        switch (m.c) { 1: { m.a = 1; } 2: 3: { m.a = 2; } default: { } }
        if (h.u.isValid()) { exit; }
    }
}
"""


def test_sub_parsers_controls_unions_varbit_and_table_properties() -> None:
    p = check(HEADERS + MISC)
    par = find(p, "P")
    sub_call = par.state("start").statements[1].call.call
    assert sub_call.kind == "parser_apply" and sub_call.instance is par.locals[0]
    sub = find(p, "Sub")
    two_arg_extract = sub.state("start").statements[1].call.call
    assert len(two_arg_extract.decl.params) == 2
    assert two_arg_extract.type_args == [find(p, "opt_t").resolved]
    c = find(p, "C")
    inner_call, _, sw, iff = c.body.statements
    assert inner_call.call.call.kind == "control_apply"
    t = c.locals[3]
    props = {pr.name: pr.value for pr in t.properties if pr.value is not None}
    assert props["counters"].decl is c.locals[1]
    assert isinstance(props["implementation"], ast.ConstructorCall)
    assert props["implementation"].type.name == "action_selector"
    assert t.entries[0].annotation("priority").int_arg() == 3
    assert [case.label.const_value for case in sw.cases[:3]] == [1, 2, 3]
    assert sw.cases[1].body is None
    assert iff.cond.call.kind == "header_method"


def test_generic_extern_instance_type_arguments_are_inferred() -> None:
    src = """
        extern Reg<T, I> { Reg(bit<32> n); Reg(bit<32> n, T init);
                           void read(out T v, in I i); void write(in I i, in T v); }
        control C(inout meta_t m) {
            Reg(8) r;
            Reg(8, 16w0) r2;
            apply { r.read(m.a, m.c); r.write(m.c, m.a); r2.read(m.b, m.b); }
        }
    """
    p = check(HEADERS + src)
    r, r2 = find(p, "C").locals
    assert r.type == T.ExternType("Reg", (T.BitsType(32), T.BitsType(8)))
    assert r2.type.type_args[0] == T.BitsType(16)
    bad = src.replace("r.write(m.c, m.a)", "r.write(m.c, m.b)")
    assert (
        "does not match" in error_of(HEADERS + bad).message
        or "mismatch" in error_of(HEADERS + bad).message
    )


@pytest.mark.parametrize(
    ("src", "message"),
    [
        (
            "extern R<T, I> { R(bit<32> n); } control C() { R<bit<8>, _>(4) r; apply {} }",
            "'_' (inferred) type arguments are not supported",
        ),
        (
            "extern A { A(); abstract void f(); } control C() { A() a; apply {} }",
            "abstract methods is not supported",
        ),
        ("control C() { apply { C.apply(); } }", "direct application"),
        ("header h { bit<8> a; } control C(inout h x) { apply { x.a = this; } }", "'this'"),
    ],
)
def test_unsupported_is_an_error(src: str, message: str) -> None:
    assert message in error_of(src).message


def test_direct_type_invocation_of_a_control() -> None:
    p = check(
        "control Inc(inout bit<8> v) { apply { v = v + 1; } }\n"
        "control C(inout bit<8> x) { apply { Inc.apply(x); Inc.apply(x); } }"
    )
    c = find(p, "C")
    assert isinstance(c, ast.ControlDecl)
    calls = [s.call.call for s in c.body.statements]
    assert [k.kind for k in calls] == ["control_apply", "control_apply"]
    assert all(k.decl is find(p, "Inc") and k.instance is None for k in calls)


@pytest.mark.parametrize(
    ("src", "message"),
    [
        ("control D()(bit<8> n) { apply {} } control C() { apply { D.apply(); } }", "constructor"),
        ("parser P() { state start { transition accept; } } "
         "parser Q() { state start { P.apply(); transition accept; } }", "only for controls"),
    ],
)  # fmt: skip
def test_direct_type_invocation_limits(src: str, message: str) -> None:
    assert message in error_of(src).message


def test_header_fields_may_be_fixed_width_structs() -> None:
    p = check(
        "enum bit<2> E { A = 1 } type bit<3> T;\n"
        "struct in_t { bit<1> a; bool b; E e; T t; }\n"
        "struct out_t { in_t x; bit<4> y; }\n"
        "header h { bit<8> f; out_t s; }"
    )
    ht = find(p, "h").resolved
    assert [f.name for f in ht.fields] == ["f", "s"]
    for bad in ("varbit<8> v;", "error e;", "tuple<bit<8>> t;"):
        err = error_of(f"struct s_t {{ bit<1> a; {bad} }} header h {{ s_t s; }}")
        assert "header field 's' cannot have type" in err.message, err.message


def test_static_assert_is_evaluated() -> None:
    decls = "extern bool static_assert(bool check, string msg); const bit<8> W = 8;\n"
    p = check(decls + 'const bool OK = static_assert(W == 8, "width");')
    assert find(p, "OK").value.const_value is True
    err = error_of(decls + 'const bool BAD = static_assert(W > 8, "too narrow");')
    assert err.message == "static_assert failed: too narrow"
