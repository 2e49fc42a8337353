"""Hand-written recursive-descent parser for P4_16 (grammar of the P4_16 spec v1.2.x).

Like p4c's lexer, the parser knows which identifiers currently name types (typedef,
header, struct, enum, extern, parser/control/package types and type parameters), which
resolves the `T x;` / `f(x);` / `(T) e` / `a < b` ambiguities.  Type parameters are
scoped to their declaration.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from . import ast
from .errors import CompileError, SourceLocation
from .lexer import Token, tokenize

N = TypeVar("N")

# Keywords that may still be used as names (p4c's nonTypeName / name).
CONTEXTUAL_KEYWORDS = frozenset(
    ["apply", "key", "actions", "state", "entries", "type", "priority", "list"]
)

TYPE_KEYWORDS = frozenset(
    ["bit", "int", "varbit", "bool", "error", "string", "tuple", "match_kind", "void"]
)

# Binary operators: token -> precedence (higher binds tighter).  '>>' is two '>' tokens.
BINARY_PRECEDENCE = {
    "||": 2,
    "&&": 3,
    "==": 4,
    "!=": 4,
    "<": 5,
    ">": 5,
    "<=": 5,
    ">=": 5,
    "|": 6,
    "^": 7,
    "&": 8,
    "<<": 9,
    ">>": 9,
    "++": 10,
    "+": 10,
    "-": 10,
    "|+|": 10,
    "|-|": 10,
    "*": 11,
    "/": 11,
    "%": 11,
}
PREFIX_PRECEDENCE = 12
# Binary operators that have a compound assignment form (`+=`; `>>=` is matched apart,
# the lexer never makes `>>` one token).
_COMPOUND_OPERATORS = frozenset(["*", "/", "%", "+", "-", "|+|", "|-|", "<<", "&", "^", "|"])

# Tokens that may start an expression (used to decide whether `(T)` is a cast).
_EXPR_START = frozenset(
    [
        *("ID", "INT", "STRING", "true", "false", "(", "{", "!", "~", "-", "+", ".", "error"),
        *sorted(CONTEXTUAL_KEYWORDS),
    ]
)


class _Backtrack(Exception):
    """Raised inside a speculative parse; never escapes the parser."""


class Parser:
    """Parses a token list into an ast.Program's declaration list."""

    def __init__(self, tokens: list[Token], type_names: set[str] | None = None) -> None:
        self.toks = tokens
        self.pos = 0
        self.scopes: list[set[str]] = [type_names if type_names is not None else set()]
        self.speculating = 0

    # ------------------------------------------------------------------ token helpers

    @property
    def tok(self) -> Token:
        return self.toks[self.pos]

    def peek(self, n: int = 1) -> Token:
        i = self.pos + n
        return self.toks[i] if i < len(self.toks) else self.toks[-1]

    def at(self, kind: str) -> bool:
        return self.toks[self.pos].kind == kind

    def advance(self) -> Token:
        t = self.toks[self.pos]
        if t.kind != "EOF":
            self.pos += 1
        return t

    def accept(self, kind: str) -> Token | None:
        if self.toks[self.pos].kind == kind:
            return self.advance()
        return None

    def error(self, msg: str, loc: SourceLocation | None = None) -> CompileError:
        if self.speculating:
            raise _Backtrack()
        return CompileError(msg, loc or self.tok.loc)

    def describe(self, t: Token) -> str:
        if t.kind == "EOF":
            return "end of file"
        return f"'{t.text}'"

    def expect(self, kind: str, what: str | None = None) -> Token:
        t = self.tok
        if t.kind != kind:
            raise self.error(
                f"syntax error: expected {what or repr(kind)}, found {self.describe(t)}"
            )
        return self.advance()

    def expect_gt(self) -> None:
        """Consume a '>' closing a type argument list (also the first half of '>=')."""
        self.expect(">", "'>'")

    def is_type_name(self, name: str) -> bool:
        return any(name in s for s in reversed(self.scopes))

    def declare_type(self, name: str) -> None:
        self.scopes[-1].add(name)

    def tok_is_type_name(self, t: Token) -> bool:
        return t.kind == "ID" and self.is_type_name(t.text)

    def starts_type(self, t: Token) -> bool:
        return t.kind in TYPE_KEYWORDS or t.kind == "_" or self.tok_is_type_name(t)

    def is_name_token(self, t: Token) -> bool:
        return t.kind == "ID" or t.kind in CONTEXTUAL_KEYWORDS

    def parse_name(self, what: str = "a name") -> tuple[str, SourceLocation]:
        t = self.tok
        if self.is_name_token(t):
            self.advance()
            return t.text, t.loc
        raise self.error(f"syntax error: expected {what}, found {self.describe(t)}")

    def speculate(self, fn: Callable[[], N]) -> N | None:
        """Run fn; on a syntax error restore the position and return None."""
        start = self.pos
        self.speculating += 1
        try:
            return fn()
        except (_Backtrack, CompileError):
            self.pos = start
            return None
        finally:
            self.speculating -= 1

    # ------------------------------------------------------------------ program

    def parse_program(self) -> list[ast.Node]:
        decls: list[ast.Node] = []
        while not self.at("EOF"):
            if self.accept(";"):
                continue
            decls.append(self.parse_declaration())
        return decls

    def parse_declaration(self) -> ast.Node:
        annotations = self.parse_annotations()
        t = self.tok
        k = t.kind
        if k == "const":
            return self.parse_const(annotations)
        if k in ("header", "struct", "header_union"):
            return self.parse_struct_like(annotations)
        if k == "enum":
            return self.parse_enum(annotations)
        if k == "typedef" or k == "type":
            return self.parse_typedef(annotations)
        if k == "error" and self.peek().kind == "{":
            return self.parse_member_list_decl(annotations, ast.ErrorDecl)
        if k == "match_kind":
            return self.parse_member_list_decl(annotations, ast.MatchKindDecl)
        if k == "extern":
            return self.parse_extern(annotations)
        if k == "parser":
            return self.parse_parser(annotations)
        if k == "control":
            return self.parse_control(annotations)
        if k == "package":
            return self.parse_package(annotations)
        if k == "action":
            return self.parse_action(annotations)
        if k == "value_set":
            raise self.error("value_set declarations are only allowed inside a parser")
        if k == "table":
            raise self.error("tables are only allowed inside a control")
        if self.starts_type(t) or (t.kind == "ID" and self.peek().kind == "ID"):
            return self.parse_type_led_declaration(annotations, top_level=True)
        raise self.error(f"syntax error: unexpected {self.describe(t)}")

    # ------------------------------------------------------------------ annotations

    def parse_annotations(self) -> list[ast.Annotation]:
        result: list[ast.Annotation] = []
        while self.at("ANNOT"):
            result.append(self.parse_annotation())
        return result

    def parse_annotation(self) -> ast.Annotation:
        t = self.advance()
        ann = ast.Annotation(loc=t.loc, name=t.value)
        if self.at("("):
            open_tok = self.advance()
            body: list[Token] = []
            depth = 1
            while True:
                b = self.tok
                if b.kind == "EOF":
                    raise CompileError("unterminated annotation body", open_tok.loc)
                if b.kind in ("(", "[", "{"):
                    depth += 1
                elif b.kind in (")", "]", "}"):
                    depth -= 1
                    if depth == 0:
                        self.advance()
                        break
                body.append(self.advance())
            ann.tokens = [b.text for b in body]
            ann.expressions = self.parse_annotation_body(body, close=self.toks[self.pos - 1])
        elif self.at("["):
            self.advance()
            kv: dict[str, ast.Expression] = {}
            exprs: list[ast.Expression] = []
            while not self.at("]"):
                if self.is_name_token(self.tok) and self.peek().kind == "=":
                    name, _ = self.parse_name()
                    self.advance()
                    kv[name] = self.parse_expression()
                else:
                    exprs.append(self.parse_expression())
                if not self.accept(","):
                    break
            self.expect("]", "']'")
            if kv:
                ann.kv = kv
            else:
                ann.expressions = exprs
        return ann

    def parse_annotation_body(self, body: list[Token], close: Token) -> list[ast.Expression] | None:
        if not body:
            return []
        eof = Token("EOF", "", None, close.loc, True)
        sub = Parser([*body, eof])
        sub.scopes = self.scopes
        sub.speculating = 1

        def run() -> list[ast.Expression]:
            exprs = [sub.parse_expression()]
            while sub.accept(","):
                exprs.append(sub.parse_expression())
            if not sub.at("EOF"):
                raise _Backtrack()
            return exprs

        try:
            return run()
        except (_Backtrack, CompileError):
            return None

    # ------------------------------------------------------------------ types

    def parse_type_ref(self, allow_void: bool = False) -> ast.TypeRef:
        t = self.tok
        k = t.kind
        ref: ast.TypeRef
        if k in ("bit", "int", "varbit"):
            self.advance()
            if self.accept("<"):
                if self.at("INT"):
                    w_tok = self.advance()
                    width: ast.Expression = self.int_literal(w_tok)
                elif self.at("("):
                    self.advance()
                    width = self.parse_expression()
                    self.expect(")", "')'")
                elif self.at("ID") and not self.tok_is_type_name(self.tok):
                    name, loc = self.parse_name()
                    width = ast.PathExpression(loc=loc, name=name)
                else:
                    raise self.error("syntax error: expected a width")
                self.expect_gt()
                if k == "varbit":
                    ref = ast.VarbitTypeRef(loc=t.loc, width=width)
                else:
                    ref = ast.BitTypeRef(loc=t.loc, width=width, signed=k == "int")
            else:
                if k == "varbit":
                    raise self.error("syntax error: varbit needs a width, e.g. varbit<32>")
                if k == "int":
                    ref = ast.BaseTypeRef(loc=t.loc, name="int")
                else:
                    ref = ast.BitTypeRef(loc=t.loc, width=None)
        elif k in ("bool", "error", "string", "match_kind"):
            self.advance()
            ref = ast.BaseTypeRef(loc=t.loc, name=k)
        elif k == "void":
            if not allow_void:
                raise self.error("syntax error: void is not allowed here")
            self.advance()
            ref = ast.BaseTypeRef(loc=t.loc, name="void")
        elif k == "_":
            self.advance()
            ref = ast.BaseTypeRef(loc=t.loc, name="_")
        elif k == "tuple":
            self.advance()
            self.expect("<", "'<'")
            elems = self.parse_type_arg_list()
            self.expect_gt()
            ref = ast.TupleTypeRef(loc=t.loc, elements=elems)
        elif k == "." and self.peek().kind == "ID":
            self.advance()
            name_tok = self.advance()
            ref = self.finish_named_type(name_tok, top_level=True)
        elif k == "ID":
            self.advance()
            ref = self.finish_named_type(t, top_level=False)
        else:
            raise self.error(f"syntax error: expected a type, found {self.describe(t)}")
        # Header stack: T[size]
        while self.at("[") and not isinstance(ref, ast.BaseTypeRef):
            lb = self.advance()
            size = self.parse_expression()
            self.expect("]", "']'")
            ref = ast.StackTypeRef(
                loc=lb.loc if ref.loc is None else ref.loc, element=ref, size=size
            )
        return ref

    def finish_named_type(self, name_tok: Token, top_level: bool) -> ast.NamedTypeRef:
        ref = ast.NamedTypeRef(loc=name_tok.loc, name=name_tok.text, top_level=top_level)
        if self.at("<"):
            self.advance()
            ref.type_args = self.parse_type_arg_list()
            self.expect_gt()
        return ref

    def parse_type_arg_list(self) -> list[ast.TypeRef]:
        args = [self.parse_type_ref(allow_void=True)]
        while self.accept(","):
            args.append(self.parse_type_ref(allow_void=True))
        return args

    def parse_type_params(self) -> list[str]:
        """`<A, B>` after a declaration's name; declares them in the current scope."""
        names: list[str] = []
        if self.accept("<"):
            while True:
                name, _ = self.parse_name("a type parameter")
                names.append(name)
                self.declare_type(name)
                if not self.accept(","):
                    break
            self.expect_gt()
        return names

    # ------------------------------------------------------------------ simple declarations

    def parse_const(self, annotations: list[ast.Annotation]) -> ast.ConstDecl:
        self.expect("const")
        type_ref = self.parse_type_ref()
        name, loc = self.parse_name()
        self.expect("=", "'='")
        value = self.parse_initializer()
        self.expect(";", "';'")
        return ast.ConstDecl(
            loc=loc, annotations=annotations, name=name, type_ref=type_ref, value=value
        )

    def parse_initializer(self) -> ast.Expression:
        return self.parse_expression()

    def parse_struct_like(self, annotations: list[ast.Annotation]) -> ast.StructLikeDecl:
        kw = self.advance()
        name, loc = self.parse_name("a type name")
        self.declare_type(name)
        self.scopes.append(set())
        try:
            type_params = self.parse_type_params()
            self.expect("{", "'{'")
            fields: list[ast.FieldDecl] = []
            while not self.accept("}"):
                f_ann = self.parse_annotations()
                f_type = self.parse_type_ref()
                f_name, f_loc = self.parse_name("a field name")
                self.expect(";", "';'")
                fields.append(
                    ast.FieldDecl(loc=f_loc, annotations=f_ann, name=f_name, type_ref=f_type)
                )
        finally:
            self.scopes.pop()
        cls = {
            "header": ast.HeaderDecl,
            "struct": ast.StructDecl,
            "header_union": ast.HeaderUnionDecl,
        }[kw.kind]
        return cls(
            loc=loc, annotations=annotations, name=name, fields=fields, type_params=type_params
        )

    def parse_enum(self, annotations: list[ast.Annotation]) -> ast.EnumDecl:
        self.expect("enum")
        underlying: ast.TypeRef | None = None
        if self.tok.kind in ("bit", "int") or (
            self.tok_is_type_name(self.tok) and self.peek().kind != "{"
        ):
            underlying = self.parse_type_ref()
        name, loc = self.parse_name("an enum name")
        self.declare_type(name)
        decl = ast.EnumDecl(loc=loc, annotations=annotations, name=name, underlying=underlying)
        self.expect("{", "'{'")
        while not self.at("}"):
            m_ann = self.parse_annotations()
            m_name, m_loc = self.parse_name("an enum member")
            value = None
            if self.accept("="):
                value = self.parse_expression()
            decl.members.append(
                ast.EnumMember(loc=m_loc, annotations=m_ann, name=m_name, value=value, parent=decl)
            )
            if not self.accept(","):
                break
        self.expect("}", "'}'")
        return decl

    def parse_member_list_decl(
        self, annotations: list[ast.Annotation], cls: type[ast.ErrorDecl] | type[ast.MatchKindDecl]
    ) -> ast.ErrorDecl | ast.MatchKindDecl:
        t = self.advance()
        decl = cls(loc=t.loc, annotations=annotations)
        self.expect("{", "'{'")
        while not self.at("}"):
            m_name, m_loc = self.parse_name("a member name")
            decl.members.append(ast.EnumMember(loc=m_loc, name=m_name, parent=decl))
            if not self.accept(","):
                break
        self.expect("}", "'}'")
        return decl

    def parse_typedef(self, annotations: list[ast.Annotation]) -> ast.Node:
        kw = self.advance()
        if self.tok.kind in ("header", "struct", "header_union", "enum"):
            raise self.error("typedef of an inline type declaration is not supported")
        type_ref = self.parse_type_ref()
        name, loc = self.parse_name("a type name")
        self.expect(";", "';'")
        self.declare_type(name)
        if kw.kind == "typedef":
            return ast.TypedefDecl(loc=loc, annotations=annotations, name=name, type_ref=type_ref)
        return ast.NewTypeDecl(loc=loc, annotations=annotations, name=name, type_ref=type_ref)

    # ------------------------------------------------------------------ parameters

    def parse_params(self) -> list[ast.Param]:
        self.expect("(", "'('")
        params: list[ast.Param] = []
        if self.accept(")"):
            return params
        while True:
            p_ann = self.parse_annotations()
            direction = ""
            if self.tok.kind in ("in", "out", "inout"):
                direction = self.advance().kind
            type_ref = self.parse_type_ref()
            name, loc = self.parse_name("a parameter name")
            default = None
            if self.accept("="):
                default = self.parse_expression()
            params.append(
                ast.Param(
                    loc=loc,
                    annotations=p_ann,
                    name=name,
                    direction=direction,
                    type_ref=type_ref,
                    default=default,
                )
            )
            if not self.accept(","):
                break
        self.expect(")", "')'")
        return params

    # ------------------------------------------------------------------ externs

    def parse_extern(self, annotations: list[ast.Annotation]) -> ast.Node:
        self.expect("extern")
        t = self.tok
        if t.kind == "ID" and self.peek().kind in ("{", "<") and not self.tok_is_type_name(t):
            return self.parse_extern_object(annotations)
        if t.kind == "ID" and self.peek().kind == "{":
            return self.parse_extern_object(annotations)
        # extern function: typeOrVoid name <T..>(params);
        self.scopes.append(set())
        try:
            ret = self.parse_return_type()
            name, loc = self.parse_name("a function name")
            type_params = self.parse_type_params()
            params = self.parse_params()
        finally:
            self.scopes.pop()
        self.expect(";", "';'")
        return ast.ExternFunctionDecl(
            loc=loc,
            annotations=annotations,
            name=name,
            return_type=ret,
            type_params=type_params,
            params=params,
        )

    def parse_return_type(self) -> ast.TypeRef:
        t = self.tok
        if t.kind == "ID" and not self.tok_is_type_name(t):
            # May be a type variable declared after the name (`T f<T>()`).
            self.advance()
            return ast.NamedTypeRef(loc=t.loc, name=t.text)
        return self.parse_type_ref(allow_void=True)

    def parse_extern_object(self, annotations: list[ast.Annotation]) -> ast.ExternDecl:
        name, loc = self.parse_name("an extern name")
        self.declare_type(name)
        decl = ast.ExternDecl(loc=loc, annotations=annotations, name=name)
        self.scopes.append(set())
        try:
            decl.type_params = self.parse_type_params()
            self.expect("{", "'{'")
            while not self.accept("}"):
                m_ann = self.parse_annotations()
                is_abstract = bool(self.accept("abstract"))
                if self.tok.kind == "ID" and self.tok.text == name and self.peek().kind == "(":
                    c_tok = self.advance()
                    params = self.parse_params()
                    self.expect(";", "';'")
                    decl.constructors.append(
                        ast.MethodDecl(
                            loc=c_tok.loc,
                            annotations=m_ann,
                            name=name,
                            params=params,
                            is_constructor=True,
                        )
                    )
                    continue
                self.scopes.append(set())
                try:
                    ret = self.parse_return_type()
                    m_name, m_loc = self.parse_name("a method name")
                    tps = self.parse_type_params()
                    params = self.parse_params()
                finally:
                    self.scopes.pop()
                self.expect(";", "';'")
                decl.methods.append(
                    ast.MethodDecl(
                        loc=m_loc,
                        annotations=m_ann,
                        name=m_name,
                        return_type=ret,
                        type_params=tps,
                        params=params,
                        is_abstract=is_abstract,
                    )
                )
        finally:
            self.scopes.pop()
        return decl

    # ------------------------------------------------------------------ package / parser / control

    def parse_package(self, annotations: list[ast.Annotation]) -> ast.PackageTypeDecl:
        self.expect("package")
        name, loc = self.parse_name("a package name")
        self.declare_type(name)
        self.scopes.append(set())
        try:
            tps = self.parse_type_params()
            params = self.parse_params()
        finally:
            self.scopes.pop()
        self.expect(";", "';'")
        return ast.PackageTypeDecl(
            loc=loc, annotations=annotations, name=name, type_params=tps, params=params
        )

    def parse_parser(self, annotations: list[ast.Annotation]) -> ast.Node:
        self.expect("parser")
        name, loc = self.parse_name("a parser name")
        self.declare_type(name)
        self.scopes.append(set())
        try:
            tps = self.parse_type_params()
            params = self.parse_params()
            if self.accept(";"):
                return ast.ParserTypeDecl(
                    loc=loc, annotations=annotations, name=name, type_params=tps, params=params
                )
            ctor_params = self.parse_params() if self.at("(") else []
            decl = ast.ParserDecl(
                loc=loc,
                annotations=annotations,
                name=name,
                type_params=tps,
                params=params,
                ctor_params=ctor_params,
            )
            if tps:
                raise self.error("generic parser declarations are not supported", loc)
            self.expect("{", "'{'")
            self.scopes.append(set())
            try:
                while not self.accept("}"):
                    l_ann = self.parse_annotations()
                    if self.at("state"):
                        decl.states.append(self.parse_state(l_ann))
                    elif decl.states:
                        raise self.error(
                            "syntax error: parser local declarations must precede the states"
                        )
                    else:
                        decl.locals.append(self.parse_parser_local(l_ann))
            finally:
                self.scopes.pop()
            return decl
        finally:
            self.scopes.pop()

    def parse_parser_local(self, annotations: list[ast.Annotation]) -> ast.Node:
        if self.at("const"):
            return self.parse_const(annotations)
        if self.at("value_set"):
            self.advance()
            self.expect("<", "'<'")
            elem = self.parse_type_ref()
            self.expect_gt()
            self.expect("(", "'('")
            size = self.parse_expression()
            self.expect(")", "')'")
            name, loc = self.parse_name()
            self.expect(";", "';'")
            return ast.ValueSetDecl(
                loc=loc, annotations=annotations, name=name, element=elem, size=size
            )
        if self.starts_type(self.tok):
            return self.parse_type_led_declaration(annotations, top_level=False)
        raise self.error(f"syntax error: unexpected {self.describe(self.tok)} in parser")

    def parse_state(self, annotations: list[ast.Annotation]) -> ast.ParserState:
        self.expect("state")
        name, loc = self.parse_name("a state name")
        state = ast.ParserState(loc=loc, annotations=annotations, name=name)
        self.expect("{", "'{'")
        self.scopes.append(set())
        try:
            while not self.at("}") and not self.at("transition"):
                state.statements.append(self.parse_statement())
            if self.at("transition"):
                self.advance()
                if self.at("select"):
                    state.transition = self.parse_select()
                else:
                    s_name, s_loc = self.parse_name("a state name")
                    self.expect(";", "';'")
                    state.transition = ast.PathExpression(loc=s_loc, name=s_name)
            else:
                # No transition statement: the state goes to reject (p4c semantics).
                state.transition = ast.PathExpression(loc=self.tok.loc, name="reject")
            self.expect("}", "'}'")
        finally:
            self.scopes.pop()
        return state

    def parse_select(self) -> ast.SelectExpression:
        t = self.expect("select")
        self.expect("(", "'('")
        keys: list[ast.Expression] = []
        if not self.at(")"):
            keys.append(self.parse_expression())
            while self.accept(","):
                keys.append(self.parse_expression())
        self.expect(")", "')'")
        # select({a, b}) is the same as select(a, b)
        if len(keys) == 1 and isinstance(keys[0], ast.ListExpression):
            keys = list(keys[0].elements)
        sel = ast.SelectExpression(loc=t.loc, keys=keys)
        self.expect("{", "'{'")
        while not self.accept("}"):
            ks = self.parse_keyset()
            self.expect(":", "':'")
            s_name, s_loc = self.parse_name("a state name")
            self.expect(";", "';'")
            sel.cases.append(
                ast.SelectCase(
                    loc=ks.loc, keyset=ks, state=ast.PathExpression(loc=s_loc, name=s_name)
                )
            )
        return sel

    def parse_keyset(self) -> ast.Expression:
        """A keyset: simple keyset or a parenthesized tuple of simple keysets."""
        if self.at("("):
            start = self.tok

            def tuple_keyset() -> ast.Expression:
                self.advance()
                elems = [self.parse_simple_keyset()]
                while self.accept(","):
                    elems.append(self.parse_simple_keyset())
                self.expect(")")
                if len(elems) < 2 or not self.at(":"):
                    raise _Backtrack()
                return ast.ListExpression(loc=start.loc, elements=elems)

            r = self.speculate(tuple_keyset)
            if r is not None:
                return r
        return self.parse_simple_keyset()

    def parse_simple_keyset(self) -> ast.Expression:
        t = self.tok
        if t.kind == "default":
            self.advance()
            return ast.DefaultExpression(loc=t.loc)
        if t.kind == "_":
            self.advance()
            return ast.DontCare(loc=t.loc)
        e = self.parse_expression()
        if self.at("&&&"):
            self.advance()
            return ast.MaskExpression(loc=e.loc, value=e, mask=self.parse_expression())
        if self.at(".."):
            self.advance()
            return ast.RangeExpression(loc=e.loc, lo=e, hi=self.parse_expression())
        return e

    def parse_control(self, annotations: list[ast.Annotation]) -> ast.Node:
        self.expect("control")
        name, loc = self.parse_name("a control name")
        self.declare_type(name)
        self.scopes.append(set())
        try:
            tps = self.parse_type_params()
            params = self.parse_params()
            if self.accept(";"):
                return ast.ControlTypeDecl(
                    loc=loc, annotations=annotations, name=name, type_params=tps, params=params
                )
            ctor_params = self.parse_params() if self.at("(") else []
            if tps:
                raise self.error("generic control declarations are not supported", loc)
            decl = ast.ControlDecl(
                loc=loc,
                annotations=annotations,
                name=name,
                type_params=tps,
                params=params,
                ctor_params=ctor_params,
            )
            self.expect("{", "'{'")
            self.scopes.append(set())
            try:
                while not self.at("apply"):
                    if self.at("}") or self.at("EOF"):
                        raise self.error("syntax error: control has no apply block")
                    l_ann = self.parse_annotations()
                    decl.locals.append(self.parse_control_local(l_ann))
                self.expect("apply")
                decl.body = self.parse_block()
                self.expect("}", "'}'")
            finally:
                self.scopes.pop()
            return decl
        finally:
            self.scopes.pop()

    def parse_control_local(self, annotations: list[ast.Annotation]) -> ast.Node:
        k = self.tok.kind
        if k == "const":
            return self.parse_const(annotations)
        if k == "action":
            return self.parse_action(annotations)
        if k == "table":
            return self.parse_table(annotations)
        if self.starts_type(self.tok):
            return self.parse_type_led_declaration(annotations, top_level=False)
        raise self.error(f"syntax error: unexpected {self.describe(self.tok)} in control")

    def parse_action(self, annotations: list[ast.Annotation]) -> ast.ActionDecl:
        self.expect("action")
        name, loc = self.parse_name("an action name")
        params = self.parse_params()
        body = self.parse_block()
        return ast.ActionDecl(loc=loc, annotations=annotations, name=name, params=params, body=body)

    def parse_type_led_declaration(
        self, annotations: list[ast.Annotation], top_level: bool
    ) -> ast.Node:
        """Declarations that start with a type: variable, instance, or (top level) function."""
        start = self.tok
        if top_level and start.kind == "ID" and not self.tok_is_type_name(start):
            if self.peek().kind == "ID" and self.peek(2).kind in ("(", "<"):
                # function returning a type variable, e.g. `T f<T>(...)`
                pass
            else:
                raise self.error(f"syntax error: unknown type '{start.text}'")
        if top_level:
            # Function declaration: typeOrVoid name <T>(params) { body }
            def function_head() -> tuple[ast.TypeRef, str, SourceLocation]:
                ret = self.parse_return_type()
                name, loc = self.parse_name()
                if not self.at("(") and not self.at("<"):
                    raise _Backtrack()
                return ret, name, loc

            head = self.speculate(function_head)
            if head is not None:
                ret, name, loc = head
                self.scopes.append(set())
                try:
                    tps = self.parse_type_params()
                    params = self.parse_params()
                    body = self.parse_block()
                finally:
                    self.scopes.pop()
                return ast.FunctionDecl(
                    loc=loc,
                    annotations=annotations,
                    name=name,
                    return_type=ret,
                    type_params=tps,
                    params=params,
                    body=body,
                )
        type_ref = self.parse_type_ref()
        if self.at("("):
            args = self.parse_args()
            name, loc = self.parse_name("an instance name")
            if self.at("="):
                raise self.error(
                    "instance initializer blocks (abstract method bodies) are not supported"
                )
            self.expect(";", "';'")
            return ast.InstanceDecl(
                loc=loc, annotations=annotations, name=name, type_ref=type_ref, args=args
            )
        name, loc = self.parse_name("a variable name")
        if top_level:
            raise self.error("top-level variable declarations are not allowed", loc)
        init = None
        if self.accept("="):
            init = self.parse_initializer()
        self.expect(";", "';'")
        return ast.VariableDecl(
            loc=loc, annotations=annotations, name=name, type_ref=type_ref, init=init
        )

    # ------------------------------------------------------------------ tables

    def parse_table(self, annotations: list[ast.Annotation]) -> ast.TableDecl:
        self.expect("table")
        name, loc = self.parse_name("a table name")
        table = ast.TableDecl(loc=loc, annotations=annotations, name=name)
        self.expect("{", "'{'")
        seen: set[str] = set()
        while not self.accept("}"):
            p_ann = self.parse_annotations()
            is_const = bool(self.accept("const"))
            p_name, p_loc = self.parse_name("a table property")
            if p_name in seen:
                raise CompileError(f"duplicate table property '{p_name}'", p_loc)
            seen.add(p_name)
            prop = ast.TableProperty(loc=p_loc, annotations=p_ann, name=p_name, is_const=is_const)
            table.properties.append(prop)
            self.expect("=", "'='")
            if p_name == "key":
                self.parse_table_keys(table)
            elif p_name == "actions":
                self.expect("{", "'{'")
                while not self.accept("}"):
                    a_ann = self.parse_annotations()
                    ref = self.parse_action_ref(a_ann)
                    self.expect(";", "';'")
                    table.actions.append(ref)
            elif p_name == "entries":
                table.entries_const = is_const
                table.entries = self.parse_entries(is_const)
            elif p_name == "default_action":
                table.default_action = self.parse_action_ref([])
                table.default_action_const = is_const
                self.expect(";", "';'")
            else:
                prop.value = self.parse_initializer()
                if p_name == "size":
                    table.size = prop.value
                self.expect(";", "';'")
        return table

    def parse_table_keys(self, table: ast.TableDecl) -> None:
        self.expect("{", "'{'")
        while not self.accept("}"):
            e = self.parse_expression()
            self.expect(":", "':'")
            mk_name, mk_loc = self.parse_name("a match kind")
            k_ann = self.parse_annotations()
            self.expect(";", "';'")
            table.keys.append(
                ast.KeyElement(
                    loc=e.loc, annotations=k_ann, expr=e, match_kind=mk_name, match_kind_loc=mk_loc
                )
            )

    def parse_action_ref(self, annotations: list[ast.Annotation]) -> ast.ActionRef:
        t = self.tok
        top = bool(self.accept("."))
        name, loc = self.parse_name("an action name")
        expr = ast.PathExpression(loc=loc, name=name, top_level=top)
        ref = ast.ActionRef(loc=t.loc, annotations=annotations, name=name, expr=expr)
        if self.at("("):
            ref.args = self.parse_args()
            ref.has_parens = True
        return ref

    def parse_entries(self, all_const: bool) -> list[ast.TableEntry]:
        self.expect("{", "'{'")
        entries: list[ast.TableEntry] = []
        while not self.accept("}"):
            e_ann = self.parse_annotations()
            start = self.tok
            is_const = bool(self.accept("const")) or all_const
            priority = None
            if self.at("priority"):
                self.advance()
                self.expect("=", "'='")
                priority = self.parse_expression()
                self.expect(":", "':'")
            ks = self.parse_keyset()
            self.expect(":", "':'")
            action = self.parse_action_ref([])
            action.annotations = self.parse_annotations()
            self.expect(";", "';'")
            keys = list(ks.elements) if isinstance(ks, ast.ListExpression) else [ks]
            entries.append(
                ast.TableEntry(
                    loc=start.loc,
                    annotations=e_ann,
                    keys=keys,
                    action=action,
                    priority=priority,
                    is_const=is_const,
                )
            )
        return entries

    # ------------------------------------------------------------------ statements

    def parse_block(self) -> ast.BlockStatement:
        t = self.expect("{", "'{'")
        block = ast.BlockStatement(loc=t.loc)
        self.scopes.append(set())
        try:
            while not self.accept("}"):
                if self.at("EOF"):
                    raise self.error("syntax error: missing '}'")
                block.statements.append(self.parse_statement())
        finally:
            self.scopes.pop()
        return block

    def parse_statement(self) -> ast.Node:
        annotations = self.parse_annotations()
        t = self.tok
        k = t.kind
        stmt: ast.Node
        if k == "{":
            stmt = self.parse_block()
        elif k == "if":
            self.advance()
            self.expect("(", "'('")
            cond = self.parse_expression()
            self.expect(")", "')'")
            then = self.parse_statement()
            otherwise = None
            if self.accept("else"):
                otherwise = self.parse_statement()
            stmt = ast.IfStatement(loc=t.loc, cond=cond, then=then, otherwise=otherwise)  # type: ignore[arg-type]
        elif k == "switch":
            stmt = self.parse_switch()
        elif k == "exit":
            self.advance()
            self.expect(";", "';'")
            stmt = ast.ExitStatement(loc=t.loc)
        elif k == "return":
            self.advance()
            value = None if self.at(";") else self.parse_expression()
            self.expect(";", "';'")
            stmt = ast.ReturnStatement(loc=t.loc, value=value)
        elif k == ";":
            self.advance()
            stmt = ast.EmptyStatement(loc=t.loc)
        elif k == "const":
            stmt = self.parse_const([])
        elif k == "for":
            stmt = self.parse_for()
        elif k in ("break", "continue"):
            self.advance()
            self.expect(";", "';'")
            stmt = (
                ast.BreakStatement(loc=t.loc) if k == "break" else ast.ContinueStatement(loc=t.loc)
            )
        elif self.starts_type(t) and not (
            t.kind in ("ID", "error") and self.peek().kind in (".", "(") and t.kind != "_"
        ):
            stmt = self.parse_type_led_declaration([], top_level=False)
        else:
            stmt = self.parse_expression_statement()
        if annotations and isinstance(stmt, ast.Annotated):
            stmt.annotations = annotations + stmt.annotations
        return stmt

    def parse_expression_statement(self) -> ast.Statement:
        t = self.tok
        lhs = self.parse_expression(PREFIX_PRECEDENCE)
        if self.accept("="):
            rhs = self.parse_expression()
            self.expect(";", "';'")
            return ast.AssignmentStatement(loc=t.loc, lhs=lhs, rhs=rhs)
        op = self.compound_assignment_operator()
        if op is not None:
            # `lhs op= rhs` (P4_16 1.2.5) is `lhs = lhs op rhs` with `lhs` evaluated
            # once: the same node is the left operand, and the back end lowers it once.
            op_tok = self.tok
            rhs = self.parse_expression()
            self.expect(";", "';'")
            value = ast.BinaryOp(loc=op_tok.loc, op=op, left=lhs, right=rhs)
            return ast.AssignmentStatement(loc=t.loc, lhs=lhs, rhs=value, compound=op)
        if not isinstance(lhs, ast.MethodCallExpression):
            raise self.error(
                f"syntax error: expected '=' or a call, found {self.describe(self.tok)}"
            )
        self.expect(";", "';'")
        return ast.MethodCallStatement(loc=t.loc, call=lhs)

    def parse_for(self) -> ast.Statement:
        t = self.expect("for")
        self.expect("(", "'('")

        def loop_variable() -> ast.VariableDecl:
            annotations = self.parse_annotations()
            type_ref = self.parse_type_ref()
            name, loc = self.parse_name("a variable name")
            if not self.at("in"):
                raise _Backtrack()
            return ast.VariableDecl(loc=loc, annotations=annotations, name=name, type_ref=type_ref)

        var = self.speculate(loop_variable)
        if var is not None:
            self.expect("in", "'in'")
            collection = self.parse_expression()
            if self.at(".."):
                self.advance()
                hi = self.parse_expression()
                collection = ast.RangeExpression(loc=collection.loc, lo=collection, hi=hi)
            self.expect(")", "')'")
            body = self.parse_statement()
            return ast.ForInStatement(loc=t.loc, var=var, collection=collection, body=body)
        init = self.parse_for_clauses(";")
        self.expect(";", "';'")
        cond = None if self.at(";") else self.parse_expression()
        self.expect(";", "';'")
        update = self.parse_for_clauses(")")
        self.expect(")", "')'")
        body = self.parse_statement()
        return ast.ForStatement(loc=t.loc, init=init, cond=cond, update=update, body=body)

    def parse_for_clauses(self, end: str) -> list[ast.Node]:
        """The comma-separated declarations, assignments and calls of a for loop's init
        or update part (each parsed as the statement it is, without its `;`)."""
        out: list[ast.Node] = []
        while not self.at(end):
            t = self.tok
            if self.starts_type(t) and not (
                t.kind in ("ID", "error") and self.peek().kind in (".", "(", "=", "[")
            ):
                type_ref = self.parse_type_ref()
                name, loc = self.parse_name("a variable name")
                init = self.parse_initializer() if self.accept("=") else None
                out.append(ast.VariableDecl(loc=loc, name=name, type_ref=type_ref, init=init))
            else:
                lhs = self.parse_expression(PREFIX_PRECEDENCE)
                if self.accept("="):
                    out.append(
                        ast.AssignmentStatement(loc=t.loc, lhs=lhs, rhs=self.parse_expression())
                    )
                elif (op := self.compound_assignment_operator()) is not None:
                    op_tok = self.tok
                    rhs = self.parse_expression()
                    value = ast.BinaryOp(loc=op_tok.loc, op=op, left=lhs, right=rhs)
                    out.append(ast.AssignmentStatement(loc=t.loc, lhs=lhs, rhs=value, compound=op))
                elif isinstance(lhs, ast.MethodCallExpression):
                    out.append(ast.MethodCallStatement(loc=t.loc, call=lhs))
                else:
                    raise self.error(
                        f"syntax error: expected '=' or a call, found {self.describe(self.tok)}"
                    )
            if not self.accept(","):
                break
        return out

    def compound_assignment_operator(self) -> str | None:
        """The operator of a compound assignment (`+=`, `>>=`, `|+|=`, ...) at the current
        token, consumed with its `=`; None (nothing consumed) when there is none."""
        t, nxt = self.tok, self.peek()
        if t.kind == ">" and nxt.kind == ">=" and not nxt.spaced:
            self.advance()
            self.advance()
            return ">>"
        if t.kind in _COMPOUND_OPERATORS and nxt.kind == "=" and not nxt.spaced:
            self.advance()
            self.advance()
            return t.kind
        return None

    def parse_switch(self) -> ast.SwitchStatement:
        t = self.expect("switch")
        self.expect("(", "'('")
        expr = self.parse_expression()
        self.expect(")", "')'")
        sw = ast.SwitchStatement(loc=t.loc, expr=expr)
        self.expect("{", "'{'")
        while not self.accept("}"):
            lt = self.tok
            label: ast.Expression
            if lt.kind == "default":
                self.advance()
                label = ast.DefaultExpression(loc=lt.loc)
            else:
                label = self.parse_expression()
            self.expect(":", "':'")
            body = self.parse_block() if self.at("{") else None
            sw.cases.append(ast.SwitchCase(loc=lt.loc, label=label, body=body))
        return sw

    # ------------------------------------------------------------------ expressions

    def int_literal(self, t: Token) -> ast.IntLiteral:
        value, width, signed = t.value
        return ast.IntLiteral(loc=t.loc, value=value, width=width, signed=signed, text=t.text)

    def parse_expression(self, min_prec: int = 0) -> ast.Expression:
        left = self.parse_unary()
        while True:
            t = self.tok
            k = t.kind
            if k == "?":
                if min_prec > 1:
                    break
                self.advance()
                then = self.parse_expression()
                self.expect(":", "':'")
                otherwise = self.parse_expression(1)
                left = ast.Ternary(loc=left.loc, cond=left, then=then, otherwise=otherwise)
                continue
            op = ">>" if k == ">" and self.peek().kind == ">" and not self.peek().spaced else k
            prec = BINARY_PRECEDENCE.get(op)
            if prec is None or prec <= min_prec:
                break
            self.advance()
            if op == ">>":
                self.advance()
            right = self.parse_expression(prec)
            left = ast.BinaryOp(loc=left.loc, op=op, left=left, right=right)
        return left

    def parse_unary(self) -> ast.Expression:
        t = self.tok
        if t.kind in ("!", "~", "-", "+"):
            self.advance()
            operand = self.parse_expression(PREFIX_PRECEDENCE - 1)
            return ast.UnaryOp(loc=t.loc, op=t.kind, operand=operand)
        if t.kind == "(":
            cast = self.try_cast()
            if cast is not None:
                return cast
        return self.parse_postfix(self.parse_primary())

    def try_cast(self) -> ast.Expression | None:
        nxt = self.peek()
        if not (
            nxt.kind in ("bit", "int", "varbit", "bool", "tuple") or self.tok_is_type_name(nxt)
        ):
            return None
        start = self.tok

        def cast_head() -> ast.TypeRef:
            self.advance()
            ref = self.parse_type_ref()
            self.expect(")")
            if self.tok.kind not in _EXPR_START and not self.tok_is_type_name(self.tok):
                raise _Backtrack()
            return ref

        ref = self.speculate(cast_head)
        if ref is None:
            return None
        operand = self.parse_expression(PREFIX_PRECEDENCE - 1)
        return ast.Cast(loc=start.loc, target=ref, expr=operand)

    def parse_primary(self) -> ast.Expression:
        t = self.tok
        k = t.kind
        if k == "INT":
            self.advance()
            return self.int_literal(t)
        if k in ("true", "false"):
            self.advance()
            return ast.BoolLiteral(loc=t.loc, value=k == "true")
        if k == "STRING":
            self.advance()
            return ast.StringLiteral(loc=t.loc, value=t.value)
        if k == "(":
            self.advance()
            e = self.parse_expression()
            self.expect(")", "')'")
            return e
        if k == "{":
            return self.parse_brace_expression(None)
        if k == "." and self.is_name_token(self.peek()):
            self.advance()
            name_tok = self.advance()
            return ast.PathExpression(loc=t.loc, name=name_tok.text, top_level=True)
        if k == "error":
            self.advance()
            return ast.PathExpression(loc=t.loc, name="error")
        if k == "this":
            raise self.error("'this' is not supported")
        if k == "_":
            self.advance()
            return ast.DontCare(loc=t.loc)
        if k == "ID" and self.is_type_name(t.text):
            nxt = self.peek()
            if nxt.kind == ".":
                self.advance()
                return ast.PathExpression(loc=t.loc, name=t.text)
            ref = self.parse_type_ref()
            if self.at("("):
                return ast.ConstructorCall(loc=t.loc, target=ref, args=self.parse_args())
            if self.at("{"):
                return self.parse_brace_expression(ref)
            if isinstance(ref, ast.NamedTypeRef) and not ref.type_args:
                return ast.PathExpression(loc=t.loc, name=t.text)
            raise self.error(f"syntax error: unexpected {self.describe(self.tok)} after type")
        if k in ("bit", "int", "varbit", "bool", "tuple"):
            raise self.error(f"syntax error: unexpected type '{t.text}' in an expression")
        if self.is_name_token(t):
            self.advance()
            return ast.PathExpression(loc=t.loc, name=t.text)
        raise self.error(f"syntax error: unexpected {self.describe(t)}")

    def parse_brace_expression(self, target: ast.TypeRef | None) -> ast.Expression:
        t = self.expect("{", "'{'")
        loc = target.loc if target is not None else t.loc
        if self.accept("}"):
            if target is not None:
                return ast.StructExpression(loc=loc, target=target)
            return ast.ListExpression(loc=loc)
        if self.is_name_token(self.tok) and self.peek().kind == "=":
            fields: list[ast.NamedExpression] = []
            while True:
                name, n_loc = self.parse_name("a field name")
                self.expect("=", "'='")
                fields.append(
                    ast.NamedExpression(loc=n_loc, name=name, value=self.parse_expression())
                )
                if not self.accept(","):
                    break
                if self.at("}"):
                    break
            self.expect("}", "'}'")
            return ast.StructExpression(loc=loc, target=target, fields=fields)
        if target is not None:
            raise self.error("syntax error: expected 'field = value' in a struct initializer")
        elems: list[ast.Expression] = []
        while True:
            elems.append(self.parse_expression())
            if not self.accept(","):
                break
            if self.at("}"):
                break
        self.expect("}", "'}'")
        return ast.ListExpression(loc=loc, elements=elems)

    def parse_args(self) -> list[ast.Argument]:
        self.expect("(", "'('")
        args: list[ast.Argument] = []
        if self.accept(")"):
            return args
        while True:
            t = self.tok
            if self.is_name_token(t) and self.peek().kind == "=":
                self.advance()
                self.advance()
                args.append(ast.Argument(loc=t.loc, name=t.text, value=self.parse_expression()))
            else:
                v = self.parse_expression()
                args.append(ast.Argument(loc=v.loc, value=v))
            if not self.accept(","):
                break
        self.expect(")", "')'")
        return args

    def parse_postfix(self, e: ast.Expression) -> ast.Expression:
        while True:
            t = self.tok
            k = t.kind
            if k == ".":
                self.advance()
                name, _ = self.parse_name("a member name")
                e = ast.Member(loc=e.loc, expr=e, member=name)
            elif k == "[":
                self.advance()
                idx = self.parse_expression()
                if self.accept(":"):
                    lo = self.parse_expression()
                    self.expect("]", "']'")
                    e = ast.Slice(loc=e.loc, base=e, hi=idx, lo=lo)
                else:
                    self.expect("]", "']'")
                    e = ast.ArrayIndex(loc=e.loc, base=e, index=idx)
            elif k == "(":
                args = self.parse_args()
                e = ast.MethodCallExpression(loc=e.loc, method=e, args=args)
            elif (
                k == "<"
                and isinstance(e, (ast.PathExpression, ast.Member))
                and self.starts_type(self.peek())
            ):

                def type_args() -> list[ast.TypeRef]:
                    self.advance()
                    tas = self.parse_type_arg_list()
                    self.expect(">")
                    if not self.at("("):
                        raise _Backtrack()
                    return tas

                tas = self.speculate(type_args)
                if tas is None:
                    break
                args = self.parse_args()
                e = ast.MethodCallExpression(loc=e.loc, method=e, type_args=tas, args=args)
            else:
                break
        return e


def parse_tokens(tokens: list[Token], type_names: set[str] | None = None) -> list[ast.Node]:
    return Parser(tokens, type_names).parse_program()


def parse_text(text: str, file: str = "<input>") -> list[ast.Node]:
    """Parse (already preprocessed) P4 text into top-level declarations."""
    return parse_tokens(tokenize(text, file))
