"""Name resolution, type checking and constant folding of a parsed P4_16 program.

One pass over the declarations in source order (P4 requires declaration before use,
except parser states, which are collected per parser first).  Every expression gets its
`.type` and, when known at compile time, its `.const_value`; names get `.decl` links;
calls get a CallInfo.  Errors raise CompileError at the offending node.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from . import ast, consteval
from .errors import CompileError, SourceLocation
from .types import (
    BOOL,
    DONTCARE,
    ERROR,
    INT,
    MATCH_KIND,
    MAX_WIDTH,
    STRING,
    VOID,
    ActionEnumType,
    BitsType,
    BoolType,
    ControlType,
    DontCareType,
    EnumType,
    EnumValue,
    ErrorType,
    ErrorValue,
    ExternType,
    Field,
    FunctionType,
    HeaderStackType,
    HeaderType,
    HeaderUnionType,
    IntType,
    MatchKindType,
    MatchKindValue,
    NewType,
    PackageType,
    ParamInfo,
    ParserType,
    SetType,
    SpecializedType,
    StringType,
    StructLikeType,
    StructType,
    StructValue,
    TableApplyResultType,
    TableType,
    TupleType,
    Type,
    TypeOfType,
    TypeVar,
    ValueSetType,
    VarbitType,
    VoidType,
)

# Builtin parser states (targets of `transition accept;` / `transition reject;`).
ACCEPT_STATE = ast.ParserState(name="accept")
REJECT_STATE = ast.ParserState(name="reject")

HEADER_METHODS = {"isValid": BOOL, "setValid": VOID, "setInvalid": VOID}
KNOWN_ANNOTATIONS_WITH_EXPRESSIONS = frozenset(
    ["name", "id", "priority", "field_list", "controller_header", "brief", "description"]
)


@dataclass(eq=False)
class TypeParamDecl(ast.Node):
    """Scope entry for a generic type parameter."""

    name: str = ""


class Scope:
    """A lexical scope: name -> declarations (a list: extern functions may be overloaded)."""

    __slots__ = ("names", "parent")

    def __init__(self, parent: Scope | None = None) -> None:
        self.names: dict[str, list[ast.Node]] = {}
        self.parent = parent

    def lookup(self, name: str) -> list[ast.Node] | None:
        s: Scope | None = self
        while s is not None:
            found = s.names.get(name)
            if found:
                return found
            s = s.parent
        return None

    def root(self) -> Scope:
        s = self
        while s.parent is not None:
            s = s.parent
        return s


@dataclass
class _Context:
    """Where the checker is: 'parser' | 'control' | 'action' | 'function' | 'toplevel'."""

    kind: str
    return_type: Type | None = None
    in_action: bool = False
    in_parser: bool = False
    in_function: bool = False
    control: ast.ControlDecl | None = None  # the control being checked, if any
    loops: int = 0  # for loops around the statement being checked


def _fixed_width_struct(t: StructType) -> bool:
    """A struct usable as a header field: only bit<N>/int<N>, bool, serializable enums
    (or `type`s of those) and such structs, recursively."""
    for f in t.fields:
        ft = f.type
        while isinstance(ft, NewType):
            ft = ft.underlying
        if isinstance(ft, StructType):
            if not _fixed_width_struct(ft):
                return False
        elif not (
            isinstance(ft, (BitsType, BoolType))
            or (isinstance(ft, EnumType) and ft.underlying is not None)
        ):
            return False
    return True


def _err(msg: str, node: ast.Node | SourceLocation | None) -> CompileError:
    loc = node if isinstance(node, SourceLocation) or node is None else node.loc
    return CompileError(msg, loc)


def _free_typevars(t: Type, out: set[str]) -> None:
    if isinstance(t, TypeVar):
        out.add(t.name)
    elif isinstance(t, TupleType):
        for e in t.elements:
            _free_typevars(e, out)
    elif isinstance(t, HeaderStackType):
        _free_typevars(t.element, out)
    elif isinstance(t, (ExternType, SpecializedType)):
        for a in t.type_args:
            _free_typevars(a, out)
    elif isinstance(t, SetType):
        _free_typevars(t.element, out)


def has_typevars(t: Type) -> bool:
    s: set[str] = set()
    _free_typevars(t, s)
    return bool(s)


def subst(t: Type, b: dict[str, Type]) -> Type:
    """Replace bound type variables in t."""
    if not b:
        return t
    if isinstance(t, TypeVar):
        return b.get(t.name, t)
    if isinstance(t, TupleType):
        return TupleType(tuple(subst(e, b) for e in t.elements))
    if isinstance(t, HeaderStackType):
        return HeaderStackType(subst(t.element, b), t.size)
    if isinstance(t, ExternType) and t.type_args:
        return ExternType(t.name, tuple(subst(a, b) for a in t.type_args), t.decl)
    if isinstance(t, SpecializedType):
        return SpecializedType(t.base, tuple(subst(a, b) for a in t.type_args))
    if isinstance(t, SetType):
        return SetType(subst(t.element, b))
    return t


class Checker:
    """Type-checks a list of top-level declarations; see module docstring."""

    def __init__(self) -> None:
        self.root = Scope()
        self.errors: list[str] = []
        self.error_members: dict[str, ast.EnumMember] = {}
        self.match_kinds: list[str] = []
        self.match_kind_members: dict[str, ast.EnumMember] = {}
        self.warnings: list[str] = []
        self.ctx = _Context("toplevel")
        self.main: ast.InstanceDecl | None = None
        self._method_owner: dict[int, ast.ExternDecl] = {}

    # ================================================================= helpers

    def warn(self, msg: str, loc: SourceLocation | None) -> None:
        self.warnings.append(f"{loc}: warning: {msg}" if loc else f"warning: {msg}")

    def declare(self, scope: Scope, name: str, decl: ast.Node, loc: SourceLocation | None) -> None:
        existing = scope.names.get(name)
        if existing:
            overloadable = (ast.ExternFunctionDecl, ast.FunctionDecl)
            if isinstance(decl, overloadable) and all(
                isinstance(e, overloadable) for e in existing
            ):
                scope.names[name].append(decl)
                return
            raise _err(f"re-declaration of '{name}'", loc)
        scope.names[name] = [decl]

    @contextmanager
    def context(self, ctx: _Context) -> Iterator[None]:
        old = self.ctx
        self.ctx = ctx
        try:
            yield
        finally:
            self.ctx = old

    def lookup(self, scope: Scope, name: str, top_level: bool, node: ast.Node) -> list[ast.Node]:
        found = (scope.root() if top_level else scope).lookup(name)
        if not found:
            raise _err(f"'{name}' is not declared", node)
        return found

    def const_int(self, e: ast.Expression, scope: Scope, what: str) -> int:
        self.check_expr(e, scope)
        v = e.const_value
        if not isinstance(v, int) or isinstance(v, bool):
            raise _err(f"{what} must be a compile-time known integer", e)
        return v

    # ================================================================= types

    def resolve_type(self, ref: ast.TypeRef, scope: Scope) -> Type:
        t = self._resolve_type(ref, scope)
        ref.resolved = t
        return t

    def _resolve_type(self, ref: ast.TypeRef, scope: Scope) -> Type:
        if isinstance(ref, ast.BaseTypeRef):
            return {
                "bool": BOOL,
                "error": ERROR,
                "string": STRING,
                "int": INT,
                "void": VOID,
                "match_kind": MATCH_KIND,
                "_": DONTCARE,
            }[ref.name]
        if isinstance(ref, ast.BitTypeRef):
            if ref.width is None:
                return BitsType(1, ref.signed)
            w = self.const_int(ref.width, scope, "a type width")
            if w <= 0 or (ref.signed and w < 1):
                raise _err(f"invalid width {w}: widths must be positive", ref.width)
            if w > MAX_WIDTH:
                raise _err(f"width {w} is over the maximum, {MAX_WIDTH}", ref.width)
            return BitsType(w, ref.signed)
        if isinstance(ref, ast.VarbitTypeRef):
            w = self.const_int(ref.width, scope, "a varbit width")
            if w <= 0:
                raise _err(f"invalid varbit width {w}", ref.width)
            if w > MAX_WIDTH:
                raise _err(f"width {w} is over the maximum, {MAX_WIDTH}", ref.width)
            return VarbitType(w)
        if isinstance(ref, ast.StackTypeRef):
            elem = self.resolve_type(ref.element, scope)
            size = self.const_int(ref.size, scope, "a header stack size")
            if size <= 0:
                raise _err(f"header stack size must be positive, got {size}", ref.size)
            if not isinstance(elem, (HeaderType, HeaderUnionType)):
                raise _err(
                    f"header stack elements must be headers or header unions, not {elem}", ref
                )
            return HeaderStackType(elem, size)
        if isinstance(ref, ast.TupleTypeRef):
            return TupleType(tuple(self.resolve_type(e, scope) for e in ref.elements))
        assert isinstance(ref, ast.NamedTypeRef)
        found = self.lookup(scope, ref.name, ref.top_level, ref)
        d = found[0]
        ref.decl = d
        args = tuple(self.resolve_type(a, scope) for a in ref.type_args)
        for a, aref in zip(args, ref.type_args, strict=True):
            if isinstance(a, DontCareType):
                raise _err("'_' (inferred) type arguments are not supported", aref)
        if isinstance(d, TypeParamDecl):
            return TypeVar(d.name)
        if isinstance(d, ast.TypedefDecl):
            assert d.type_ref.resolved is not None
            return d.type_ref.resolved
        if isinstance(d, (ast.NewTypeDecl, ast.StructLikeDecl, ast.EnumDecl)):
            if args:
                raise _err(f"'{ref.name}' is not generic", ref)
            assert d.resolved is not None
            return d.resolved
        if isinstance(d, ast.ExternDecl):
            if args and len(args) != len(d.type_params):
                raise _err(
                    f"'{d.name}' expects {len(d.type_params)} type arguments, got {len(args)}", ref
                )
            return ExternType(d.name, args, d)
        if isinstance(
            d,
            (
                ast.ParserTypeDecl,
                ast.ControlTypeDecl,
                ast.PackageTypeDecl,
                ast.ParserDecl,
                ast.ControlDecl,
            ),
        ):
            base = d.resolved
            assert base is not None
            if args:
                tps = base.type_params  # type: ignore[attr-defined]
                if len(args) != len(tps):
                    raise _err(
                        f"'{d.name}' expects {len(tps)} type arguments, got {len(args)}", ref
                    )
                return SpecializedType(base, args)
            return base
        raise _err(f"'{ref.name}' is not a type", ref)

    def param_infos(self, params: list[ast.Param]) -> list[ParamInfo]:
        return [
            ParamInfo(
                p.name,
                p.direction,
                p.type_ref.resolved or VOID,
                p.has_annotation("optional") or p.default is not None,
            )
            for p in params
        ]

    def declare_params(self, params: list[ast.Param], scope: Scope, kind: str) -> None:
        for p in params:
            t = self.resolve_type(p.type_ref, scope)
            if isinstance(t, VoidType):
                raise _err("parameters cannot have type void", p.type_ref)
            if p.direction in ("out", "inout") and kind in ("ctor",):
                raise _err("constructor parameters cannot have a direction", p)
            if p.default is not None:
                self.check_expr(p.default, scope, t)
                self.coerce(p.default, t)
            self.check_annotations(p.annotations, scope)
            self.declare(scope, p.name, p, p.loc)

    def type_params_scope(self, names: list[str], parent: Scope) -> Scope:
        s = Scope(parent)
        for n in names:
            self.declare(s, n, TypeParamDecl(name=n), None)
        return s

    # ================================================================= assignability

    def coerce(self, e: ast.Expression, target: Type, what: str = "") -> None:
        """Make e usable where `target` is expected (implicit int conversion, list/struct
        initializers), or raise a type mismatch."""
        t = e.type
        assert t is not None
        if t == target or isinstance(target, DontCareType):
            return
        if isinstance(t, DontCareType) and isinstance(e, ast.DontCare):
            e.type = target
            return
        if isinstance(t, EnumType) and t.underlying is not None and t.underlying == target:
            # Serializable enum values convert implicitly to their underlying type
            # (P4_16 spec, implicit casts).
            v = e.const_value
            e.const_value = v.value if isinstance(v, EnumValue) else None
            e.type = target
            return
        if isinstance(t, IntType) and isinstance(target, BitsType):
            v = e.const_value
            if isinstance(v, int):
                if not consteval.fits(v, target):
                    self.warn(f"{v}: value does not fit in {target}; truncated", e.loc)
                e.const_value = consteval.wrap(v, target)
            e.type = target
            return
        if isinstance(e, ast.ListExpression) and isinstance(target, (StructLikeType, TupleType)):
            if isinstance(target, TupleType):
                elem_types = list(target.elements)
            else:
                if isinstance(target, HeaderUnionType):
                    raise _err("a header union cannot be initialized with a list", e)
                elem_types = [f.type for f in target.fields]
            if len(elem_types) != len(e.elements):
                raise _err(
                    f"{target} has {len(elem_types)} fields, the list has {len(e.elements)}", e
                )
            for el, et in zip(e.elements, elem_types, strict=True):
                self.coerce(el, et)
            e.type = target
            self._fold_list(e)
            if isinstance(target, StructLikeType) and isinstance(e.const_value, tuple):
                e.const_value = StructValue(
                    zip([f.name for f in target.fields], e.const_value, strict=True)
                )
            return
        if (
            isinstance(e, ast.StructExpression)
            and e.target is None
            and isinstance(target, (StructType, HeaderType))
        ):
            self._check_struct_fields(e, target)
            e.type = target
            return
        if isinstance(e, ast.Ternary) and isinstance(t, IntType) and isinstance(target, BitsType):
            self.coerce(e.then, target)
            self.coerce(e.otherwise, target)
            e.type = target
            return
        where = f" {what}" if what else ""
        raise _err(f"type mismatch{where}: expected {target}, got {t}", e)

    def _check_struct_fields(self, e: ast.StructExpression, target: StructLikeType) -> None:
        names = [f.name for f in e.fields]
        for nf in e.fields:
            if target.field(nf.name) is None:
                raise _err(f"{target} has no field '{nf.name}'", nf)
        if len(set(names)) != len(names):
            raise _err("duplicate field in struct initializer", e)
        missing = [f.name for f in target.fields if f.name not in names]
        if missing:
            raise _err(
                f"struct initializer for {target} is missing field(s) {', '.join(missing)}", e
            )
        values: dict[str, object] = {}
        for nf in e.fields:
            f = target.field(nf.name)
            assert f is not None
            self.coerce(nf.value, f.type)
            values[nf.name] = nf.value.const_value
        if all(v is not None for v in values.values()):
            e.const_value = StructValue((f.name, values[f.name]) for f in target.fields)

    def _fold_list(self, e: ast.ListExpression) -> None:
        vals = [x.const_value for x in e.elements]
        e.const_value = tuple(vals) if all(v is not None for v in vals) else None

    # ================================================================= lvalues

    def check_lvalue(self, e: ast.Expression, what: str) -> None:
        root = e
        while True:
            if isinstance(root, ast.Member):
                bt = root.expr.type
                if isinstance(bt, HeaderStackType) and root.member in ("last", "lastIndex", "size"):
                    if root.member != "last":
                        raise _err(f"{what}: '{root.member}' is not assignable", e)
                elif not isinstance(bt, StructLikeType) and not isinstance(bt, HeaderStackType):
                    raise _err(f"{what}: expression is not assignable", e)
                root = root.expr
            elif isinstance(root, (ast.ArrayIndex, ast.Slice)):
                root = root.base
            else:
                break
        if isinstance(root, ast.PathExpression):
            d = root.decl
            if isinstance(d, ast.VariableDecl):
                return
            if isinstance(d, ast.Param):
                if d.direction in ("out", "inout"):
                    return
                kind = f"'{d.direction}' parameter" if d.direction else "directionless parameter"
                raise _err(f"{what}: cannot assign to {kind} '{d.name}'", e)
            if isinstance(d, ast.ConstDecl):
                raise _err(f"{what}: cannot assign to constant '{d.name}'", e)
        raise _err(f"{what}: expression is not assignable (not an l-value)", e)

    # ================================================================= expressions

    def check_expr(self, e: ast.Expression, scope: Scope, expected: Type | None = None) -> Type:
        handler = _EXPR_HANDLERS.get(type(e))
        if handler is None:
            raise _err(f"{type(e).__name__} is not supported here", e)
        t: Type = handler(self, e, scope, expected)
        e.type = t
        return t

    def _int_literal(self, e: ast.IntLiteral, scope: Scope, expected: Type | None) -> Type:
        if e.width is None:
            e.const_value = e.value
            return INT
        t = BitsType(e.width, e.signed)
        if not consteval.fits(e.value, BitsType(e.width, False)) and not (
            e.signed and consteval.fits(e.value, t)
        ):
            self.warn(f"{e.text}: value does not fit in {e.width} bits; truncated", e.loc)
        e.const_value = consteval.wrap(e.value, t)
        return t

    def _bool_literal(self, e: ast.BoolLiteral, scope: Scope, expected: Type | None) -> Type:
        e.const_value = e.value
        return BOOL

    def _string_literal(self, e: ast.StringLiteral, scope: Scope, expected: Type | None) -> Type:
        e.const_value = e.value
        return STRING

    def _path(self, e: ast.PathExpression, scope: Scope, expected: Type | None) -> Type:
        if e.name == "error" and not e.top_level:
            e.decl = None
            return TypeOfType(ERROR)
        found = self.lookup(scope, e.name, e.top_level, e)
        d = found[0]
        e.decl = d
        if isinstance(d, ast.ConstDecl):
            e.const_value = d.value.const_value
            assert d.type is not None
            return d.type
        if isinstance(d, (ast.VariableDecl, ast.Param)):
            assert d.type is not None
            return d.type
        if isinstance(d, ast.InstanceDecl):
            assert d.type is not None
            return d.type
        if isinstance(d, ast.ActionDecl):
            return FunctionType(self.param_infos(d.params), VOID, [], "action", d.name)
        if isinstance(d, ast.FunctionDecl):
            rt = d.return_type.resolved or VOID
            return FunctionType(self.param_infos(d.params), rt, d.type_params, "function", d.name)
        if isinstance(d, ast.ExternFunctionDecl):
            rt = d.return_type.resolved or VOID
            return FunctionType(
                self.param_infos(d.params), rt, d.type_params, "extern_function", d.name
            )
        if isinstance(d, ast.TableDecl):
            assert d.resolved is not None
            return d.resolved
        if isinstance(d, ast.ValueSetDecl):
            assert d.type is not None
            return d.type
        if isinstance(d, ast.EnumMember) and isinstance(d.parent, ast.MatchKindDecl):
            e.const_value = MatchKindValue(d.name)
            return MATCH_KIND
        if isinstance(d, TypeParamDecl):
            return TypeOfType(TypeVar(d.name))
        if isinstance(d, ast.TypedefDecl):
            assert d.type_ref.resolved is not None
            return TypeOfType(d.type_ref.resolved)
        resolved = getattr(d, "resolved", None)
        if isinstance(resolved, Type):
            return TypeOfType(resolved)
        if isinstance(d, ast.ExternDecl):
            return TypeOfType(ExternType(d.name, (), d))
        raise _err(f"'{e.name}' cannot be used as a value here", e)

    def _member(self, e: ast.Member, scope: Scope, expected: Type | None) -> Type:
        bt = self.check_expr(e.expr, scope)
        m = e.member
        if isinstance(bt, TypeOfType):
            inner = bt.type
            if isinstance(inner, ErrorType):
                mem = self.error_members.get(m)
                if mem is None:
                    raise _err(f"error.{m} is not declared", e)
                e.decl = mem
                e.const_value = ErrorValue(m)
                return ERROR
            if isinstance(inner, EnumType):
                if m not in inner.members:
                    raise _err(f"enum {inner.name} has no member '{m}'", e)
                decl = inner.decl
                assert isinstance(decl, ast.EnumDecl)
                e.decl = next(x for x in decl.members if x.name == m)
                e.const_value = EnumValue(inner.name, m, inner.values.get(m))
                return inner
            raise _err(f"type {inner} has no member '{m}' (not supported)", e)
        if isinstance(bt, StructLikeType):
            f = bt.field(m)
            if f is not None:
                decl = bt.decl
                if isinstance(decl, ast.StructLikeDecl):
                    e.decl = next((x for x in decl.fields if x.name == m), None)
                cv = e.expr.const_value
                if isinstance(cv, StructValue):
                    e.const_value = cv.get(m)
                return f.type
            if isinstance(bt, (HeaderType, HeaderUnionType)) and m in HEADER_METHODS:
                return FunctionType([], HEADER_METHODS[m], [], "builtin", m)
            if m in ("minSizeInBits", "minSizeInBytes", "maxSizeInBits", "maxSizeInBytes"):
                raise _err(f"'{m}' is not supported", e)
            raise _err(f"{bt} has no field '{m}'", e)
        if isinstance(bt, HeaderStackType):
            if m == "next" and not self.ctx.in_parser:
                raise _err("header stack 'next' can only be used in a parser", e)
            if m in ("next", "last"):
                return bt.element
            if m == "lastIndex":
                return BitsType(32)
            if m == "size":
                e.const_value = bt.size
                return BitsType(32)
            if m in ("push_front", "pop_front"):
                return FunctionType([ParamInfo("count", "in", INT)], VOID, [], "builtin", m)
            if m == "nextIndex":
                raise _err("'nextIndex' is not supported", e)
            raise _err(f"header stack has no member '{m}'", e)
        if isinstance(bt, TableApplyResultType):
            if m in ("hit", "miss"):
                return BOOL
            if m == "action_run":
                return bt.action_run
            raise _err(f"table apply result has no member '{m}'", e)
        if isinstance(bt, TableType):
            if m == "apply":
                return FunctionType([], VOID, [], "builtin", m)
            raise _err(f"table has no member '{m}'", e)
        if isinstance(bt, ExternType):
            decl = bt.decl
            assert isinstance(decl, ast.ExternDecl)
            ms = decl.method(m)
            if not ms:
                raise _err(f"extern {bt.name} has no method '{m}'", e)
            e.decl = ms[0]
            return FunctionType([], VOID, [], "method", m)
        if isinstance(bt, (ParserType, ControlType)):
            if m == "apply":
                return FunctionType([], VOID, [], "builtin", m)
            raise _err(f"{bt} has no member '{m}'", e)
        raise _err(f"cannot access member '{m}' of a value of type {bt}", e)

    def _array_index(self, e: ast.ArrayIndex, scope: Scope, expected: Type | None) -> Type:
        bt = self.check_expr(e.base, scope)
        it = self.check_expr(e.index, scope)
        if isinstance(bt, HeaderStackType):
            if isinstance(it, IntType):
                v = e.index.const_value
                if v < 0 or v >= bt.size:
                    raise _err(f"index {v} is out of bounds for a stack of size {bt.size}", e.index)
                self.coerce(e.index, BitsType(32))
            elif isinstance(it, BitsType):
                # Signed indices are allowed as p4c does; a negative one is out of bounds.
                v = e.index.const_value
                if isinstance(v, int) and not 0 <= v < bt.size:
                    raise _err(f"index {v} is out of bounds for a stack of size {bt.size}", e.index)
            else:
                raise _err(f"stack index must be an integer, not {it}", e.index)
            return bt.element
        if isinstance(bt, TupleType):
            v = e.index.const_value
            if not isinstance(v, int) or isinstance(v, bool):
                raise _err("tuple index must be a compile-time constant", e.index)
            if not 0 <= v < len(bt.elements):
                raise _err(f"tuple index {v} out of range", e.index)
            return bt.elements[v]
        raise _err(f"cannot index a value of type {bt}", e)

    def _slice(self, e: ast.Slice, scope: Scope, expected: Type | None) -> Type:
        bt = self.check_expr(e.base, scope)
        if isinstance(bt, NewType):
            raise _err(f"cannot slice a value of type {bt} (cast it first)", e)
        hi = self.const_int(e.hi, scope, "a slice bound")
        lo = self.const_int(e.lo, scope, "a slice bound")
        if not isinstance(bt, BitsType):
            if isinstance(bt, IntType):
                raise _err("cannot slice a value of type int (give it a width)", e)
            raise _err(f"cannot slice a value of type {bt}", e)
        if lo < 0 or hi < lo:
            raise _err(f"invalid slice [{hi}:{lo}]", e)
        if hi >= bt.width:
            raise _err(f"slice [{hi}:{lo}] is out of range for {bt}", e)
        e.hi_value, e.lo_value = hi, lo
        v = e.base.const_value
        if isinstance(v, int) and not isinstance(v, bool):
            e.const_value = consteval.slice_value(v, bt.width, hi, lo)
        return BitsType(hi - lo + 1)

    def _unary(self, e: ast.UnaryOp, scope: Scope, expected: Type | None) -> Type:
        t = self.check_expr(e.operand, scope, expected)
        op = e.op
        if op == "!":
            if not isinstance(t, BoolType):
                raise _err(f"'!' needs a bool operand, got {t}", e)
        elif op == "~":
            if not isinstance(t, BitsType):
                raise _err(f"'~' needs a bit<W> or int<W> operand, got {t}", e)
        else:
            if not isinstance(t, (BitsType, IntType)):
                raise _err(f"'{op}' needs a numeric operand, got {t}", e)
        v = e.operand.const_value
        if v is not None:
            e.const_value = consteval.unary(op, v, t)
        return t

    def _binary(self, e: ast.BinaryOp, scope: Scope, expected: Type | None) -> Type:
        op = e.op
        if op in ("&&", "||"):
            for side in (e.left, e.right):
                st = self.check_expr(side, scope)
                if not isinstance(st, BoolType):
                    raise _err(f"'{op}' needs bool operands, got {st}", side)
            self._fold_binary(e, BOOL, BOOL)
            return BOOL
        lt = self.check_expr(e.left, scope)
        rt = self.check_expr(e.right, scope)
        if op in ("<<", ">>"):
            if isinstance(rt, BitsType) and rt.signed:
                raise _err("shift amount must be unsigned", e.right)
            if isinstance(rt, IntType):
                rv = e.right.const_value
                if rv < 0:
                    raise _err("shift amount must not be negative", e.right)
            elif not isinstance(rt, BitsType):
                raise _err(f"shift amount must be an integer, not {rt}", e.right)
            if isinstance(lt, IntType):
                if e.right.const_value is None:
                    raise _err(
                        "shifting an unsized constant by a run-time amount: give it a width", e
                    )
            elif not isinstance(lt, BitsType):
                raise _err(f"cannot shift a value of type {lt}", e.left)
            if (
                isinstance(rt, IntType)
                and isinstance(lt, BitsType)
                and e.right.const_value >= lt.width
            ):
                self.warn(f"shifting {lt} by {e.right.const_value} gives 0", e.loc)
            self._fold_binary(e, lt, lt)
            return lt
        if op == "++":
            for side, st in ((e.left, lt), (e.right, rt)):
                if isinstance(st, IntType):
                    raise _err("concatenation needs operands with a width (e.g. 8w5)", side)
                if not isinstance(st, BitsType):
                    raise _err(f"cannot concatenate a value of type {st}", side)
            assert isinstance(lt, BitsType) and isinstance(rt, BitsType)
            res = BitsType(lt.width + rt.width, lt.signed)
            self._fold_binary(e, res, rt)
            return res
        # Remaining operators need a common operand type.
        common = self.unify_operands(e, lt, rt)
        if op in ("==", "!="):
            if isinstance(common, (ExternType, TableType, FunctionType, TypeOfType)):
                raise _err(f"cannot compare values of type {common}", e)
            self._fold_binary(e, BOOL, common)
            return BOOL
        if op in ("<", ">", "<=", ">="):
            if not isinstance(common, (BitsType, IntType)):
                raise _err(f"'{op}' needs numeric operands, got {common}", e)
            self._fold_binary(e, BOOL, common)
            return BOOL
        if op in ("|+|", "|-|"):
            if not isinstance(common, BitsType):
                raise _err(f"'{op}' needs bit<W> or int<W> operands, got {common}", e)
        elif op in ("&", "|", "^"):
            if not isinstance(common, (BitsType, IntType)):
                raise _err(f"'{op}' needs integer operands, got {common}", e)
        elif op in ("/", "%"):
            if isinstance(common, BitsType) and common.signed:
                raise _err(f"'{op}' is not defined on signed values", e)
            if not isinstance(common, (BitsType, IntType)):
                raise _err(f"'{op}' needs integer operands, got {common}", e)
        elif op in ("+", "-", "*"):
            if not isinstance(common, (BitsType, IntType)):
                raise _err(f"'{op}' needs numeric operands, got {common}", e)
        else:
            raise _err(f"operator '{op}' is not supported", e)
        self._fold_binary(e, common, common)
        return common

    def unify_operands(self, e: ast.BinaryOp, lt: Type, rt: Type) -> Type:
        """The common type of two operands; unsized ints adopt the other side's type."""
        if lt == rt:
            return lt
        # A serializable enum meets its underlying type (or an int): use the bits.
        if isinstance(lt, EnumType) and lt.underlying is not None and not isinstance(rt, EnumType):
            self.coerce(e.left, lt.underlying)
            lt = lt.underlying
        if isinstance(rt, EnumType) and rt.underlying is not None and not isinstance(lt, EnumType):
            self.coerce(e.right, rt.underlying)
            rt = rt.underlying
        if lt == rt:
            return lt
        if isinstance(lt, IntType) and isinstance(rt, BitsType):
            self.coerce(e.left, rt)
            return rt
        if isinstance(rt, IntType) and isinstance(lt, BitsType):
            self.coerce(e.right, lt)
            return lt
        if isinstance(e.right, (ast.ListExpression, ast.StructExpression)) and isinstance(
            lt, StructLikeType
        ):
            self.coerce(e.right, lt)
            return lt
        if isinstance(lt, BitsType) and isinstance(rt, BitsType):
            raise _err(f"'{e.op}': operands have different types {lt} and {rt} (use a cast)", e)
        raise _err(f"'{e.op}': cannot combine {lt} and {rt}", e)

    def _fold_binary(self, e: ast.BinaryOp, result: Type, operand: Type) -> None:
        a, b = e.left.const_value, e.right.const_value
        if a is None or b is None:
            if (e.op == "&&" and a is False) or (e.op == "||" and a is True):
                e.const_value = a
            return
        if not isinstance(a, (int, bool)) or not isinstance(b, (int, bool)):
            if e.op in ("==", "!="):
                e.const_value = (a == b) == (e.op == "==")
            return
        try:
            e.const_value = consteval.binary(e.op, a, b, result, operand)
        except consteval.EvalError as ex:
            raise _err(str(ex), e) from None

    def _ternary(self, e: ast.Ternary, scope: Scope, expected: Type | None) -> Type:
        ct = self.check_expr(e.cond, scope)
        if not isinstance(ct, BoolType):
            raise _err(f"condition must be bool, got {ct}", e.cond)
        tt = self.check_expr(e.then, scope, expected)
        ot = self.check_expr(e.otherwise, scope, expected)
        if tt == ot:
            t = tt
        elif isinstance(tt, IntType) and isinstance(ot, BitsType):
            self.coerce(e.then, ot)
            t = ot
        elif isinstance(ot, IntType) and isinstance(tt, BitsType):
            self.coerce(e.otherwise, tt)
            t = tt
        else:
            raise _err(f"'?:' branches have different types {tt} and {ot}", e)
        if isinstance(t, IntType) and e.cond.const_value is None:
            if isinstance(expected, BitsType):
                self.coerce(e.then, expected)
                self.coerce(e.otherwise, expected)
                t = expected
            else:
                raise _err("'?:' with unsized integer branches needs a width", e)
        c = e.cond.const_value
        if c is not None:
            e.const_value = (e.then if c else e.otherwise).const_value
        return t

    def _cast(self, e: ast.Cast, scope: Scope, expected: Type | None) -> Type:
        dst = self.resolve_type(e.target, scope)
        src = self.check_expr(e.expr, scope, dst)
        if isinstance(e.expr, (ast.ListExpression, ast.StructExpression)):
            self.coerce(e.expr, dst)
            e.const_value = e.expr.const_value
            return dst
        if not self.can_cast(src, dst):
            raise _err(f"cannot cast {src} to {dst}", e)
        v = e.expr.const_value
        if v is not None:
            if (
                isinstance(src, IntType)
                and isinstance(dst, BitsType)
                and isinstance(v, int)
                and not consteval.fits(v, dst)
                and not consteval.fits(v, BitsType(dst.width))
            ):
                self.warn(f"{v}: value does not fit in {dst}; truncated", e.loc)
            e.const_value = consteval.cast(v, src, dst)
        return dst

    def can_cast(self, src: Type, dst: Type) -> bool:
        if src == dst:
            return True
        if isinstance(dst, NewType):
            return self.can_cast(src, dst.underlying) or src == dst.underlying
        if isinstance(src, NewType):
            return src.underlying == dst or self.can_cast(src.underlying, dst)
        if isinstance(src, BitsType):
            if isinstance(dst, BitsType):
                return src.width == dst.width or src.signed == dst.signed
            if isinstance(dst, BoolType):
                return src.width == 1 and not src.signed
            if isinstance(dst, EnumType):
                return dst.underlying is not None and dst.underlying == src
            return isinstance(dst, IntType)
        if isinstance(src, BoolType):
            return isinstance(dst, BitsType) and dst.width == 1 and not dst.signed
        if isinstance(src, IntType):
            return isinstance(dst, (BitsType, BoolType)) or (
                isinstance(dst, EnumType) and dst.underlying is not None
            )
        if isinstance(src, EnumType):
            return src.underlying is not None and (
                dst == src.underlying
                or (isinstance(dst, BitsType) and self.can_cast(src.underlying, dst))
            )
        return False

    def _list(self, e: ast.ListExpression, scope: Scope, expected: Type | None) -> Type:
        elem_expected: list[Type | None] = [None] * len(e.elements)
        if isinstance(expected, TupleType) and len(expected.elements) == len(e.elements):
            elem_expected = list(expected.elements)
        elif isinstance(expected, (StructType, HeaderType)) and len(expected.fields) == len(
            e.elements
        ):
            elem_expected = [f.type for f in expected.fields]
        types = tuple(
            self.check_expr(x, scope, et) for x, et in zip(e.elements, elem_expected, strict=True)
        )
        self._fold_list(e)
        return TupleType(types)

    def _struct_expr(self, e: ast.StructExpression, scope: Scope, expected: Type | None) -> Type:
        target: Type | None = None
        if e.target is not None:
            target = self.resolve_type(e.target, scope)
            if not isinstance(target, (StructType, HeaderType)):
                raise _err(f"{target} is not a struct or header type", e.target)
        elif isinstance(expected, (StructType, HeaderType)):
            target = expected
        for nf in e.fields:
            ft = None
            if isinstance(target, StructLikeType):
                f = target.field(nf.name)
                ft = f.type if f else None
            self.check_expr(nf.value, scope, ft)
        if target is None:
            raise _err("cannot infer the type of this struct initializer; write T { ... }", e)
        assert isinstance(target, StructLikeType)
        self._check_struct_fields(e, target)
        return target

    def _dontcare(self, e: ast.DontCare, scope: Scope, expected: Type | None) -> Type:
        return DONTCARE

    def _default(self, e: ast.DefaultExpression, scope: Scope, expected: Type | None) -> Type:
        return DONTCARE

    def _constructor_call(
        self, e: ast.ConstructorCall, scope: Scope, expected: Type | None
    ) -> Type:
        t, decl, _ctor, _p2a = self.check_instantiation(e.target, e.args, scope, e)
        e.decl = decl
        return t

    def _mask(self, e: ast.MaskExpression, scope: Scope, expected: Type | None) -> Type:
        raise _err("'&&&' is only allowed in select cases and table entries", e)

    def _range(self, e: ast.RangeExpression, scope: Scope, expected: Type | None) -> Type:
        raise _err("'..' is only allowed in select cases and table entries", e)

    def _select(self, e: ast.SelectExpression, scope: Scope, expected: Type | None) -> Type:
        raise _err("select is only allowed in a transition", e)

    # ================================================================= calls

    def _call(self, e: ast.MethodCallExpression, scope: Scope, expected: Type | None) -> Type:
        m = e.method
        explicit = [self.resolve_type(t, scope) for t in e.type_args]
        for a, aref in zip(explicit, e.type_args, strict=True):
            if isinstance(a, DontCareType):
                raise _err("'_' (inferred) type arguments are not supported", aref)
        if isinstance(m, ast.PathExpression):
            found = self.lookup(scope, m.name, m.top_level, m)
            m.decl = found[0]
            d = found[0]
            if isinstance(d, ast.ActionDecl):
                if e.type_args:
                    raise _err(f"action '{d.name}' takes no type arguments", e)
                if self.ctx.in_function:
                    raise _err("actions cannot be called from functions", e)
                if self.ctx.in_parser:
                    raise _err("actions cannot be called from a parser", e)
                ft = FunctionType(self.param_infos(d.params), VOID, [], "action", d.name)
                m.type = ft
                info = ast.CallInfo(kind="action", name=d.name, decl=d, func_type=ft)
                return self.bind_call(e, info, ft, d.params, explicit, scope, {})
            if isinstance(d, (ast.FunctionDecl, ast.ExternFunctionDecl)):
                cands = [
                    c for c in found if isinstance(c, (ast.FunctionDecl, ast.ExternFunctionDecl))
                ]
                return self.call_overloaded(e, cands, explicit, scope, None, {})
            self.check_expr(m, scope)
            raise _err(f"'{m.name}' is not callable", e)
        if isinstance(m, ast.Member):
            bt = self.check_expr(m.expr, scope)
            name = m.member
            if isinstance(bt, (HeaderType, HeaderUnionType)) and name in HEADER_METHODS:
                if isinstance(bt, HeaderUnionType) and name != "isValid":
                    raise _err(f"'{name}' is not defined on header unions", e)
                if e.args or e.type_args:
                    raise _err(f"'{name}' takes no arguments", e)
                if name != "isValid":
                    self.check_lvalue(m.expr, f"{name}()")
                ft = FunctionType([], HEADER_METHODS[name], [], "builtin", name)
                m.type = ft
                e.call = ast.CallInfo(kind="header_method", name=name, func_type=ft)
                return ft.return_type
            if isinstance(bt, HeaderStackType) and name in ("push_front", "pop_front"):
                self.check_lvalue(m.expr, f"{name}()")
                if len(e.args) != 1:
                    raise _err(f"'{name}' takes one argument", e)
                n = self.const_int(e.args[0].value, scope, f"the argument of {name}")
                if n < 0:
                    raise _err(f"'{name}' count must not be negative", e.args[0])
                ft = FunctionType([ParamInfo("count", "in", INT)], VOID, [], "builtin", name)
                m.type = ft
                e.call = ast.CallInfo(
                    kind="stack_method", name=name, func_type=ft, params_to_args=[e.args[0]]
                )
                return VOID
            if isinstance(bt, TableType) and name == "apply":
                if e.args:
                    raise _err("table apply takes no arguments", e)
                if self.ctx.in_action:
                    raise _err("tables cannot be applied inside actions", e)
                if self.ctx.in_function:
                    raise _err("tables cannot be applied inside functions", e)
                tdecl = bt.decl
                assert isinstance(tdecl, ast.TableDecl) and tdecl.apply_result is not None
                m.type = FunctionType([], tdecl.apply_result, [], "builtin", "apply")
                e.call = ast.CallInfo(kind="table_apply", name="apply", decl=tdecl)
                return tdecl.apply_result
            if isinstance(bt, (ParserType, ControlType)) and name == "apply":
                inst = m.expr.decl if isinstance(m.expr, ast.PathExpression) else None
                kind = "parser_apply" if isinstance(bt, ParserType) else "control_apply"
                if kind == "parser_apply" and not self.ctx.in_parser:
                    raise _err("parsers can only be applied from a parser", e)
                if kind == "control_apply" and (self.ctx.in_parser or self.ctx.in_action):
                    raise _err("controls can only be applied from a control's apply block", e)
                ft = FunctionType(list(bt.params), VOID, [], "builtin", "apply")
                m.type = ft
                info = ast.CallInfo(kind=kind, name="apply", decl=inst, instance=inst, func_type=ft)
                return self.bind_call(e, info, ft, None, explicit, scope, {})
            if isinstance(bt, ExternType):
                decl = bt.decl
                assert isinstance(decl, ast.ExternDecl)
                cands = decl.method(name)
                if not cands:
                    raise _err(f"extern {bt.name} has no method '{name}'", m)
                bindings: dict[str, Type] = {}
                if bt.type_args:
                    bindings = dict(zip(decl.type_params, bt.type_args, strict=True))
                inst = m.expr.decl if isinstance(m.expr, ast.PathExpression) else None
                return self.call_overloaded(e, cands, explicit, scope, inst, bindings)
            if isinstance(bt, TypeOfType) and name == "apply":
                tt = bt.type
                if not (
                    isinstance(tt, ControlType)
                    and isinstance(tt.decl, ast.ControlDecl)
                    and not tt.ctor_params
                    and not tt.type_params
                ):
                    raise _err(
                        "direct application is supported only for controls without "
                        "constructor or type parameters",
                        e,
                    )
                # Direct type invocation: an anonymous instance per application.
                if self.ctx.control is tt.decl:
                    raise _err(
                        "direct application of a control inside itself (recursion) is not allowed",
                        e,
                    )
                if self.ctx.in_parser or self.ctx.in_action:
                    raise _err("controls can only be applied from a control's apply block", e)
                ft = FunctionType(list(tt.params), VOID, [], "builtin", "apply")
                m.type = ft
                info = ast.CallInfo(
                    kind="control_apply", name="apply", decl=tt.decl, instance=None, func_type=ft
                )
                return self.bind_call(e, info, ft, None, explicit, scope, {})
            self.check_expr(m, scope)
            raise _err(f"'{name}' is not callable", e)
        raise _err("this expression is not callable", e)

    def call_overloaded(
        self,
        e: ast.MethodCallExpression,
        cands: list[ast.Node],
        explicit: list[Type],
        scope: Scope,
        instance: ast.Node | None,
        bindings: dict[str, Type],
    ) -> Type:
        nargs = len(e.args)
        named = {a.name for a in e.args if a.name}
        fits: list[ast.Node] = []
        for c in cands:
            params: list[ast.Param] = c.params  # type: ignore[attr-defined]
            required = sum(
                1 for p in params if not (p.has_annotation("optional") or p.default is not None)
            )
            if not (required <= nargs <= len(params)):
                continue
            if named and not named <= {p.name for p in params}:
                continue
            tps: list[str] = c.type_params  # type: ignore[attr-defined]
            if explicit and len(explicit) != len(tps):
                continue
            fits.append(c)
        name = cands[0].name  # type: ignore[attr-defined]
        if not fits:
            counts = sorted({len(c.params) for c in cands})  # type: ignore[attr-defined]
            raise _err(
                f"'{name}' called with {nargs} argument(s); expected "
                + " or ".join(str(n) for n in counts),
                e,
            )
        last_error: CompileError | None = None
        for c in fits:
            try:
                return self._call_one(e, c, explicit, scope, instance, bindings)
            except CompileError as ex:
                if len(fits) == 1:
                    raise
                last_error = ex
        assert last_error is not None
        raise last_error

    def _call_one(
        self,
        e: ast.MethodCallExpression,
        c: ast.Node,
        explicit: list[Type],
        scope: Scope,
        instance: ast.Node | None,
        bindings: dict[str, Type],
    ) -> Type:
        params: list[ast.Param] = c.params  # type: ignore[attr-defined]
        name: str = c.name  # type: ignore[attr-defined]
        ret_ref: ast.TypeRef | None = c.return_type  # type: ignore[attr-defined]
        rt = ret_ref.resolved if ret_ref is not None and ret_ref.resolved is not None else VOID
        own_tps: list[str] = list(c.type_params)  # type: ignore[attr-defined]
        tps = own_tps
        ext_tps: list[str] = []
        b = dict(bindings)
        if explicit:
            b.update(zip(tps, explicit, strict=True))
        if isinstance(c, ast.MethodDecl):
            kind = "extern_method"
            # An instance of a generic extern declared without type arguments: its type
            # arguments are inferred from the first method call that binds them.
            ext_tps = [] if bindings else self._extern_type_params(c)
            tps = tps + ext_tps
        elif isinstance(c, ast.ExternFunctionDecl):
            kind = "verify" if name == "verify" else "extern_function"
            if kind == "verify" and not self.ctx.in_parser:
                raise _err("verify can only be called in a parser", e)
        else:
            kind = "function"
        ft = FunctionType(self.param_infos(params), rt, tps, kind, name)
        info = ast.CallInfo(kind=kind, name=name, decl=c, instance=instance, func_type=ft)
        e.method.type = ft
        if isinstance(e.method, ast.Member):
            e.method.decl = c
        else:
            assert isinstance(e.method, ast.PathExpression)
            e.method.decl = c
        rt = self.bind_call(e, info, ft, params, explicit, scope, b)
        info.type_args = [b[tp] for tp in own_tps if tp in b]
        if kind == "extern_function" and name == "static_assert":
            self._static_assert(e)
        if ext_tps and isinstance(instance, ast.InstanceDecl) and all(tp in b for tp in ext_tps):
            owner = self._method_owner[id(c)]
            instance.type = ExternType(owner.name, tuple(b[tp] for tp in ext_tps), owner)
            if isinstance(e.method, ast.Member):
                e.method.expr.type = instance.type
        return rt

    def _static_assert(self, e: ast.MethodCallExpression) -> None:
        """core.p4's static_assert(check[, message]) is evaluated at compile time."""
        check = e.args[0].value.const_value if e.args else None
        if not isinstance(check, bool):
            raise _err("static_assert needs a compile-time constant condition", e)
        if not check:
            msg = e.args[1].value.const_value if len(e.args) > 1 else None
            raise _err(f"static_assert failed: {msg}" if msg else "static_assert failed", e)
        e.const_value = True

    def _extern_type_params(self, method: ast.MethodDecl) -> list[str]:
        owner = self._method_owner.get(id(method))
        return list(owner.type_params) if owner is not None else []

    def bind_call(
        self,
        e: ast.MethodCallExpression,
        info: ast.CallInfo,
        ft: FunctionType,
        params: list[ast.Param] | None,
        explicit: list[Type],
        scope: Scope,
        bindings: dict[str, Type],
    ) -> Type:
        """Match arguments to parameters, infer type arguments, check each argument."""
        p2a = self.match_args(ft.params, e.args, e, info.name)
        b = bindings
        inferable = set(ft.type_params)
        # First arguments whose types do not depend on inference from unsized ints.
        order = sorted(
            range(len(ft.params)),
            key=lambda i: 1 if p2a[i] is not None and self._is_unsized(p2a[i].value) else 0,  # type: ignore[union-attr]
        )
        for i in order:
            p = ft.params[i]
            a = p2a[i]
            if a is None:
                continue
            pt = subst(p.type, b)
            exp = None if has_typevars(pt) else pt
            at = self.check_expr(a.value, scope, exp)
            if has_typevars(pt):
                if isinstance(a.value, ast.DontCare):
                    continue
                if not self.unify(pt, at, b, inferable):
                    raise _err(
                        f"argument '{p.name}' of '{info.name}': type {at} does not match {pt}",
                        a.value,
                    )
                pt = subst(pt, b)
            self.check_arg(a, p, pt, info.name)
        unbound = [tp for tp in ft.type_params if tp not in b]
        params_out = [
            ParamInfo(p.name, p.direction, subst(p.type, b), p.optional) for p in ft.params
        ]
        rt = subst(ft.return_type, b)
        if has_typevars(rt) or any(has_typevars(p.type) for p in params_out if p.direction):
            missing = ", ".join(unbound) or "?"
            raise _err(f"cannot infer type argument(s) {missing} of '{info.name}'", e)
        info.func_type = FunctionType(params_out, rt, [], ft.kind, ft.name)
        info.type_args = [b[tp] for tp in ft.type_params if tp in b]
        info.params_to_args = p2a
        e.call = info
        return rt

    def _is_unsized(self, e: ast.Expression) -> bool:
        return (isinstance(e, ast.IntLiteral) and e.width is None) or (
            isinstance(e, ast.UnaryOp) and self._is_unsized(e.operand)
        )

    def match_args(
        self, params: list[ParamInfo], args: list[ast.Argument], node: ast.Node, name: str
    ) -> list[ast.Argument | None]:
        p2a: list[ast.Argument | None] = [None] * len(params)
        if any(a.name for a in args):
            if not all(a.name for a in args):
                raise _err("cannot mix named and positional arguments", node)
            index = {p.name: i for i, p in enumerate(params)}
            for a in args:
                assert a.name is not None
                if a.name not in index:
                    raise _err(f"'{name}' has no parameter named '{a.name}'", a)
                if p2a[index[a.name]] is not None:
                    raise _err(f"parameter '{a.name}' given twice", a)
                p2a[index[a.name]] = a
        else:
            if len(args) > len(params):
                raise _err(
                    f"too many arguments to '{name}': expected {len(params)}, got {len(args)}", node
                )
            for i, a in enumerate(args):
                p2a[i] = a
        for i, p in enumerate(params):
            if p2a[i] is None and not p.optional:
                raise _err(f"missing argument for parameter '{p.name}' of '{name}'", node)
        return p2a

    def check_arg(self, a: ast.Argument, p: ParamInfo, pt: Type, fname: str) -> None:
        v = a.value
        what = f"argument '{p.name}' of '{fname}'"
        if p.direction in ("out", "inout"):
            if isinstance(v, ast.DontCare):
                if p.direction == "inout":
                    raise _err(f"{what}: '_' cannot be passed to an inout parameter", v)
                v.type = pt
                return
            self.check_lvalue(v, what)
            if v.type != pt:
                raise _err(f"type mismatch for {what}: expected {pt}, got {v.type}", v)
            return
        if isinstance(v, ast.DontCare):
            raise _err(f"{what}: '_' can only be passed to out parameters", v)
        self.coerce(v, pt, f"for {what}")

    def unify(self, pt: Type, at: Type, b: dict[str, Type], inferable: set[str]) -> bool:
        """Bind type variables in pt so that it matches the argument type at."""
        if isinstance(pt, TypeVar):
            if pt.name in b:
                bound = b[pt.name]
                return bound == at or (isinstance(at, IntType) and isinstance(bound, BitsType))
            if isinstance(at, IntType):
                return False
            if isinstance(at, TupleType) and any(isinstance(x, IntType) for x in at.elements):
                return False
            b[pt.name] = at
            return True
        if isinstance(pt, TupleType):
            return (
                isinstance(at, TupleType)
                and len(at.elements) == len(pt.elements)
                and all(
                    self.unify(p, a, b, inferable)
                    for p, a in zip(pt.elements, at.elements, strict=True)
                )
            )
        if isinstance(pt, ExternType):
            return (
                isinstance(at, ExternType)
                and at.name == pt.name
                and len(at.type_args) == len(pt.type_args)
                and all(
                    self.unify(p, a, b, inferable)
                    for p, a in zip(pt.type_args, at.type_args, strict=True)
                )
            )
        if isinstance(pt, HeaderStackType):
            return (
                isinstance(at, HeaderStackType)
                and at.size == pt.size
                and self.unify(pt.element, at.element, b, inferable)
            )
        if isinstance(pt, SpecializedType):
            return self.unify_callable(pt, at, b, inferable)
        return pt == at or (isinstance(at, IntType) and isinstance(pt, BitsType))

    def unify_callable(
        self, pt: SpecializedType, at: Type, b: dict[str, Type], inferable: set[str]
    ) -> bool:
        """A parser/control argument against a generic parser/control parameter type."""
        proto = pt.base
        if not isinstance(proto, (ParserType, ControlType)) or type(at) is not type(proto):
            return False
        assert isinstance(at, (ParserType, ControlType))
        inner = dict(zip(proto.type_params, pt.type_args, strict=True))
        if len(proto.params) != len(at.params):
            return False
        for pp, ap in zip(proto.params, at.params, strict=True):
            if pp.direction != ap.direction:
                return False
            if not self.unify(subst(pp.type, inner), ap.type, b, inferable):
                return False
        return True

    # ================================================================= instantiation

    def check_instantiation(
        self, ref: ast.TypeRef, args: list[ast.Argument], scope: Scope, node: ast.Node
    ) -> tuple[Type, ast.Node | None, ast.MethodDecl | None, list[ast.Argument | None]]:
        t = self.resolve_type(ref, scope)
        base = t.base if isinstance(t, SpecializedType) else t
        decl = getattr(base, "decl", None)
        if isinstance(base, ExternType):
            assert isinstance(decl, ast.ExternDecl)
            if any(m.is_abstract for m in decl.methods):
                raise _err(
                    f"instantiating extern '{decl.name}' with abstract methods is not supported",
                    node,
                )
            ctors = [c for c in decl.constructors if len(c.params) >= len(args)]
            fits = [
                c
                for c in ctors
                if sum(1 for p in c.params if not (p.has_annotation("optional") or p.default))
                <= len(args)
            ]
            if not decl.constructors:
                raise _err(f"extern {decl.name} has no constructor", node)
            if not fits:
                counts = sorted({len(c.params) for c in decl.constructors})
                raise _err(
                    f"'{decl.name}' constructor called with {len(args)} argument(s); expected "
                    + " or ".join(str(n) for n in counts),
                    node,
                )
            b: dict[str, Type] = {}
            if base.type_args:
                b = dict(zip(decl.type_params, base.type_args, strict=True))
            last: CompileError | None = None
            for ctor in fits:
                try:
                    ft = FunctionType(
                        self.param_infos(ctor.params),
                        VOID,
                        list(decl.type_params),
                        "ctor",
                        decl.name,
                    )
                    cb = dict(b)
                    p2a = self._bind_ctor(ft, args, scope, node, cb, decl.name)
                    if (
                        not base.type_args
                        and decl.type_params
                        and all(tp in cb for tp in decl.type_params)
                    ):
                        # Type arguments inferred from the constructor arguments.
                        t = ExternType(decl.name, tuple(cb[tp] for tp in decl.type_params), decl)
                    return t, decl, ctor, p2a
                except CompileError as ex:
                    last = ex
                    if len(fits) == 1:
                        raise
            assert last is not None
            raise last
        if isinstance(base, (ParserType, ControlType)):
            if isinstance(decl, (ast.ParserTypeDecl, ast.ControlTypeDecl)):
                raise _err(f"cannot instantiate the type prototype '{decl.name}'", node)
            ft = FunctionType(list(base.ctor_params), VOID, [], "ctor", base.name)
            p2a = self._bind_ctor(ft, args, scope, node, {}, base.name)
            return t, decl, None, p2a
        if isinstance(base, PackageType):
            ft = FunctionType(
                list(base.ctor_params), VOID, list(base.type_params), "ctor", base.name
            )
            b = {}
            if isinstance(t, SpecializedType):
                b = dict(zip(base.type_params, t.type_args, strict=True))
            p2a = self._bind_ctor(ft, args, scope, node, b, base.name)
            missing = [tp for tp in base.type_params if tp not in b]
            if missing:
                raise _err(
                    f"cannot infer type argument(s) {', '.join(missing)} of '{base.name}'", node
                )
            spec = SpecializedType(base, tuple(b[tp] for tp in base.type_params))
            return spec, decl, None, p2a
        raise _err(f"cannot instantiate a value of type {t}", node)

    def _bind_ctor(
        self,
        ft: FunctionType,
        args: list[ast.Argument],
        scope: Scope,
        node: ast.Node,
        b: dict[str, Type],
        name: str,
    ) -> list[ast.Argument | None]:
        p2a = self.match_args(ft.params, args, node, name)
        inferable = set(ft.type_params)
        for p, a in zip(ft.params, p2a, strict=True):
            if a is None:
                continue
            pt = subst(p.type, b)
            at = self.check_expr(a.value, scope, None if has_typevars(pt) else pt)
            if has_typevars(pt) or isinstance(pt, SpecializedType):
                if not self.unify(pt, at, b, inferable):
                    raise _err(
                        f"argument '{p.name}' of '{name}': {at} does not match {pt}", a.value
                    )
                continue
            if isinstance(pt, (ParserType, ControlType)):
                if not (type(at) is type(pt) and self._same_signature(pt, at)):
                    raise _err(f"argument '{p.name}' of '{name}': expected {pt}, got {at}", a.value)
                continue
            self.coerce(a.value, pt, f"for argument '{p.name}' of '{name}'")
            if a.value.const_value is None and not isinstance(
                at, (ExternType, ParserType, ControlType, SpecializedType)
            ):
                raise _err(
                    f"argument '{p.name}' of '{name}' must be a compile-time constant", a.value
                )
        return p2a

    def _same_signature(self, a: Type, b: Type) -> bool:
        assert isinstance(a, (ParserType, ControlType)) and isinstance(b, (ParserType, ControlType))
        return len(a.params) == len(b.params) and all(
            x.direction == y.direction and x.type == y.type
            for x, y in zip(a.params, b.params, strict=True)
        )

    # ================================================================= annotations

    def check_annotations(self, anns: list[ast.Annotation], scope: Scope) -> None:
        for a in anns:
            if not a.expressions:
                continue
            for x in a.expressions:
                try:
                    self.check_expr(x, scope)
                except CompileError:
                    if a.name in ("id", "priority", "field_list"):
                        raise
                    x.type = None  # unknown annotation bodies need not type-check
            if a.name in ("id", "priority") and a.int_arg() is None:
                raise _err(f"@{a.name} needs an integer argument", a)
            if a.name == "name" and a.string_arg() is None:
                raise _err("@name needs a string argument", a)

    # ================================================================= statements

    def check_block(self, block: ast.BlockStatement, scope: Scope) -> None:
        inner = Scope(scope)
        for s in block.statements:
            self.check_statement(s, inner)

    def check_statement(self, s: ast.Node, scope: Scope) -> None:
        if isinstance(s, ast.Annotated):
            self.check_annotations(s.annotations, scope)
        if isinstance(s, ast.AssignmentStatement):
            lt = self.check_expr(s.lhs, scope)
            self.check_lvalue(s.lhs, "assignment")
            self.check_expr(s.rhs, scope, lt)
            self.coerce(s.rhs, lt, "in assignment")
        elif isinstance(s, ast.MethodCallStatement):
            self.check_expr(s.call, scope)
        elif isinstance(s, ast.BlockStatement):
            self.check_block(s, scope)
        elif isinstance(s, ast.IfStatement):
            ct = self.check_expr(s.cond, scope)
            if not isinstance(ct, BoolType):
                raise _err(f"condition must be bool, got {ct}", s.cond)
            self.check_statement(s.then, Scope(scope))
            if s.otherwise is not None:
                self.check_statement(s.otherwise, Scope(scope))
        elif isinstance(s, ast.SwitchStatement):
            self.check_switch(s, scope)
        elif isinstance(s, ast.ExitStatement):
            if self.ctx.in_parser:
                raise _err("'exit' is not allowed in a parser", s)
            if self.ctx.in_function:
                raise _err("'exit' is not allowed in a function", s)
        elif isinstance(s, ast.ReturnStatement):
            if self.ctx.in_parser:
                raise _err("'return' is not allowed in a parser", s)
            rt = self.ctx.return_type
            if s.value is None:
                if rt is not None and not isinstance(rt, VoidType):
                    raise _err(f"return needs a value of type {rt}", s)
            else:
                if rt is None or isinstance(rt, VoidType):
                    raise _err("return with a value in a void context", s)
                self.check_expr(s.value, scope, rt)
                self.coerce(s.value, rt, "in return")
        elif isinstance(s, ast.EmptyStatement):
            pass
        elif isinstance(s, ast.ForStatement | ast.ForInStatement):
            self.check_for(s, scope)
        elif isinstance(s, ast.BreakStatement | ast.ContinueStatement):
            if self.ctx.loops == 0:
                word = "break" if isinstance(s, ast.BreakStatement) else "continue"
                raise _err(f"'{word}' outside a for loop", s)
        elif isinstance(s, ast.VariableDecl):
            self.check_variable(s, scope)
        elif isinstance(s, ast.ConstDecl):
            self.check_const(s, scope)
        elif isinstance(s, ast.InstanceDecl):
            raise _err("instantiations are not allowed inside blocks", s)
        else:
            raise _err(f"{type(s).__name__} is not supported here", s)

    def check_for(self, s: ast.ForStatement | ast.ForInStatement, scope: Scope) -> None:
        if self.ctx.in_parser:
            raise _err("'for' is not allowed in a parser", s)
        inner = Scope(scope)
        if isinstance(s, ast.ForStatement):
            for x in s.init:
                self.check_statement(x, inner)
            if s.cond is not None:
                ct = self.check_expr(s.cond, inner)
                if not isinstance(ct, BoolType):
                    raise _err(f"condition must be bool, got {ct}", s.cond)
            for x in s.update:
                self.check_statement(x, inner)
        else:
            self.check_variable(s.var, inner)
            t = s.var.type
            c = s.collection
            if isinstance(c, ast.RangeExpression):
                for end in (c.lo, c.hi):
                    self.check_expr(end, scope, t)
                    self.coerce(end, t, "in for range")
            elif isinstance(c, ast.ListExpression):
                for x in c.elements:
                    self.check_expr(x, scope, t)
                    self.coerce(x, t, "in for list")
            else:
                ct = self.check_expr(c, scope)
                if not isinstance(ct, HeaderStackType):
                    raise _err(
                        "a for loop iterates over `lo .. hi`, a list expression or a header "
                        f"stack, not {ct}",
                        c,
                    )
                if ct.element != t:
                    raise _err(f"the loop variable has type {t}, the elements {ct.element}", c)
        self.ctx.loops += 1
        try:
            self.check_statement(s.body, Scope(inner))
        finally:
            self.ctx.loops -= 1

    def check_switch(self, s: ast.SwitchStatement, scope: Scope) -> None:
        if self.ctx.in_parser:
            raise _err("'switch' is not allowed in a parser", s)
        if self.ctx.in_action:
            raise _err("'switch' is not allowed in an action", s)
        t = self.check_expr(s.expr, scope)
        seen: set[object] = set()
        has_default = False
        for i, c in enumerate(s.cases):
            if c.body is None and i == len(s.cases) - 1:
                raise _err("the last switch case needs a body", c)
            if isinstance(c.label, ast.DefaultExpression):
                if has_default:
                    raise _err("duplicate default label", c.label)
                has_default = True
                c.label.type = t
                if i != len(s.cases) - 1:
                    raise _err("'default' must be the last switch case", c.label)
            elif isinstance(t, ActionEnumType):
                lab = c.label
                if not isinstance(lab, ast.PathExpression) or lab.name not in t.actions:
                    raise _err(f"switch label is not an action of table {t.name}", lab)
                table_scope_decl = scope.lookup(lab.name)
                lab.decl = table_scope_decl[0] if table_scope_decl else None
                lab.type = t
                key: object = lab.name
                if key in seen:
                    raise _err(f"duplicate switch label '{lab.name}'", lab)
                seen.add(key)
            elif isinstance(t, (BitsType, EnumType, ErrorType)):
                self.check_expr(c.label, scope, t)
                self.coerce(c.label, t, "in switch label")
                v = c.label.const_value
                if v is None:
                    raise _err("switch labels must be compile-time constants", c.label)
                if v in seen:
                    raise _err("duplicate switch label", c.label)
                seen.add(v)
            else:
                raise _err(f"cannot switch on a value of type {t}", s.expr)
            if c.body is not None:
                self.check_block(c.body, scope)

    def check_variable(self, v: ast.VariableDecl, scope: Scope) -> None:
        self.check_annotations(v.annotations, scope)
        t = self.resolve_type(v.type_ref, scope)
        if isinstance(t, (VoidType, ExternType, IntType, StringType, MatchKindType)):
            raise _err(f"variables cannot have type {t}", v.type_ref)
        if v.init is not None:
            self.check_expr(v.init, scope, t)
            self.coerce(v.init, t, "in initializer")
        self.declare(scope, v.name, v, v.loc)

    def check_const(self, c: ast.ConstDecl, scope: Scope) -> None:
        self.check_annotations(c.annotations, scope)
        t = self.resolve_type(c.type_ref, scope)
        self.check_expr(c.value, scope, t)
        self.coerce(c.value, t, "in constant initializer")
        if c.value.const_value is None:
            raise _err(
                f"initializer of constant '{c.name}' is not a compile-time constant", c.value
            )
        self.declare(scope, c.name, c, c.loc)

    # ================================================================= declarations

    def check_program(self, decls: list[ast.Node]) -> None:
        for d in decls:
            self.check_toplevel(d)

    def check_toplevel(self, d: ast.Node) -> None:
        scope = self.root
        if isinstance(d, ast.ConstDecl):
            self.check_const(d, scope)
        elif isinstance(d, ast.TypedefDecl):
            self.resolve_type(d.type_ref, scope)
            self.declare(scope, d.name, d, d.loc)
        elif isinstance(d, ast.NewTypeDecl):
            u = self.resolve_type(d.type_ref, scope)
            if not isinstance(u, (BitsType, BoolType, NewType)):
                raise _err(
                    f"'type' declarations need a bit<W>, int<W> or bool base type, not {u}",
                    d.type_ref,
                )
            d.resolved = NewType(d.name, u, d)
            self.declare(scope, d.name, d, d.loc)
        elif isinstance(d, ast.StructLikeDecl):
            self.check_struct_like(d, scope)
        elif isinstance(d, ast.EnumDecl):
            self.check_enum(d, scope)
        elif isinstance(d, ast.ErrorDecl):
            for m in d.members:
                if m.name in self.error_members:
                    raise _err(f"error.{m.name} is declared twice", m)
                self.error_members[m.name] = m
                self.errors.append(m.name)
        elif isinstance(d, ast.MatchKindDecl):
            for m in d.members:
                if m.name in self.match_kind_members:
                    raise _err(f"match_kind {m.name} is declared twice", m)
                self.match_kind_members[m.name] = m
                self.match_kinds.append(m.name)
                self.declare(scope, m.name, m, m.loc)
        elif isinstance(d, ast.ExternDecl):
            self.check_extern(d, scope)
        elif isinstance(d, ast.ExternFunctionDecl):
            self.check_annotations(d.annotations, scope)
            inner = self.type_params_scope(d.type_params, scope)
            self.resolve_type(d.return_type, inner)
            self.declare_params(d.params, inner, "extern")
            self.declare(scope, d.name, d, d.loc)
        elif isinstance(d, ast.FunctionDecl):
            self.check_function(d, scope)
        elif isinstance(d, (ast.ParserTypeDecl, ast.ControlTypeDecl)):
            inner = self.type_params_scope(d.type_params, scope)
            self.declare_params(d.params, inner, "apply")
            cls = ParserType if isinstance(d, ast.ParserTypeDecl) else ControlType
            d.resolved = cls(d.name, self.param_infos(d.params), [], list(d.type_params), d)
            self.declare(scope, d.name, d, d.loc)
        elif isinstance(d, ast.PackageTypeDecl):
            inner = self.type_params_scope(d.type_params, scope)
            self.declare_params(d.params, inner, "ctor")
            d.resolved = PackageType(d.name, self.param_infos(d.params), list(d.type_params), d)
            self.declare(scope, d.name, d, d.loc)
        elif isinstance(d, ast.ParserDecl):
            self.check_parser(d, scope)
        elif isinstance(d, ast.ControlDecl):
            self.check_control(d, scope)
        elif isinstance(d, ast.ActionDecl):
            self.check_action(d, scope)
        elif isinstance(d, ast.InstanceDecl):
            self.check_instance(d, scope)
            if d.name == "main":
                self.main = d
        else:
            raise _err(f"{type(d).__name__} is not supported at the top level", d)

    def check_struct_like(self, d: ast.StructLikeDecl, scope: Scope) -> None:
        if d.type_params:
            raise _err("generic struct/header declarations are not supported", d)
        self.check_annotations(d.annotations, scope)
        cls = {
            ast.HeaderDecl: HeaderType,
            ast.StructDecl: StructType,
            ast.HeaderUnionDecl: HeaderUnionType,
        }[type(d)]
        t = cls(d.name, [], d)
        d.resolved = t
        seen: set[str] = set()
        varbits = 0
        for f in d.fields:
            ft = self.resolve_type(f.type_ref, scope)
            if f.name in seen:
                raise _err(f"duplicate field '{f.name}' in {d.name}", f)
            seen.add(f.name)
            self.check_annotations(f.annotations, scope)
            if isinstance(d, ast.HeaderDecl):
                ok = isinstance(ft, (BitsType, VarbitType, BoolType, NewType)) or (
                    isinstance(ft, EnumType) and ft.underlying is not None
                )
                if isinstance(ft, StructType) and _fixed_width_struct(ft):
                    ok = True  # flattened into the header (p4c's FlattenHeaders)
                if not ok:
                    raise _err(f"header field '{f.name}' cannot have type {ft}", f.type_ref)
                if isinstance(ft, VarbitType):
                    varbits += 1
                    if varbits > 1:
                        raise _err("a header may contain at most one varbit field", f)
            elif isinstance(d, ast.HeaderUnionDecl):
                if not isinstance(ft, HeaderType):
                    raise _err(
                        f"header_union field '{f.name}' must be a header, not {ft}", f.type_ref
                    )
            else:
                if isinstance(
                    ft, (VoidType, ExternType, IntType, StringType, ParserType, ControlType)
                ):
                    raise _err(f"struct field '{f.name}' cannot have type {ft}", f.type_ref)
            t.fields.append(Field(f.name, ft, f.annotations))
        self.declare(scope, d.name, d, d.loc)

    def check_enum(self, d: ast.EnumDecl, scope: Scope) -> None:
        self.check_annotations(d.annotations, scope)
        underlying = None
        if d.underlying is not None:
            u = self.resolve_type(d.underlying, scope)
            if not isinstance(u, BitsType):
                raise _err(f"enum underlying type must be bit<W> or int<W>, not {u}", d.underlying)
            underlying = u
        t = EnumType(d.name, [], underlying, {}, d)
        d.resolved = t
        for m in d.members:
            if m.name in t.members:
                raise _err(f"duplicate enum member '{m.name}'", m)
            t.members.append(m.name)
            if underlying is not None:
                if m.value is None:
                    raise _err(f"member '{m.name}' of a serializable enum needs a value", m)
                self.check_expr(m.value, scope, underlying)
                self.coerce(m.value, underlying, "in enum member")
                v = m.value.const_value
                if not isinstance(v, int):
                    raise _err("enum member values must be compile-time constants", m.value)
                t.values[m.name] = v
            elif m.value is not None:
                raise _err(
                    "only serializable enums (enum bit<W> E {...}) have member values", m.value
                )
        self.declare(scope, d.name, d, d.loc)

    def check_extern(self, d: ast.ExternDecl, scope: Scope) -> None:
        self.check_annotations(d.annotations, scope)
        self.declare(scope, d.name, d, d.loc)
        inner = self.type_params_scope(d.type_params, scope)
        for c in d.constructors:
            cs = Scope(inner)
            self.declare_params(c.params, cs, "ctor")
            self._method_owner[id(c)] = d
        for m in d.methods:
            ms = self.type_params_scope(m.type_params, inner)
            assert m.return_type is not None
            self.resolve_type(m.return_type, ms)
            self.declare_params(m.params, ms, "method")
            self.check_annotations(m.annotations, ms)
            self._method_owner[id(m)] = d
        if any(m.is_abstract for m in d.methods):
            # Instances would need initializer blocks, which are not supported.
            pass

    def check_function(self, d: ast.FunctionDecl, scope: Scope) -> None:
        self.check_annotations(d.annotations, scope)
        if d.type_params:
            raise _err("generic functions are not supported", d)
        inner = self.type_params_scope(d.type_params, scope)
        rt = self.resolve_type(d.return_type, inner)
        self.declare_params(d.params, inner, "function")
        self.declare(scope, d.name, d, d.loc)
        with self.context(_Context("function", rt, in_function=True)):
            self.check_block(d.body, inner)
        if not isinstance(rt, VoidType) and not _always_returns(d.body):
            raise _err(f"function '{d.name}' does not return a value on every path", d)

    def check_action(self, d: ast.ActionDecl, scope: Scope) -> None:
        self.check_annotations(d.annotations, scope)
        inner = Scope(scope)
        self.declare_params(d.params, inner, "action")
        seen_data = False
        for p in d.params:
            if p.direction == "":
                seen_data = True
            elif seen_data:
                raise _err(
                    "action parameters with a direction must come before directionless ones", p
                )
        self.declare(scope, d.name, d, d.loc)
        with self.context(_Context("action", VOID, in_action=True, in_parser=self.ctx.in_parser)):
            self.check_block(d.body, inner)

    def check_instance(self, d: ast.InstanceDecl, scope: Scope) -> None:
        self.check_annotations(d.annotations, scope)
        t, decl, ctor, p2a = self.check_instantiation(d.type_ref, d.args, scope, d)
        d.type, d.decl, d.ctor, d.params_to_args = t, decl, ctor, p2a
        self.declare(scope, d.name, d, d.loc)

    # ----------------------------------------------------------------- parsers

    def check_parser(self, d: ast.ParserDecl, scope: Scope) -> None:
        self.check_annotations(d.annotations, scope)
        pscope = Scope(scope)
        self.declare_params(d.params, pscope, "apply")
        self.declare_params(d.ctor_params, pscope, "ctor")
        d.resolved = ParserType(
            d.name, self.param_infos(d.params), self.param_infos(d.ctor_params), [], d
        )
        self.declare(scope, d.name, d, d.loc)
        with self.context(_Context("parser", None, in_parser=True)):
            for loc_decl in d.locals:
                if isinstance(loc_decl, ast.VariableDecl):
                    self.check_variable(loc_decl, pscope)
                elif isinstance(loc_decl, ast.ConstDecl):
                    self.check_const(loc_decl, pscope)
                elif isinstance(loc_decl, ast.InstanceDecl):
                    self.check_instance(loc_decl, pscope)
                elif isinstance(loc_decl, ast.ValueSetDecl):
                    self.check_annotations(loc_decl.annotations, pscope)
                    et = self.resolve_type(loc_decl.element, pscope)
                    self.const_int(loc_decl.size, pscope, "the value_set size")
                    loc_decl.type = ValueSetType(et)
                    self.declare(pscope, loc_decl.name, loc_decl, loc_decl.loc)
                else:
                    raise _err(f"{type(loc_decl).__name__} is not allowed in a parser", loc_decl)
            states: dict[str, ast.ParserState] = {}
            for st in d.states:
                if st.name in ("accept", "reject"):
                    raise _err(f"state '{st.name}' is built in and cannot be declared", st)
                if st.name in states:
                    raise _err(f"duplicate state '{st.name}'", st)
                states[st.name] = st
            if "start" not in states:
                raise _err(f"parser '{d.name}' has no 'start' state", d)
            states["accept"] = ACCEPT_STATE
            states["reject"] = REJECT_STATE
            for st in d.states:
                self.check_annotations(st.annotations, pscope)
                sscope = Scope(pscope)
                for s in st.statements:
                    self.check_statement(s, sscope)
                tr = st.transition
                if isinstance(tr, ast.PathExpression):
                    self.resolve_state(tr, states)
                elif isinstance(tr, ast.SelectExpression):
                    self.check_select(tr, sscope, states)

    def resolve_state(self, p: ast.PathExpression, states: dict[str, ast.ParserState]) -> None:
        target = states.get(p.name)
        if target is None:
            raise _err(f"state '{p.name}' is not declared", p)
        p.decl = target
        p.type = VOID

    def check_select(
        self, sel: ast.SelectExpression, scope: Scope, states: dict[str, ast.ParserState]
    ) -> None:
        key_types: list[Type] = []
        for k in sel.keys:
            kt = self.check_expr(k, scope)
            if isinstance(kt, IntType):
                raise _err("select keys need a width", k)
            if not isinstance(kt, (BitsType, BoolType, EnumType, ErrorType, NewType)):
                raise _err(f"cannot select on a value of type {kt}", k)
            key_types.append(kt)
        sel.type = TupleType(tuple(key_types)) if len(key_types) != 1 else key_types[0]
        for case in sel.cases:
            self.check_keyset(case.keyset, key_types, scope, allow_value_set=True)
            self.resolve_state(case.state, states)

    def check_keyset(
        self, ks: ast.Expression, key_types: list[Type], scope: Scope, allow_value_set: bool
    ) -> None:
        if isinstance(ks, (ast.DefaultExpression, ast.DontCare)):
            ks.type = SetType(key_types[0] if len(key_types) == 1 else TupleType(tuple(key_types)))
            return
        if isinstance(ks, ast.PathExpression) and allow_value_set:
            found = scope.lookup(ks.name)
            if found and isinstance(found[0], ast.ValueSetDecl):
                vs = found[0]
                ks.decl = vs
                assert isinstance(vs.type, ValueSetType)
                elem = vs.type.element
                want: Type = key_types[0] if len(key_types) == 1 else TupleType(tuple(key_types))
                ok = elem == want
                if not ok and isinstance(elem, StructType):
                    ok = [f.type for f in elem.fields] == key_types
                if not ok:
                    raise _err(
                        f"value_set element type {elem} does not match select key {want}", ks
                    )
                ks.type = SetType(elem)
                return
        if len(key_types) == 1 and not isinstance(ks, ast.ListExpression):
            self.check_simple_keyset(ks, key_types[0], scope)
            return
        if isinstance(ks, ast.ListExpression):
            if len(ks.elements) != len(key_types):
                raise _err(
                    f"keyset has {len(ks.elements)} elements but there are {len(key_types)} keys",
                    ks,
                )
            for el, kt in zip(ks.elements, key_types, strict=True):
                self.check_simple_keyset(el, kt, scope)
            ks.type = SetType(TupleType(tuple(key_types)))
            return
        raise _err(f"keyset needs {len(key_types)} elements", ks)

    def check_simple_keyset(self, ks: ast.Expression, kt: Type, scope: Scope) -> None:
        if isinstance(ks, (ast.DefaultExpression, ast.DontCare)):
            ks.type = SetType(kt)
            return
        if isinstance(ks, ast.MaskExpression):
            for part in (ks.value, ks.mask):
                self.check_expr(part, scope, kt)
                pt = part.type
                if (
                    isinstance(kt, EnumType)
                    and kt.underlying is not None
                    and pt != kt
                    and isinstance(pt, IntType | BitsType)
                ):
                    # A bit pattern (`0xf0`) for a key of serializable enum type:
                    # masks are values of the enum's underlying type.
                    self.coerce(part, kt.underlying, "in mask keyset")
                else:
                    self.coerce(part, kt, "in mask keyset")
                if part.const_value is None:
                    raise _err("keyset values must be compile-time constants", part)
            ks.type = SetType(kt)
            return
        if isinstance(ks, ast.RangeExpression):
            for part in (ks.lo, ks.hi):
                self.check_expr(part, scope, kt)
                self.coerce(part, kt, "in range keyset")
                if part.const_value is None:
                    raise _err("keyset values must be compile-time constants", part)
            ks.type = SetType(kt)
            return
        if isinstance(ks, ast.PathExpression):
            found = scope.lookup(ks.name)
            if found and isinstance(found[0], ast.ValueSetDecl):
                vs = found[0]
                assert isinstance(vs.type, ValueSetType)
                if vs.type.element != kt:
                    raise _err(f"value_set element type {vs.type.element} does not match {kt}", ks)
                ks.decl = vs
                ks.type = SetType(kt)
                return
        self.check_expr(ks, scope, kt)
        self.coerce(ks, kt, "in keyset")
        if ks.const_value is None:
            raise _err("keyset values must be compile-time constants", ks)

    # ----------------------------------------------------------------- controls

    def check_control(self, d: ast.ControlDecl, scope: Scope) -> None:
        self.check_annotations(d.annotations, scope)
        cscope = Scope(scope)
        self.declare_params(d.params, cscope, "apply")
        self.declare_params(d.ctor_params, cscope, "ctor")
        d.resolved = ControlType(
            d.name, self.param_infos(d.params), self.param_infos(d.ctor_params), [], d
        )
        self.declare(scope, d.name, d, d.loc)
        with self.context(_Context("control", VOID, control=d)):
            for loc_decl in d.locals:
                if isinstance(loc_decl, ast.VariableDecl):
                    self.check_variable(loc_decl, cscope)
                elif isinstance(loc_decl, ast.ConstDecl):
                    self.check_const(loc_decl, cscope)
                elif isinstance(loc_decl, ast.InstanceDecl):
                    self.check_instance(loc_decl, cscope)
                elif isinstance(loc_decl, ast.ActionDecl):
                    self.check_action(loc_decl, cscope)
                elif isinstance(loc_decl, ast.TableDecl):
                    self.check_table(loc_decl, cscope)
                else:
                    raise _err(f"{type(loc_decl).__name__} is not allowed in a control", loc_decl)
            self.check_block(d.body, cscope)

    def check_table(self, t: ast.TableDecl, scope: Scope) -> None:
        self.check_annotations(t.annotations, scope)
        for k in t.keys:
            self.check_annotations(k.annotations, scope)
            kt = self.check_expr(k.expr, scope)
            if k.match_kind not in self.match_kind_members:
                raise _err(f"'{k.match_kind}' is not a declared match_kind", k.match_kind_loc)
            if isinstance(kt, IntType) or not isinstance(
                kt, (BitsType, BoolType, EnumType, ErrorType, NewType)
            ):
                raise _err(f"table key cannot have type {kt}", k.expr)
        names: list[str] = []
        for ref in t.actions:
            self.check_annotations(ref.annotations, scope)
            self.check_action_ref(ref, scope, in_list=True)
            if ref.name in names:
                raise _err(f"action '{ref.name}' appears twice in the actions list", ref)
            names.append(ref.name)
        listed = {ref.decl for ref in t.actions}
        if t.default_action is not None:
            self.check_action_ref(t.default_action, scope, in_list=False)
            if t.default_action.decl not in listed:
                raise _err(
                    f"default action '{t.default_action.name}' is not in the actions list",
                    t.default_action,
                )
        for prop in t.properties:
            self.check_annotations(prop.annotations, scope)
            if prop.value is not None:
                self.check_expr(prop.value, scope)
                if prop.name == "size":
                    v = prop.value.const_value
                    if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                        raise _err("table size must be a non-negative integer constant", prop.value)
        t.resolved = TableType(t.name, t)
        t.apply_result = TableApplyResultType(t.name, ActionEnumType(t.name, names))
        if t.entries is not None:
            key_types = [k.expr.type for k in t.keys]
            for entry in t.entries:
                self.check_annotations(entry.annotations, scope)
                if len(entry.keys) != len(key_types):
                    raise _err(
                        f"entry has {len(entry.keys)} key(s), "
                        f"table '{t.name}' has {len(key_types)}",
                        entry,
                    )
                for ks, kt, k in zip(entry.keys, key_types, t.keys, strict=True):
                    assert kt is not None
                    self.check_simple_keyset(ks, kt, scope)
                    if isinstance(ks, ast.MaskExpression) and k.match_kind == "exact":
                        raise _err("a mask is not allowed on an exact key", ks)
                    if isinstance(ks, ast.RangeExpression) and k.match_kind not in ("range",):
                        raise _err(f"a range is not allowed on a {k.match_kind} key", ks)
                self.check_action_ref(entry.action, scope, in_list=False)
                if entry.action.decl not in listed:
                    raise _err(
                        f"action '{entry.action.name}' is not in the actions list", entry.action
                    )
                if entry.priority is not None:
                    v = self.const_int(entry.priority, scope, "an entry priority")
                    if v < 0:
                        raise _err("entry priority must not be negative", entry.priority)
        self.declare(scope, t.name, t, t.loc)

    def check_action_ref(self, ref: ast.ActionRef, scope: Scope, in_list: bool) -> None:
        expr = ref.expr
        assert isinstance(expr, ast.PathExpression)
        found = self.lookup(scope, expr.name, expr.top_level, expr)
        d = found[0]
        if not isinstance(d, ast.ActionDecl):
            raise _err(f"'{ref.name}' is not an action", ref)
        expr.decl = d
        ref.decl = d
        expr.type = FunctionType(self.param_infos(d.params), VOID, [], "action", d.name)
        directed = [p for p in d.params if p.direction]
        data = [p for p in d.params if not p.direction]
        if in_list:
            bound = directed
            if len(ref.args) != len(directed):
                raise _err(
                    f"action '{d.name}' in the actions list needs {len(directed)} argument(s) "
                    f"for its directed parameters, got {len(ref.args)}",
                    ref,
                )
        else:
            if len(ref.args) == len(d.params):
                bound = list(d.params)
            elif len(ref.args) == len(data) and not directed:
                bound = data
            else:
                raise _err(
                    f"action '{d.name}' needs {len(data)} argument(s) for its action data, "
                    f"got {len(ref.args)}",
                    ref,
                )
        if not ref.has_parens and not in_list and d.params and data:
            raise _err(f"action '{d.name}' needs arguments for its parameters", ref)
        infos = self.param_infos(bound)
        p2a = self.match_args(infos, ref.args, ref, d.name)
        for p, a in zip(infos, p2a, strict=True):
            if a is None:
                continue
            self.check_expr(a.value, scope, p.type)
            self.check_arg(a, p, p.type, d.name)
            if not in_list and not p.direction and a.value.const_value is None:
                raise _err(
                    f"argument '{p.name}' of '{d.name}' must be a compile-time constant", a.value
                )
        by_param = {id(p): a for p, a in zip(bound, p2a, strict=True)}
        ref.params_to_args = [by_param.get(id(p)) for p in d.params]


def _always_returns(s: ast.Node) -> bool:
    if isinstance(s, (ast.ReturnStatement, ast.ExitStatement)):
        return True
    if isinstance(s, ast.BlockStatement):
        return any(_always_returns(x) for x in s.statements)
    if isinstance(s, ast.IfStatement):
        return s.otherwise is not None and _always_returns(s.then) and _always_returns(s.otherwise)
    return False


_EXPR_HANDLERS = {
    ast.IntLiteral: Checker._int_literal,
    ast.BoolLiteral: Checker._bool_literal,
    ast.StringLiteral: Checker._string_literal,
    ast.PathExpression: Checker._path,
    ast.Member: Checker._member,
    ast.ArrayIndex: Checker._array_index,
    ast.Slice: Checker._slice,
    ast.UnaryOp: Checker._unary,
    ast.BinaryOp: Checker._binary,
    ast.Ternary: Checker._ternary,
    ast.Cast: Checker._cast,
    ast.ListExpression: Checker._list,
    ast.StructExpression: Checker._struct_expr,
    ast.DontCare: Checker._dontcare,
    ast.DefaultExpression: Checker._default,
    ast.ConstructorCall: Checker._constructor_call,
    ast.MethodCallExpression: Checker._call,
    ast.MaskExpression: Checker._mask,
    ast.RangeExpression: Checker._range,
    ast.SelectExpression: Checker._select,
}
