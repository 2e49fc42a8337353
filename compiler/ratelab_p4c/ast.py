"""AST of P4_16 programs, produced by the parser and annotated by the semantic passes.

Every node has `loc` (a SourceLocation in the original file, after #include handling).
After `frontend.parse_and_check`:
  * every Expression has `.type` (a types.Type) and `.const_value` (None unless the
    value is known at compile time; see types.py for the value representations);
  * every PathExpression has `.decl` (the declaring node) and Member has `.decl` where the
    member is a declaration (enum/error member, table, extern method, ...);
  * every TypeRef has `.resolved` (a types.Type);
  * every MethodCallExpression has `.call` (a CallInfo describing what is called).

All classes are keyword-only dataclasses; lists default to empty.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .errors import SourceLocation
from .types import FunctionType, Type

# ============================================================================= base


@dataclass(kw_only=True, eq=False)
class Node:
    """Base of all AST nodes.  loc: where the node starts in the original source."""

    loc: SourceLocation | None = None


@dataclass(kw_only=True, eq=False)
class Annotation(Node):
    """`@name` / `@name(...)` / `@name[...]`.

    name: annotation name without '@'.
    tokens: the raw token texts between the parentheses (unparsed body), always kept.
    expressions: the body parsed as a comma-separated expression list, or None when it
      does not parse as one; for known annotations (@name, @id, @priority, ...) these are
      typed and constant-folded.
    kv: for `@name[k=v, ...]` structured key-value annotations, key -> expression.
    """

    name: str
    tokens: list[str] = field(default_factory=list)
    expressions: list[Expression] | None = None
    kv: dict[str, Expression] | None = None

    def string_arg(self) -> str | None:
        """The first argument if it is a string literal (e.g. @name("x")), else None."""
        if self.expressions and isinstance(self.expressions[0], StringLiteral):
            return self.expressions[0].value
        return None

    def int_arg(self) -> int | None:
        """The first argument's compile-time integer value (e.g. @id(5)), else None."""
        if self.expressions:
            v = self.expressions[0].const_value
            if isinstance(v, int) and not isinstance(v, bool):
                return v
        return None


@dataclass(kw_only=True, eq=False)
class Annotated(Node):
    """Node that can carry annotations."""

    annotations: list[Annotation] = field(default_factory=list)

    def annotation(self, name: str) -> Annotation | None:
        for a in self.annotations:
            if a.name == name:
                return a
        return None

    def has_annotation(self, name: str) -> bool:
        return self.annotation(name) is not None

    @property
    def name_annotation(self) -> str | None:
        """The value of @name("...") if present."""
        a = self.annotation("name")
        return a.string_arg() if a else None


# ============================================================================= type references


@dataclass(kw_only=True, eq=False)
class TypeRef(Node):
    """A type as written in the source.  resolved: the semantic type (set by the checker)."""

    resolved: Type | None = None


@dataclass(kw_only=True, eq=False)
class BaseTypeRef(TypeRef):
    """A keyword type: name is one of 'bool', 'error', 'string', 'int', 'void',
    'match_kind', '_' (don't care)."""

    name: str


@dataclass(kw_only=True, eq=False)
class BitTypeRef(TypeRef):
    """`bit<W>`, `int<W>` or plain `bit` (= bit<1>).  width: expression (compile-time int)
    or None for plain `bit`; signed: True for int<W>."""

    width: Expression | None = None
    signed: bool = False


@dataclass(kw_only=True, eq=False)
class VarbitTypeRef(TypeRef):
    """`varbit<W>`; width is a compile-time expression."""

    width: Expression


@dataclass(kw_only=True, eq=False)
class NamedTypeRef(TypeRef):
    """A reference to a named type, optionally specialized: `H`, `register<bit<32>>`,
    `.H` (top-level).  decl: the declaration it names (set by the checker)."""

    name: str
    type_args: list[TypeRef] = field(default_factory=list)
    top_level: bool = False
    decl: Node | None = field(default=None, repr=False)


@dataclass(kw_only=True, eq=False)
class StackTypeRef(TypeRef):
    """Header stack type `element[size]`."""

    element: TypeRef
    size: Expression


@dataclass(kw_only=True, eq=False)
class TupleTypeRef(TypeRef):
    """`tuple<T1, ..., Tn>`."""

    elements: list[TypeRef] = field(default_factory=list)


# ============================================================================= expressions


@dataclass(kw_only=True, eq=False)
class Expression(Node):
    """Base of expressions.  type: semantic type (set by the checker);
    const_value: compile-time value or None (see types.py)."""

    type: Type | None = None
    const_value: Any = None

    @property
    def is_const(self) -> bool:
        return self.const_value is not None


@dataclass(kw_only=True, eq=False)
class IntLiteral(Expression):
    """Integer literal.  value: its (non-negative) value as written (a minus sign is a
    UnaryOp); for `4s15` const_value is wrapped into the signed range (-1);
    width: the explicit width (`8w5` -> 8) or None for an unsized literal (type `int`);
    signed: True for `s` literals; text: the literal as written."""

    value: int
    width: int | None = None
    signed: bool = False
    text: str = ""


@dataclass(kw_only=True, eq=False)
class BoolLiteral(Expression):
    """`true` / `false`."""

    value: bool


@dataclass(kw_only=True, eq=False)
class StringLiteral(Expression):
    """String literal with escapes processed; value is the string content."""

    value: str


@dataclass(kw_only=True, eq=False)
class PathExpression(Expression):
    """A name: a variable, parameter, constant, instance, action, table, state, or a type
    name used as a value (`HashAlgorithm` in `HashAlgorithm.crc16`, `error` in
    `error.NoError`).  top_level: written with a leading dot.  decl: the declaration."""

    name: str
    top_level: bool = False
    decl: Node | None = field(default=None, repr=False)


@dataclass(kw_only=True, eq=False)
class Member(Expression):
    """`expr.member`: a struct/header field, enum/error member, header method
    (isValid/setValid/setInvalid), stack property (next/last/lastIndex/size/push_front/
    pop_front), table `apply`, apply-result `hit`/`miss`/`action_run`, extern method, or
    parser/control `apply`.  decl: declaration of the member where one exists (EnumMember
    node, ErrorMember, MethodDecl, Field's declaring FieldDecl, ...)."""

    expr: Expression
    member: str
    decl: Node | None = field(default=None, repr=False)


@dataclass(kw_only=True, eq=False)
class ArrayIndex(Expression):
    """`base[index]` on a header stack (or tuple with constant index)."""

    base: Expression
    index: Expression


@dataclass(kw_only=True, eq=False)
class Slice(Expression):
    """Bit slice `base[hi:lo]`; hi/lo are compile-time expressions; hi_value/lo_value are
    their folded integers (set by the checker)."""

    base: Expression
    hi: Expression
    lo: Expression
    hi_value: int = 0
    lo_value: int = 0


@dataclass(kw_only=True, eq=False)
class UnaryOp(Expression):
    """Prefix operator: op is '!', '~', '-' or '+'."""

    op: str
    operand: Expression


@dataclass(kw_only=True, eq=False)
class BinaryOp(Expression):
    """Binary operator.  op: one of
    '*' '/' '%' '+' '-' '|+|' '|-|' '<<' '>>' '<=' '>=' '<' '>' '!=' '==' '&' '^' '|'
    '++' (concatenation) '&&' '||'."""

    op: str
    left: Expression
    right: Expression


@dataclass(kw_only=True, eq=False)
class Ternary(Expression):
    """`cond ? then : otherwise`."""

    cond: Expression
    then: Expression
    otherwise: Expression


@dataclass(kw_only=True, eq=False)
class Cast(Expression):
    """`(type) expr`."""

    target: TypeRef
    expr: Expression


@dataclass(kw_only=True, eq=False)
class Argument(Node):
    """A call argument: name is set for named arguments (`f(x = 1)`); value may be a
    DontCare for `_`."""

    value: Expression
    name: str | None = None


@dataclass(kw_only=True, eq=False)
class CallInfo:
    """What a MethodCallExpression calls (set by the checker).

    kind: one of
      'action'          - direct action call; decl = ActionDecl
      'function'        - user function; decl = FunctionDecl
      'extern_function' - e.g. mark_to_drop, hash, verify_checksum; decl = ExternFunctionDecl
      'extern_method'   - method of an extern instance; decl = MethodDecl,
                          instance = the InstanceDecl/Param the object comes from
                          (None when the object is not a plain name, e.g. a stack element)
      'table_apply'     - t.apply(); decl = TableDecl
      'parser_apply' / 'control_apply' - sub-parser/control instance apply;
                          decl = the InstanceDecl (for a direct type invocation
                          `C.apply(...)` of a control: the ControlDecl, instance None)
      'header_method'   - isValid / setValid / setInvalid on a header (or isValid on a union)
      'stack_method'    - push_front / pop_front on a stack
      'verify'          - parser `verify(cond, error)` (an extern function in core.p4)
    packet_in/packet_out methods (extract, emit, lookahead, advance, length) are ordinary
    'extern_method' calls (decl = MethodDecl, instance = the packet Param).
    name: the method/function name; func_type: the (substituted) FunctionType;
    type_args: explicit or inferred type arguments in type-parameter order;
    params_to_args: for each parameter of func_type, the argument bound to it (after named
    argument reordering) or None for an omitted optional parameter.
    """

    kind: str
    name: str
    decl: Node | None = field(default=None, repr=False)
    instance: Node | None = field(default=None, repr=False)
    func_type: FunctionType | None = None
    type_args: list[Type] = field(default_factory=list)
    params_to_args: list[Argument | None] = field(default_factory=list)


@dataclass(kw_only=True, eq=False)
class MethodCallExpression(Expression):
    """`method<type_args>(args)`.  method: the callee expression (PathExpression or Member);
    call: resolution result (CallInfo)."""

    method: Expression
    type_args: list[TypeRef] = field(default_factory=list)
    args: list[Argument] = field(default_factory=list)
    call: CallInfo | None = None


@dataclass(kw_only=True, eq=False)
class ConstructorCall(Expression):
    """`Type(args)` used as a value: an instance created inline, e.g. the `MyParser()` in
    `V1Switch(MyParser(), ...) main;`.  type is the instantiated type; decl: the declaration
    of the instantiated parser/control/extern/package."""

    target: TypeRef
    args: list[Argument] = field(default_factory=list)
    decl: Node | None = field(default=None, repr=False)


@dataclass(kw_only=True, eq=False)
class ListExpression(Expression):
    """`{e1, ..., en}` — a tuple/list value (hash and checksum field lists, tuple keysets,
    struct/header initializers by position).  Type is TupleType unless the context makes it
    a struct/header (then type is that StructLikeType)."""

    elements: list[Expression] = field(default_factory=list)


@dataclass(kw_only=True, eq=False)
class NamedExpression(Node):
    """`name = value` inside a StructExpression."""

    name: str
    value: Expression


@dataclass(kw_only=True, eq=False)
class StructExpression(Expression):
    """`{f1 = e1, ...}` or `T {f1 = e1, ...}`: a struct/header value.  target is the
    explicit type (or None; then the type comes from the context)."""

    target: TypeRef | None = None
    fields: list[NamedExpression] = field(default_factory=list)


@dataclass(kw_only=True, eq=False)
class DontCare(Expression):
    """`_`: don't-care as an out argument or keyset element."""


@dataclass(kw_only=True, eq=False)
class DefaultExpression(Expression):
    """`default` keyset (select case, table entry)."""


@dataclass(kw_only=True, eq=False)
class MaskExpression(Expression):
    """Keyset `value &&& mask`."""

    value: Expression
    mask: Expression


@dataclass(kw_only=True, eq=False)
class RangeExpression(Expression):
    """Keyset `lo .. hi`."""

    lo: Expression
    hi: Expression


# ============================================================================= statements


@dataclass(kw_only=True, eq=False)
class Statement(Annotated):
    """Base of statements."""


@dataclass(kw_only=True, eq=False)
class AssignmentStatement(Statement):
    """`lhs = rhs;`, or `lhs op= rhs;` with compound = op and rhs the `lhs op rhs`
    BinaryOp whose left operand is the very `lhs` node (evaluated once)."""

    lhs: Expression
    rhs: Expression
    compound: str | None = None


@dataclass(kw_only=True, eq=False)
class MethodCallStatement(Statement):
    """A call used as a statement: `call;`"""

    call: MethodCallExpression


@dataclass(kw_only=True, eq=False)
class BlockStatement(Statement):
    """`{ statements }`; statements may include VariableDecl / ConstDecl / InstanceDecl."""

    statements: list[Node] = field(default_factory=list)


@dataclass(kw_only=True, eq=False)
class IfStatement(Statement):
    """`if (cond) then else otherwise`; otherwise is None when absent."""

    cond: Expression
    then: Statement
    otherwise: Statement | None = None


@dataclass(kw_only=True, eq=False)
class SwitchCase(Node):
    """One `label: body` of a switch.  label: PathExpression naming an action (action_run
    switch), an Expression (switch on an integer/enum), or DefaultExpression.  body: the
    BlockStatement, or None for a fall-through label (`a: b: {...}`)."""

    label: Expression
    body: BlockStatement | None = None


@dataclass(kw_only=True, eq=False)
class SwitchStatement(Statement):
    """`switch (expr) { cases }` — expr is usually `t.apply().action_run`."""

    expr: Expression
    cases: list[SwitchCase] = field(default_factory=list)


@dataclass(kw_only=True, eq=False)
class ExitStatement(Statement):
    """`exit;`"""


@dataclass(kw_only=True, eq=False)
class ReturnStatement(Statement):
    """`return;` or `return expr;` (functions)."""

    value: Expression | None = None


@dataclass(kw_only=True, eq=False)
class EmptyStatement(Statement):
    """`;`"""


@dataclass(kw_only=True, eq=False)
class ForStatement(Statement):
    """`for (init; cond; update) body` (P4_16 1.2.4): init and update are lists of
    variable declarations, assignments and calls; cond may be absent (always true)."""

    init: list[Node] = field(default_factory=list)
    cond: Expression | None = None
    update: list[Node] = field(default_factory=list)
    body: Statement


@dataclass(kw_only=True, eq=False)
class ForInStatement(Statement):
    """`for (T v in lo .. hi) body` (both ends included) or `for (T v in list) body`:
    var is the loop variable's declaration (no initializer); collection a
    RangeExpression or a list expression."""

    var: VariableDecl
    collection: Expression
    body: Statement


@dataclass(kw_only=True, eq=False)
class BreakStatement(Statement):
    """`break;` (inside a for loop)."""


@dataclass(kw_only=True, eq=False)
class ContinueStatement(Statement):
    """`continue;` (inside a for loop)."""


# ============================================================================= declarations


@dataclass(kw_only=True, eq=False)
class Declaration(Annotated):
    """Base of named declarations.  name: the declared identifier."""

    name: str


@dataclass(kw_only=True, eq=False)
class Param(Declaration):
    """A parameter.  direction: 'in' | 'out' | 'inout' | '' (directionless: action data for
    actions, compile-time for constructors); type_ref: declared type; default: default
    value expression or None.  `@optional` appears in annotations."""

    direction: str = ""
    type_ref: TypeRef
    default: Expression | None = None

    @property
    def type(self) -> Type | None:
        return self.type_ref.resolved


@dataclass(kw_only=True, eq=False)
class ConstDecl(Declaration, Statement):
    """`const T name = value;` (top level or local).  value is folded: value.const_value."""

    type_ref: TypeRef
    value: Expression

    @property
    def type(self) -> Type | None:
        return self.type_ref.resolved


@dataclass(kw_only=True, eq=False)
class VariableDecl(Declaration, Statement):
    """`T name;` or `T name = init;` (parser/control locals, block statements)."""

    type_ref: TypeRef
    init: Expression | None = None

    @property
    def type(self) -> Type | None:
        return self.type_ref.resolved


@dataclass(kw_only=True, eq=False)
class TypedefDecl(Declaration):
    """`typedef T name;` (transparent alias; name resolves to type_ref.resolved)."""

    type_ref: TypeRef


@dataclass(kw_only=True, eq=False)
class NewTypeDecl(Declaration):
    """`type T name;` (a distinct NewType)."""

    type_ref: TypeRef
    resolved: Type | None = None


@dataclass(kw_only=True, eq=False)
class FieldDecl(Annotated):
    """A field of a header/struct/header_union: `T name;`."""

    name: str
    type_ref: TypeRef


@dataclass(kw_only=True, eq=False)
class StructLikeDecl(Declaration):
    """Header/struct/header_union declaration.  type_params: generic params (unsupported
    beyond parsing); resolved: the HeaderType/StructType/HeaderUnionType."""

    fields: list[FieldDecl] = field(default_factory=list)
    type_params: list[str] = field(default_factory=list)
    resolved: Type | None = None


@dataclass(kw_only=True, eq=False)
class HeaderDecl(StructLikeDecl):
    """`header H { ... }`"""


@dataclass(kw_only=True, eq=False)
class StructDecl(StructLikeDecl):
    """`struct S { ... }`"""


@dataclass(kw_only=True, eq=False)
class HeaderUnionDecl(StructLikeDecl):
    """`header_union U { ... }`"""


@dataclass(kw_only=True, eq=False)
class EnumMember(Annotated):
    """A member of an enum, error or match_kind declaration.  value: its initializer for
    serializable enums (folded: value.const_value), else None.  parent: the declaration."""

    name: str
    value: Expression | None = None
    parent: Node | None = field(default=None, repr=False)


@dataclass(kw_only=True, eq=False)
class EnumDecl(Declaration):
    """`enum E {...}` or `enum bit<N> E {...}`.  underlying: the bit type ref or None;
    resolved: the EnumType."""

    members: list[EnumMember] = field(default_factory=list)
    underlying: TypeRef | None = None
    resolved: Type | None = None


@dataclass(kw_only=True, eq=False)
class ErrorDecl(Annotated):
    """`error { A, B }` — members are merged into Program.errors."""

    members: list[EnumMember] = field(default_factory=list)


@dataclass(kw_only=True, eq=False)
class MatchKindDecl(Annotated):
    """`match_kind { exact, ternary }` — members are merged into Program.match_kinds."""

    members: list[EnumMember] = field(default_factory=list)


@dataclass(kw_only=True, eq=False)
class MethodDecl(Declaration):
    """An extern method or constructor prototype.  return_type is None for constructors
    (is_constructor True); type_params: the method's own generic params; is_abstract for
    `abstract` methods."""

    return_type: TypeRef | None = None
    type_params: list[str] = field(default_factory=list)
    params: list[Param] = field(default_factory=list)
    is_constructor: bool = False
    is_abstract: bool = False


@dataclass(kw_only=True, eq=False)
class ExternDecl(Declaration):
    """`extern Name<type_params> { constructors; methods; }` (an extern object type).
    methods excludes constructors."""

    type_params: list[str] = field(default_factory=list)
    constructors: list[MethodDecl] = field(default_factory=list)
    methods: list[MethodDecl] = field(default_factory=list)

    def method(self, name: str) -> list[MethodDecl]:
        """All overloads of a method."""
        return [m for m in self.methods if m.name == name]


@dataclass(kw_only=True, eq=False)
class ExternFunctionDecl(Declaration):
    """`extern R name<type_params>(params);` (an extern function, e.g. mark_to_drop)."""

    return_type: TypeRef
    type_params: list[str] = field(default_factory=list)
    params: list[Param] = field(default_factory=list)


@dataclass(kw_only=True, eq=False)
class FunctionDecl(Declaration):
    """A P4 function `R name(params) { body }`."""

    return_type: TypeRef
    type_params: list[str] = field(default_factory=list)
    params: list[Param] = field(default_factory=list)
    body: BlockStatement = field(default_factory=BlockStatement)


@dataclass(kw_only=True, eq=False)
class ParserTypeDecl(Declaration):
    """Parser type prototype `parser Name<type_params>(params);` (e.g. v1model `Parser`)."""

    type_params: list[str] = field(default_factory=list)
    params: list[Param] = field(default_factory=list)
    resolved: Type | None = None


@dataclass(kw_only=True, eq=False)
class ControlTypeDecl(Declaration):
    """Control type prototype `control Name<type_params>(params);`."""

    type_params: list[str] = field(default_factory=list)
    params: list[Param] = field(default_factory=list)
    resolved: Type | None = None


@dataclass(kw_only=True, eq=False)
class PackageTypeDecl(Declaration):
    """`package Name<type_params>(ctor params);` (e.g. V1Switch)."""

    type_params: list[str] = field(default_factory=list)
    params: list[Param] = field(default_factory=list)
    resolved: Type | None = None


@dataclass(kw_only=True, eq=False)
class InstanceDecl(Declaration, Statement):
    """Instantiation `T<args>(ctor args) name;` e.g. `counter(64, CounterType.packets) c;`,
    `MyParser() p;`, `V1Switch(...) main;`.  type: the instance type (ExternType with
    type_args, ParserType, ControlType, SpecializedType for packages); decl: the
    declaration of the instantiated type (ExternDecl/ParserDecl/ControlDecl/
    PackageTypeDecl); ctor: the chosen constructor MethodDecl for externs;
    params_to_args as in CallInfo."""

    type_ref: TypeRef
    args: list[Argument] = field(default_factory=list)
    type: Type | None = None
    decl: Node | None = field(default=None, repr=False)
    ctor: MethodDecl | None = None
    params_to_args: list[Argument | None] = field(default_factory=list)


@dataclass(kw_only=True, eq=False)
class ValueSetDecl(Declaration):
    """`value_set<T>(size) name;` in a parser.  element: T; size: compile-time expr."""

    element: TypeRef
    size: Expression
    type: Type | None = None


@dataclass(kw_only=True, eq=False)
class ActionDecl(Declaration):
    """`action name(params) { body }`.  Directionless params are action data (supplied by
    the control plane); directed params are bound at the call site."""

    params: list[Param] = field(default_factory=list)
    body: BlockStatement = field(default_factory=BlockStatement)


# ----------------------------------------------------------------------------- tables


@dataclass(kw_only=True, eq=False)
class KeyElement(Annotated):
    """One entry of a table `key`: `expr : match_kind @annotations;`.  match_kind is the
    match kind name ('exact', 'lpm', 'ternary', 'range', 'optional', 'selector', ...)."""

    expr: Expression
    match_kind: str
    match_kind_loc: SourceLocation | None = None


@dataclass(kw_only=True, eq=False)
class ActionRef(Annotated):
    """A reference to an action in a table's `actions` list, `default_action` or an entry:
    `name` or `name(args)`.  expr: the callee expression (PathExpression, possibly with a
    leading dot); args: the arguments written (for default_action / entries these bind the
    action data params; in the `actions` list they bind only directed params);
    decl: the ActionDecl (set by the checker); params_to_args as in CallInfo."""

    name: str
    expr: Expression
    args: list[Argument] = field(default_factory=list)
    has_parens: bool = False
    decl: ActionDecl | None = field(default=None, repr=False)
    params_to_args: list[Argument | None] = field(default_factory=list)


@dataclass(kw_only=True, eq=False)
class TableEntry(Annotated):
    """One entry of `entries = {...}`: keys: one keyset expression per key element (after
    splitting a tuple); action: the ActionRef; priority: the `priority = N` value expression
    or None; is_const: entry was `const` (or the whole list was `const entries`)."""

    keys: list[Expression] = field(default_factory=list)
    action: ActionRef
    priority: Expression | None = None
    is_const: bool = False


@dataclass(kw_only=True, eq=False)
class TableProperty(Annotated):
    """A table property as written: name ('key', 'actions', 'default_action', 'entries',
    'size', 'implementation', 'counters', 'meters', 'support_timeout', or any other);
    is_const: declared `const`; value: for generic `name = expr;` properties, the
    expression, else None (key/actions/entries/default_action are in TableDecl fields)."""

    name: str
    is_const: bool = False
    value: Expression | None = None


@dataclass(kw_only=True, eq=False)
class TableDecl(Declaration):
    """`table name { properties }`.

    keys: key elements (empty if no `key`); actions: the `actions` list;
    default_action: ActionRef or None; default_action_const: `const default_action`;
    entries: TableEntry list or None; entries_const: `const entries`;
    size: the `size` value expression or None; properties: every property as written
    (including key/actions/...), for anything else (implementation, counters, meters,
    support_timeout, ...).  resolved: TableType; apply_result: TableApplyResultType.
    """

    keys: list[KeyElement] = field(default_factory=list)
    actions: list[ActionRef] = field(default_factory=list)
    default_action: ActionRef | None = None
    default_action_const: bool = False
    entries: list[TableEntry] | None = None
    entries_const: bool = False
    size: Expression | None = None
    properties: list[TableProperty] = field(default_factory=list)
    resolved: Type | None = None
    apply_result: Type | None = None

    def property(self, name: str) -> TableProperty | None:
        for p in self.properties:
            if p.name == name:
                return p
        return None


# ----------------------------------------------------------------------------- parsers


@dataclass(kw_only=True, eq=False)
class SelectCase(Node):
    """`keyset : state;` — keyset is an Expression (value, MaskExpression, RangeExpression,
    DefaultExpression, DontCare, a value_set PathExpression, or ListExpression of these for
    tuple keys); state: PathExpression naming the next state (its decl is the ParserState;
    accept/reject resolve to builtin ParserState nodes with transition None)."""

    keyset: Expression
    state: PathExpression


@dataclass(kw_only=True, eq=False)
class SelectExpression(Expression):
    """`select(keys) { cases }`; keys: the selector expressions (a tuple is flattened)."""

    keys: list[Expression] = field(default_factory=list)
    cases: list[SelectCase] = field(default_factory=list)


@dataclass(kw_only=True, eq=False)
class ParserState(Declaration):
    """`state name { statements transition ...; }`.  transition: a PathExpression (direct
    transition) or SelectExpression; None only for the builtin accept/reject states."""

    statements: list[Node] = field(default_factory=list)
    transition: Expression | None = None


@dataclass(kw_only=True, eq=False)
class ParserDecl(Declaration):
    """`parser Name(params)(ctor_params) { locals states }`.  locals: VariableDecl,
    ConstDecl, InstanceDecl, ValueSetDecl; states in source order.  resolved: ParserType."""

    type_params: list[str] = field(default_factory=list)
    params: list[Param] = field(default_factory=list)
    ctor_params: list[Param] = field(default_factory=list)
    locals: list[Node] = field(default_factory=list)
    states: list[ParserState] = field(default_factory=list)
    resolved: Type | None = None

    def state(self, name: str) -> ParserState | None:
        for s in self.states:
            if s.name == name:
                return s
        return None


# ----------------------------------------------------------------------------- controls


@dataclass(kw_only=True, eq=False)
class ControlDecl(Declaration):
    """`control Name(params)(ctor_params) { locals apply { body } }`.  locals: ActionDecl,
    TableDecl, VariableDecl, ConstDecl, InstanceDecl, in source order."""

    type_params: list[str] = field(default_factory=list)
    params: list[Param] = field(default_factory=list)
    ctor_params: list[Param] = field(default_factory=list)
    locals: list[Node] = field(default_factory=list)
    body: BlockStatement = field(default_factory=BlockStatement)
    resolved: Type | None = None


# ============================================================================= program


@dataclass(kw_only=True, eq=False)
class Program(Node):
    """The root.  declarations: all top-level declarations in order (including those of
    core.p4 / v1model.p4); main: the `main` package instantiation (None if absent);
    source_files: every file read (main file first, then includes in order);
    errors: all error member names in declaration order (merged);
    match_kinds: all match_kind names (merged); warnings: formatted warning lines
    (`file:line:col: warning: ...`), e.g. constants truncated to their width."""

    declarations: list[Node] = field(default_factory=list)
    main: InstanceDecl | None = None
    source_files: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    match_kinds: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def find(self, name: str) -> Node | None:
        """The first top-level declaration with this name."""
        for d in self.declarations:
            if isinstance(d, Declaration) and d.name == name:
                return d
        return None
