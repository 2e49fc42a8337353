"""Parser: one or more cases per P4_16 construct (shapes of the produced AST)."""

from __future__ import annotations

import pytest
from ratelab_p4c import ast
from ratelab_p4c.errors import CompileError
from ratelab_p4c.parser import parse_text


def parse(text: str) -> list[ast.Node]:
    return parse_text(text, "t.p4")


def only(text: str) -> ast.Node:
    decls = parse(text)
    return decls[-1]


def expr(text: str, prelude: str = "") -> ast.Expression:
    d = only(prelude + f"const bit<8> X = {text};")
    assert isinstance(d, ast.ConstDecl)
    return d.value


def test_header_struct_union_typedef_type() -> None:
    decls = parse(
        """
        typedef bit<48> mac_t;
        type bit<9> port_t;
        @controller_header("packet_in") header h_t { mac_t a; varbit<32> v; int<4> s; bit b; }
        header_union u_t { h_t x; }
        struct s_t { h_t h; h_t[4] stack; tuple<bit<8>, bool> t; }
        """
    )
    td, nt, h, u, s = decls
    assert isinstance(td, ast.TypedefDecl) and td.name == "mac_t"
    assert isinstance(nt, ast.NewTypeDecl) and nt.name == "port_t"
    assert isinstance(h, ast.HeaderDecl)
    assert h.annotation("controller_header").string_arg() == "packet_in"
    assert [f.name for f in h.fields] == ["a", "v", "s", "b"]
    assert isinstance(h.fields[0].type_ref, ast.NamedTypeRef)
    assert isinstance(h.fields[1].type_ref, ast.VarbitTypeRef)
    assert isinstance(h.fields[2].type_ref, ast.BitTypeRef) and h.fields[2].type_ref.signed
    assert h.fields[3].type_ref.width is None
    assert isinstance(u, ast.HeaderUnionDecl)
    assert isinstance(s.fields[1].type_ref, ast.StackTypeRef)
    assert isinstance(s.fields[2].type_ref, ast.TupleTypeRef)


def test_enums_error_match_kind() -> None:
    e1, e2, err, mk = parse(
        """
        enum Color { Red, Green, }
        enum bit<8> Proto { TCP = 6, UDP = 17 }
        error { Oops, Bad }
        match_kind { exact, lpm }
        """
    )
    assert isinstance(e1, ast.EnumDecl) and [m.name for m in e1.members] == ["Red", "Green"]
    assert isinstance(e2.underlying, ast.BitTypeRef)
    assert isinstance(e2.members[1].value, ast.IntLiteral) and e2.members[1].value.value == 17
    assert isinstance(err, ast.ErrorDecl) and [m.name for m in err.members] == ["Oops", "Bad"]
    assert isinstance(mk, ast.MatchKindDecl)


def test_extern_object_and_functions() -> None:
    ext, f1, f2 = parse(
        """
        extern register<T> {
            register(bit<32> size);
            @noSideEffects void read(out T result, in bit<32> index);
            abstract T compute<D>(in D d);
        }
        extern void hash<O, T>(out O result, in T data);
        extern T pick<T>(in T a);
        """
    )
    assert isinstance(ext, ast.ExternDecl) and ext.type_params == ["T"]
    assert len(ext.constructors) == 1 and ext.constructors[0].is_constructor
    assert [m.name for m in ext.methods] == ["read", "compute"]
    assert ext.methods[0].has_annotation("noSideEffects")
    assert ext.methods[1].is_abstract and ext.methods[1].type_params == ["D"]
    assert isinstance(f1, ast.ExternFunctionDecl) and f1.type_params == ["O", "T"]
    assert [p.direction for p in f1.params] == ["out", "in"]
    assert isinstance(f2, ast.ExternFunctionDecl) and f2.name == "pick"


def test_parser_declaration_states_and_select() -> None:
    p = only(
        """
        header h_t { bit<8> a; bit<16> b; }
        parser P(packet_in pk, out h_t h)(bit<8> k) {
            value_set<bit<16>>(4) vs;
            bit<8> tmp = 1;
            state start {
                pk.extract(h);
                transition select(h.a, h.b) {
                    (1, 0x800): next;
                    (2 &&& 0xF, _): accept;
                    (3 .. 5, vs): accept;
                    default: reject;
                }
            }
            state next { transition accept; }
            state empty { }
        }
        """
    )
    assert isinstance(p, ast.ParserDecl)
    assert [x.name for x in p.ctor_params] == ["k"]
    assert isinstance(p.locals[0], ast.ValueSetDecl)
    assert isinstance(p.locals[1], ast.VariableDecl)
    start = p.state("start")
    sel = start.transition
    assert isinstance(sel, ast.SelectExpression) and len(sel.keys) == 2
    ks = [c.keyset for c in sel.cases]
    assert isinstance(ks[0], ast.ListExpression)
    assert isinstance(ks[1].elements[0], ast.MaskExpression)
    assert isinstance(ks[1].elements[1], ast.DontCare)
    assert isinstance(ks[2].elements[0], ast.RangeExpression)
    assert isinstance(ks[3], ast.DefaultExpression)
    assert [c.state.name for c in sel.cases] == ["next", "accept", "accept", "reject"]
    # A state without a transition statement goes to reject.
    assert p.state("empty").transition.name == "reject"


def test_control_with_table_and_switch() -> None:
    c = only(
        """
        header h_t { bit<8> a; }
        control C(inout h_t h) {
            action set(bit<8> v) { h.a = v; }
            @name("tbl") table t {
                key = { h.a : exact @name("key_a"); h.a : ternary; }
                actions = { set; @defaultonly NoAction; }
                const default_action = NoAction();
                size = 1024;
                implementation = foo;
                const entries = {
                    (1, 2 &&& 3) : set(4);
                    priority = 7 : (_, default) : set(5);
                }
            }
            apply {
                switch (t.apply().action_run) {
                    set: { h.a = 1; }
                    NoAction:
                    default: { exit; }
                }
                if (t.apply().hit) { return; } else if (!h.isValid()) { h.setValid(); }
            }
        }
        """
    )
    assert isinstance(c, ast.ControlDecl)
    _act, t = c.locals
    assert isinstance(t, ast.TableDecl) and t.name_annotation == "tbl"
    assert [(k.match_kind) for k in t.keys] == ["exact", "ternary"]
    assert t.keys[0].annotation("name").string_arg() == "key_a"
    assert [a.name for a in t.actions] == ["set", "NoAction"]
    assert t.actions[1].has_annotation("defaultonly")
    assert t.default_action.name == "NoAction" and t.default_action_const
    assert isinstance(t.size, ast.IntLiteral)
    assert t.property("implementation").value.name == "foo"
    assert t.entries_const and len(t.entries) == 2
    assert isinstance(t.entries[0].keys[1], ast.MaskExpression)
    assert t.entries[1].priority.value == 7
    assert isinstance(t.entries[1].keys[1], ast.DefaultExpression)
    sw = c.body.statements[0]
    assert isinstance(sw, ast.SwitchStatement)
    assert [type(x.label).__name__ for x in sw.cases] == [
        "PathExpression",
        "PathExpression",
        "DefaultExpression",
    ]
    assert sw.cases[1].body is None
    assert isinstance(c.body.statements[1], ast.IfStatement)


def test_instantiations_and_package() -> None:
    decls = parse(
        """
        extern E<T> { E(bit<32> n); }
        parser P(); control C();
        package Pkg(P p, C c);
        parser MyP() { state start { transition accept; } }
        control MyC() { E<bit<8>>(4) e; apply {} }
        Pkg(MyP(), MyC()) main;
        """
    )
    c = decls[-2]
    inst = c.locals[0]
    assert isinstance(inst, ast.InstanceDecl) and inst.name == "e"
    assert isinstance(inst.type_ref, ast.NamedTypeRef) and len(inst.type_ref.type_args) == 1
    main = decls[-1]
    assert isinstance(main, ast.InstanceDecl) and main.name == "main"
    assert all(isinstance(a.value, ast.ConstructorCall) for a in main.args)


def test_functions_and_actions_top_level() -> None:
    f, a = parse(
        """
        bit<8> max(in bit<8> a, in bit<8> b) { return a > b ? a : b; }
        @hidden action act(inout bit<8> x, bit<8> d) { x = d; }
        """
    )
    assert isinstance(f, ast.FunctionDecl) and f.name == "max"
    assert isinstance(f.body.statements[0], ast.ReturnStatement)
    assert isinstance(a, ast.ActionDecl) and a.has_annotation("hidden")
    assert [p.direction for p in a.params] == ["inout", ""]


@pytest.mark.parametrize(
    ("text", "shape"),
    [
        ("1 + 2 * 3", ("+", 1, ("*", 2, 3))),
        ("1 * 2 + 3", ("+", ("*", 1, 2), 3)),
        ("1 << 2 + 3", ("<<", 1, ("+", 2, 3))),
        ("1 | 2 ^ 3 & 4", ("|", 1, ("^", 2, ("&", 3, 4)))),
        ("1 == 2 | 3", ("==", 1, ("|", 2, 3))),
        ("1 - 2 - 3", ("-", ("-", 1, 2), 3)),
        ("1 ++ 2 |+| 3", ("|+|", ("++", 1, 2), 3)),
        ("1 >> 2 >> 3", (">>", (">>", 1, 2), 3)),
        ("-1 * 2", ("*", ("-", 1), 2)),
        ("~1 & 2", ("&", ("~", 1), 2)),
        ("1 < 2 && 3 > 4 || 5 != 6", ("||", ("&&", ("<", 1, 2), (">", 3, 4)), ("!=", 5, 6))),
    ],
)
def test_operator_precedence(text: str, shape: object) -> None:
    def sh(e: ast.Expression) -> object:
        if isinstance(e, ast.IntLiteral):
            return e.value
        if isinstance(e, ast.BinaryOp):
            return (e.op, sh(e.left), sh(e.right))
        if isinstance(e, ast.UnaryOp):
            return (e.op, sh(e.operand))
        raise AssertionError(e)

    assert sh(expr(text)) == shape


def test_ternary_cast_slice_member_index() -> None:
    e = expr("a ? b : c ? d : e")
    assert isinstance(e, ast.Ternary) and isinstance(e.otherwise, ast.Ternary)
    c = expr("(bit<8>) x")
    assert isinstance(c, ast.Cast) and isinstance(c.target, ast.BitTypeRef)
    p = expr("(x) + 1")
    assert isinstance(p, ast.BinaryOp)
    c2 = expr("(T) x", prelude="typedef bit<8> T;")
    assert isinstance(c2, ast.Cast) and isinstance(c2.target, ast.NamedTypeRef)
    s = expr("h.f[7:4]")
    assert isinstance(s, ast.Slice) and isinstance(s.base, ast.Member)
    i = expr("st[2].f")
    assert isinstance(i, ast.Member) and isinstance(i.expr, ast.ArrayIndex)
    m = expr("E.A", prelude="enum E { A }")
    assert isinstance(m, ast.Member) and m.expr.name == "E"
    er = expr("error.NoError")
    assert isinstance(er, ast.Member) and er.expr.name == "error"


def test_generic_call_vs_less_than() -> None:
    lt = expr("a < b")
    assert isinstance(lt, ast.BinaryOp) and lt.op == "<"
    call = expr("p.lookahead<bit<8>>()")
    assert isinstance(call, ast.MethodCallExpression)
    assert isinstance(call.type_args[0], ast.BitTypeRef)
    nested = expr("f<tuple<bit<8>, bit<16>>>(x)")
    assert isinstance(nested, ast.MethodCallExpression)
    shift = expr("x >> 2")
    assert isinstance(shift, ast.BinaryOp) and shift.op == ">>"
    cmp = expr("x > (2)")
    assert isinstance(cmp, ast.BinaryOp) and cmp.op == ">"


def test_list_struct_and_named_arguments() -> None:
    lst = expr("{1, 2, 3}")
    assert isinstance(lst, ast.ListExpression) and len(lst.elements) == 3
    st = expr("{a = 1, b = 2}")
    assert isinstance(st, ast.StructExpression) and [f.name for f in st.fields] == ["a", "b"]
    typed = expr("S {a = 1}", prelude="struct S { bit<8> a; }")
    assert isinstance(typed, ast.StructExpression) and typed.target.name == "S"
    call = expr("f(x = 1, y = 2)")
    assert [a.name for a in call.args] == ["x", "y"]
    top = expr(".g()")
    assert isinstance(top.method, ast.PathExpression) and top.method.top_level


def test_annotations_kept_with_tokens_and_expressions() -> None:
    d = only(
        '@name("a.b") @id(0x10) @unknown(x + , weird) @atomic @kv[k="v", n=1] const bit<8> X = 1;'
    )
    names = [a.name for a in d.annotations]
    assert names == ["name", "id", "unknown", "atomic", "kv"]
    name, ident, unknown, atomic, kv = d.annotations
    assert name.string_arg() == "a.b" and name.tokens == ['"a.b"']
    assert isinstance(ident.expressions[0], ast.IntLiteral)
    assert unknown.expressions is None and unknown.tokens == ["x", "+", ",", "weird"]
    assert atomic.expressions is None and atomic.tokens == []
    assert set(kv.kv) == {"k", "n"}


@pytest.mark.parametrize(
    ("text", "message", "line", "col"),
    [
        ("const bit<8> X = ;", "syntax error: unexpected ';'", 1, 18),
        ("header h { bit<8> a }", "syntax error: expected ';', found '}'", 1, 21),
        ("control C() { apply { x = 1 } }", "expected ';'", 1, 29),
        ("control C() { }", "control has no apply block", 1, 15),
        ("struct s {\n  bit<8> a;\n", "end of file", 3, 1),
        ("foo bar;", "unknown type 'foo'", 1, 1),
        ("control C() { apply { for (bit<8> i in ) {} } }", "unexpected ')'", 1, 40),
        ("typedef struct { bit<8> a; } S;", "not supported", 1, 9),
    ],
)
def test_syntax_errors_are_located(text: str, message: str, line: int, col: int) -> None:
    with pytest.raises(CompileError) as info:
        parse(text)
    err = info.value
    assert message in err.message
    assert (err.location.line, err.location.col) == (line, col)
