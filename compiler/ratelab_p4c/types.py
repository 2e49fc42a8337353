"""Semantic types of P4_16 programs (the `.type` of every typed AST node).

Structural types (bit<N>, tuples, stacks, ...) are frozen dataclasses and compare by
value.  Named types (headers, structs, enums, externs, parser/control/package types,
`type` declarations) compare by their name: P4 top-level type names are unique, so
two objects with the same class and name are the same type.

Typedefs are transparent: `typedef bit<48> macAddr_t;` resolves to `BitsType(48)`.
A `type` declaration (`type bit<9> PortId_t;`) creates a distinct `NewType`.

Compile-time values (`Expression.const_value`) use the Python representations:
  bit<N>/int<N>/int -> int (the mathematical value; int<N> values are negative when the
                             sign bit is set, bit<N> values are in [0, 2**N))
  bool              -> bool
  string            -> str
  error             -> ErrorValue
  enum member       -> EnumValue
  match_kind        -> MatchKindValue
  list/tuple        -> tuple of values
  struct/header     -> StructValue (field name -> value)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .ast import Annotation, Node

# The widest bit<N> / int<N> / varbit<N> and width-prefixed literal, as p4c
# (MaximumWidthSupported); wider would only exhaust memory.
MAX_WIDTH = 2048


class Type:
    """Base class of all semantic types."""

    def is_serializable_int(self) -> bool:
        """True for bit<N>, int<N> (fixed-width integers)."""
        return False


# ----------------------------------------------------------------------------- base types


@dataclass(frozen=True)
class BoolType(Type):
    """The `bool` type."""

    def __str__(self) -> str:
        return "bool"


@dataclass(frozen=True)
class StringType(Type):
    """The `string` type (only for compile-time string literals, e.g. annotation args)."""

    def __str__(self) -> str:
        return "string"


@dataclass(frozen=True)
class IntType(Type):
    """The arbitrary-precision `int` type of unsized integer literals and `const int` values."""

    def __str__(self) -> str:
        return "int"


@dataclass(frozen=True)
class BitsType(Type):
    """Fixed-width integer: `bit<width>` (signed=False) or `int<width>` (signed=True)."""

    width: int
    signed: bool = False

    def is_serializable_int(self) -> bool:
        return True

    @property
    def max_value(self) -> int:
        return (1 << (self.width - 1)) - 1 if self.signed else (1 << self.width) - 1

    @property
    def min_value(self) -> int:
        return -(1 << (self.width - 1)) if self.signed else 0

    def __str__(self) -> str:
        return f"{'int' if self.signed else 'bit'}<{self.width}>"


@dataclass(frozen=True)
class VarbitType(Type):
    """`varbit<max_width>`: variable-length bit string (only as a header field)."""

    max_width: int

    def __str__(self) -> str:
        return f"varbit<{self.max_width}>"


@dataclass(frozen=True)
class VoidType(Type):
    """`void`: return type of methods/functions without result."""

    def __str__(self) -> str:
        return "void"


@dataclass(frozen=True)
class ErrorType(Type):
    """The `error` type; its members are the union of all `error {...}` declarations."""

    def __str__(self) -> str:
        return "error"


@dataclass(frozen=True)
class MatchKindType(Type):
    """The `match_kind` type; members are the union of all `match_kind {...}` declarations."""

    def __str__(self) -> str:
        return "match_kind"


@dataclass(frozen=True)
class DontCareType(Type):
    """Type of `_` (don't-care) used as an out argument or keyset."""

    def __str__(self) -> str:
        return "_"


@dataclass(frozen=True)
class TupleType(Type):
    """`tuple<T1, ..., Tn>`; also the type of a list expression `{e1, ..., en}`."""

    elements: tuple[Type, ...]

    def __str__(self) -> str:
        return "tuple<" + ", ".join(str(e) for e in self.elements) + ">"


@dataclass(frozen=True)
class HeaderStackType(Type):
    """Header stack `element[size]`: element is a HeaderType or HeaderUnionType."""

    element: Type
    size: int

    def __str__(self) -> str:
        return f"{self.element}[{self.size}]"


@dataclass(frozen=True)
class SetType(Type):
    """Type of a keyset expression (select case label, mask `&&&`, range `..`, value_set)."""

    element: Type

    def __str__(self) -> str:
        return f"set<{self.element}>"


@dataclass(frozen=True)
class TypeVar(Type):
    """A generic type parameter (e.g. `T` in `extern register<T, I>`), unbound."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class TypeOfType(Type):
    """Type of an expression that names a type: `HashAlgorithm` in `HashAlgorithm.crc16`,
    `error` in `error.NoError`.  `type` is the named type."""

    type: Type

    def __str__(self) -> str:
        return f"type {self.type}"


# ----------------------------------------------------------------------------- named types


class NamedType(Type):
    """Base for nominal types; equality and hashing by (class, name)."""

    name: str

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.name == self.name  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.name))

    def __str__(self) -> str:
        return self.name


@dataclass(eq=False)
class Field:
    """One field of a header/struct/header_union: its name, type and annotations."""

    name: str
    type: Type
    annotations: list[Annotation] = field(default_factory=list)


@dataclass(eq=False)
class StructLikeType(NamedType):
    """Common part of header/struct/header_union types.

    name: the declared name; fields: in declaration order; decl: the declaring AST node.
    """

    name: str
    fields: list[Field] = field(default_factory=list)
    decl: Node | None = field(default=None, repr=False)

    def field(self, name: str) -> Field | None:
        for f in self.fields:
            if f.name == name:
                return f
        return None

    __eq__ = NamedType.__eq__
    __hash__ = NamedType.__hash__
    __str__ = NamedType.__str__


@dataclass(eq=False)
class HeaderType(StructLikeType):
    """`header H { ... }`; fields are bit<N>/int<N>/varbit<N>/bool/serializable enums."""

    @property
    def width_bits(self) -> int:
        """Total width of fixed-width fields (varbit fields count 0)."""
        return sum(field_width(f.type) for f in self.fields)

    __eq__ = NamedType.__eq__
    __hash__ = NamedType.__hash__
    __str__ = NamedType.__str__


@dataclass(eq=False)
class StructType(StructLikeType):
    """`struct S { ... }`."""

    __eq__ = NamedType.__eq__
    __hash__ = NamedType.__hash__
    __str__ = NamedType.__str__


@dataclass(eq=False)
class HeaderUnionType(StructLikeType):
    """`header_union U { ... }`: all fields are headers."""

    __eq__ = NamedType.__eq__
    __hash__ = NamedType.__hash__
    __str__ = NamedType.__str__


@dataclass(eq=False)
class EnumType(NamedType):
    """`enum E { A, B }` or serializable `enum bit<8> E { A = 1, B = 2 }`.

    members: names in declaration order; underlying: BitsType for serializable enums,
    else None; values: member name -> integer value (serializable enums only).
    """

    name: str
    members: list[str] = field(default_factory=list)
    underlying: BitsType | None = None
    values: dict[str, int] = field(default_factory=dict)
    decl: Node | None = field(default=None, repr=False)

    __eq__ = NamedType.__eq__
    __hash__ = NamedType.__hash__
    __str__ = NamedType.__str__


@dataclass(eq=False)
class NewType(NamedType):
    """`type <underlying> Name;` — a distinct type with the representation of `underlying`."""

    name: str
    underlying: Type = field(default_factory=BoolType)
    decl: Node | None = field(default=None, repr=False)

    __eq__ = NamedType.__eq__
    __hash__ = NamedType.__hash__
    __str__ = NamedType.__str__


@dataclass(frozen=True)
class ParamInfo:
    """A parameter as seen by a callable type: name, direction ('in', 'out', 'inout' or ''
    for directionless), type, and whether it may be omitted (`@optional` or a default)."""

    name: str
    direction: str
    type: Type
    optional: bool = False


@dataclass(eq=False)
class ExternType(NamedType):
    """An extern object type, possibly specialized: `register<bit<32>, bit<32>>` has
    type_args (BitsType(32), BitsType(32)).  type_args is () for unspecialized use and
    for non-generic externs.  decl is the ExternDecl."""

    name: str
    type_args: tuple[Type, ...] = ()
    decl: Node | None = field(default=None, repr=False)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, ExternType)
            and other.name == self.name
            and other.type_args == self.type_args
        )

    def __hash__(self) -> int:
        return hash(("ExternType", self.name, self.type_args))

    def __str__(self) -> str:
        if self.type_args:
            return f"{self.name}<{', '.join(str(t) for t in self.type_args)}>"
        return self.name


@dataclass(eq=False)
class ParserType(NamedType):
    """Type of a parser (declaration or parser type prototype): the apply parameters,
    the constructor parameters (empty for prototypes) and type parameters."""

    name: str
    params: list[ParamInfo] = field(default_factory=list)
    ctor_params: list[ParamInfo] = field(default_factory=list)
    type_params: list[str] = field(default_factory=list)
    decl: Node | None = field(default=None, repr=False)

    __eq__ = NamedType.__eq__
    __hash__ = NamedType.__hash__
    __str__ = NamedType.__str__


@dataclass(eq=False)
class ControlType(NamedType):
    """Type of a control (declaration or control type prototype); fields as ParserType."""

    name: str
    params: list[ParamInfo] = field(default_factory=list)
    ctor_params: list[ParamInfo] = field(default_factory=list)
    type_params: list[str] = field(default_factory=list)
    decl: Node | None = field(default=None, repr=False)

    __eq__ = NamedType.__eq__
    __hash__ = NamedType.__hash__
    __str__ = NamedType.__str__


@dataclass(eq=False)
class PackageType(NamedType):
    """`package V1Switch<H, M>(Parser<H, M> p, ...);` — constructor params and type params."""

    name: str
    ctor_params: list[ParamInfo] = field(default_factory=list)
    type_params: list[str] = field(default_factory=list)
    decl: Node | None = field(default=None, repr=False)

    __eq__ = NamedType.__eq__
    __hash__ = NamedType.__hash__
    __str__ = NamedType.__str__


@dataclass(eq=False)
class SpecializedType(Type):
    """A parser/control/package type with bound type arguments, e.g. the instance type of
    `V1Switch(...) main` after inference: base is the PackageType/ParserType/ControlType,
    type_args the inferred arguments in type-parameter order."""

    base: Type
    type_args: tuple[Type, ...] = ()

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, SpecializedType)
            and other.base == self.base
            and other.type_args == self.type_args
        )

    def __hash__(self) -> int:
        return hash(("SpecializedType", self.base, self.type_args))

    def __str__(self) -> str:
        return f"{self.base}<{', '.join(str(t) for t in self.type_args)}>"


@dataclass(eq=False)
class FunctionType(Type):
    """Type of a callable: an action, a function, an extern function or an extern method
    (after substituting the object's type arguments).

    kind: 'action' | 'function' | 'extern_function' | 'method' | 'builtin';
    type_params: generic parameters still to infer at the call (e.g. `hash<O, T, D, M>`).
    """

    params: list[ParamInfo] = field(default_factory=list)
    return_type: Type = field(default_factory=VoidType)
    type_params: list[str] = field(default_factory=list)
    kind: str = "function"
    name: str = ""

    def __str__(self) -> str:
        ps = ", ".join(
            f"{p.direction + ' ' if p.direction else ''}{p.type} {p.name}" for p in self.params
        )
        return f"{self.return_type} {self.name}({ps})"


@dataclass(eq=False)
class TableType(NamedType):
    """Type of a table declaration; decl is the TableDecl."""

    name: str
    decl: Node | None = field(default=None, repr=False)

    __eq__ = NamedType.__eq__
    __hash__ = NamedType.__hash__
    __str__ = NamedType.__str__


@dataclass(eq=False)
class ActionEnumType(NamedType):
    """Type of `t.apply().action_run`: an enum whose members are the table's action names
    (the names as written in the table's `actions` list).  name is the table's name."""

    name: str
    actions: list[str] = field(default_factory=list)

    __eq__ = NamedType.__eq__
    __hash__ = NamedType.__hash__
    __str__ = NamedType.__str__


@dataclass(eq=False)
class TableApplyResultType(NamedType):
    """Type of `t.apply()`: members `hit: bool`, `miss: bool`, `action_run: ActionEnumType`."""

    name: str
    action_run: ActionEnumType = field(default_factory=lambda: ActionEnumType(""))

    __eq__ = NamedType.__eq__
    __hash__ = NamedType.__hash__
    __str__ = NamedType.__str__


@dataclass(frozen=True)
class ValueSetType(Type):
    """Type of a `value_set<T>(size) vs;` instance; element is T."""

    element: Type

    def __str__(self) -> str:
        return f"value_set<{self.element}>"


# ----------------------------------------------------------------------------- helpers


def field_width(t: Type) -> int:
    """Bit width of a serializable field type (bit/int/bool/serializable enum/new type);
    0 for varbit and non-serializable types."""
    if isinstance(t, BitsType):
        return t.width
    if isinstance(t, BoolType):
        return 1
    if isinstance(t, EnumType) and t.underlying is not None:
        return t.underlying.width
    if isinstance(t, NewType):
        return field_width(t.underlying)
    if isinstance(t, StructLikeType):
        return sum(field_width(f.type) for f in t.fields)
    return 0


def strip_newtype(t: Type) -> Type:
    """The representation type of `type X` declarations (repeatedly), else t."""
    while isinstance(t, NewType):
        t = t.underlying
    return t


# ----------------------------------------------------------------------------- const values


@dataclass(frozen=True)
class ErrorValue:
    """Compile-time value `error.<name>`."""

    name: str


@dataclass(frozen=True)
class EnumValue:
    """Compile-time enum member `<enum_name>.<member>`; value is the integer for serializable
    enums, else None."""

    enum_name: str
    member: str
    value: int | None = None


@dataclass(frozen=True)
class MatchKindValue:
    """Compile-time match_kind member (`exact`, `lpm`, `ternary`, ...)."""

    name: str


class StructValue(dict[str, Any]):
    """Compile-time struct/header value: field name -> value (insertion order = field order)."""


BOOL = BoolType()
INT = IntType()
VOID = VoidType()
STRING = StringType()
ERROR = ErrorType()
MATCH_KIND = MatchKindType()
DONTCARE = DontCareType()
