"""Where P4 values live in BMv2: header instances, header stacks, and the fields of the
"scalars" metadata header that holds every scalar variable.

A P4 l-value resolves to a Loc tree: a FieldLoc for one field of one header instance, a
HeaderLoc / StackLoc / UnionLoc for the header-like objects, a StructLoc for structs
(a map from field name to Loc).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .. import types as T
from ..errors import CompileError, SourceLocation

SCALARS = "scalars"
SCALARS_TYPE = "scalars_0"
STANDARD_METADATA = "standard_metadata"
ENUM_WIDTH = 32  # non-serializable enums and errors are 32-bit values, like p4c


def value_width(t: T.Type) -> int:
    """Width in bits of a scalar value of type t (bit/int/bool/enum/error/new type)."""
    t = T.strip_newtype(t)
    if isinstance(t, T.BitsType):
        return t.width
    if isinstance(t, T.BoolType):
        return 1
    if isinstance(t, T.EnumType):
        return t.underlying.width if t.underlying is not None else ENUM_WIDTH
    if isinstance(t, T.ErrorType):
        return ENUM_WIDTH
    raise CompileError(f"type {t} has no fixed width")


def is_signed(t: T.Type) -> bool:
    t = T.strip_newtype(t)
    if isinstance(t, T.EnumType) and t.underlying is not None:
        return t.underlying.signed
    return isinstance(t, T.BitsType) and t.signed


def is_scalar_type(t: T.Type) -> bool:
    t = T.strip_newtype(t)
    return isinstance(t, T.BitsType | T.BoolType | T.EnumType | T.ErrorType)


class Loc:
    """Base of storage locations."""


@dataclass(eq=False)
class FieldLoc(Loc):
    header: str
    field: str
    type: T.Type
    # Set for fields of stack elements addressed with a run-time index.
    dynamic: Any = None

    @property
    def width(self) -> int:
        return value_width(self.type)


@dataclass(eq=False)
class HeaderLoc(Loc):
    name: str
    type: T.HeaderType
    # FieldLoc per field; a StructLoc of FieldLocs for a struct-typed header field.
    fields: dict[str, Loc] = field(default_factory=dict)
    dynamic: Any = None  # JSON expression producing the header (stack element at run time)


@dataclass(eq=False)
class StackLoc(Loc):
    name: str
    type: T.HeaderStackType
    elements: list[Loc] = field(default_factory=list)
    is_union_stack: bool = False


@dataclass(eq=False)
class UnionLoc(Loc):
    name: str
    type: T.HeaderUnionType
    members: dict[str, HeaderLoc] = field(default_factory=dict)
    dynamic: Any = None  # JSON expression producing the union (union stack element at run time)


@dataclass(eq=False)
class StructLoc(Loc):
    type: T.StructLikeType | T.TupleType
    fields: dict[str, Loc] = field(default_factory=dict)


def header_leaves(ht: T.StructLikeType) -> list[tuple[tuple[str, ...], T.Type]]:
    """The scalar fields of a header in layout order, with their path: struct-typed
    header fields contribute their own fields (recursively)."""
    out: list[tuple[tuple[str, ...], T.Type]] = []

    def rec(prefix: tuple[str, ...], t: T.StructLikeType) -> None:
        for f in t.fields:
            ft = T.strip_newtype(f.type)
            if isinstance(ft, T.StructType):
                rec((*prefix, f.name), ft)
            else:
                out.append(((*prefix, f.name), f.type))

    rec((), ht)
    return out


def header_field_names(ht: T.StructLikeType) -> list[str]:
    """BMv2 field names of a header's leaves.  A header with struct-typed fields is
    flattened like p4c's FlattenHeaders: every field becomes `_<path>_<index>`."""
    leaves = header_leaves(ht)
    if not any(isinstance(T.strip_newtype(f.type), T.StructType) for f in ht.fields):
        return [path[0] for path, _ in leaves]
    return [f"_{'_'.join(path)}{i}" for i, (path, _) in enumerate(leaves)]


def header_field_locs(name: str, ht: T.HeaderType, dynamic: Any = None) -> dict[str, Loc]:
    """Field locations of header instance `name` (dynamic: the JSON expression of a stack
    element addressed at run time; its fields are then accessed by index)."""
    names = iter(enumerate(header_field_names(ht)))

    def build(t: T.StructLikeType) -> dict[str, Loc]:
        out: dict[str, Loc] = {}
        for f in t.fields:
            ft = T.strip_newtype(f.type)
            if isinstance(ft, T.StructType):
                out[f.name] = StructLoc(ft, build(ft))
            else:
                i, n = next(names)
                out[f.name] = FieldLoc(
                    name, n, f.type, (dynamic, i) if dynamic is not None else None
                )
        return out

    return build(ht)


def leaf_fields(loc: Loc) -> list[FieldLoc]:
    """The FieldLocs under a header or struct location, in layout order."""
    if isinstance(loc, FieldLoc):
        return [loc]
    out: list[FieldLoc] = []
    if isinstance(loc, HeaderLoc | StructLoc):
        for f in loc.fields.values():
            out.extend(leaf_fields(f))
    return out


@dataclass
class HeaderTypeJson:
    name: str
    fields: list[list[Any]]
    max_length: int | None = None


class Storage:
    """Allocates header types, header instances, stacks, unions and scalar fields, and
    builds their JSON sections."""

    def __init__(self) -> None:
        self.header_types: dict[str, HeaderTypeJson] = {}
        self._type_by_p4: dict[str, str] = {}
        self.scalar_fields: list[list[Any]] = []
        self._scalar_names: set[str] = set()
        self.headers: list[dict[str, Any]] = []
        self._header_names: set[str] = set()
        self.stacks: list[dict[str, Any]] = []
        self.union_types: dict[str, dict[str, Any]] = {}
        self.unions: list[dict[str, Any]] = []
        self.union_stacks: list[dict[str, Any]] = []
        self._names: set[str] = set()
        # Reserve the two fixed instances.
        self.header_types[SCALARS_TYPE] = HeaderTypeJson(SCALARS_TYPE, self.scalar_fields)
        self._add_instance(SCALARS, SCALARS_TYPE, True)

    # ------------------------------------------------------------------ names
    def unique(self, base: str, taken: set[str]) -> str:
        name = base
        i = 0
        while name in taken:
            name = f"{base}_{i}"
            i += 1
        taken.add(name)
        return name

    # ------------------------------------------------------------------ header types
    def header_type_name(self, ht: T.HeaderType, metadata: bool = False) -> str:
        if ht.name in self._type_by_p4:
            return self._type_by_p4[ht.name]
        name = self.unique(ht.name, set(self.header_types))
        fields: list[list[Any]] = []
        max_length = None
        total = 0
        for (_, ftype), fname in zip(header_leaves(ht), header_field_names(ht), strict=True):
            ft = T.strip_newtype(ftype)
            if isinstance(ft, T.VarbitType):
                fields.append([fname, "*"])
                max_length = ft.max_width
            else:
                w = value_width(ft)
                total += w
                fields.append([fname, w, is_signed(ft)])
        if metadata and total % 8:
            fields.append(["_padding", 8 - total % 8, False])
        hj = HeaderTypeJson(name, fields)
        if max_length is not None:
            hj.max_length = (total + max_length + 7) // 8
        self.header_types[name] = hj
        self._type_by_p4[ht.name] = name
        return name

    # ------------------------------------------------------------------ instances
    def _add_instance(self, name: str, type_name: str, metadata: bool) -> int:
        ident = len(self.headers)
        self.headers.append(
            {"name": name, "id": ident, "header_type": type_name, "metadata": metadata}
        )
        self._header_names.add(name)
        return ident

    def standard_metadata(self, st: T.StructLikeType) -> StructLoc:
        """The v1model standard_metadata struct as the fixed metadata instance."""
        ht = T.HeaderType(STANDARD_METADATA, list(st.fields))
        self._type_by_p4[STANDARD_METADATA] = STANDARD_METADATA
        fields: list[list[Any]] = []
        total = 0
        for f in ht.fields:
            w = value_width(f.type)
            total += w
            fields.append([f.name, w, False])
        if total % 8:
            fields.append(["_padding", 8 - total % 8, False])
        self.header_types[STANDARD_METADATA] = HeaderTypeJson(STANDARD_METADATA, fields)
        self._add_instance(STANDARD_METADATA, STANDARD_METADATA, True)
        loc = StructLoc(st)
        for f in st.fields:
            loc.fields[f.name] = FieldLoc(STANDARD_METADATA, f.name, f.type)
        return loc

    def new_header(self, base: str, ht: T.HeaderType, metadata: bool = False) -> HeaderLoc:
        name = self.unique(base, self._header_names)
        type_name = self.header_type_name(ht, metadata)
        self._add_instance(name, type_name, metadata)
        self._header_names.add(name)
        return self._header_loc(name, ht)

    def _header_loc(self, name: str, ht: T.HeaderType) -> HeaderLoc:
        return HeaderLoc(name, ht, header_field_locs(name, ht))

    def new_scalar(self, base: str, t: T.Type) -> FieldLoc:
        name = self.unique(base, self._scalar_names)
        self.scalar_fields.append([name, value_width(t), is_signed(t)])
        return FieldLoc(SCALARS, name, t)

    def new_stack(self, base: str, st: T.HeaderStackType, loc: SourceLocation | None) -> StackLoc:
        name = self.unique(base, self._names | self._header_names)
        self._names.add(name)
        elem = st.element
        if isinstance(elem, T.HeaderUnionType):
            # Plain unions named name[i] (constant indices address them), grouped in a
            # header_union_stacks entry as p4c does (next, last, push/pop, run-time indices).
            unions: list[Loc] = [self.new_union(f"{name}[{i}]", elem) for i in range(st.size)]
            ids = [self.unions[-st.size + i]["id"] for i in range(st.size)]
            self.union_stacks.append(
                {
                    "name": name,
                    "id": len(self.union_stacks),
                    "union_type": elem.name,
                    "size": st.size,
                    "header_union_ids": ids,
                }
            )
            return StackLoc(name, st, unions, is_union_stack=True)
        assert isinstance(elem, T.HeaderType)
        type_name = self.header_type_name(elem)
        elements: list[Loc] = []
        ids = []
        for i in range(st.size):
            h = self.new_header(f"{name}[{i}]", elem)
            elements.append(h)
            ids.append(self.headers[-1]["id"])
        self.stacks.append(
            {"name": name, "id": len(self.stacks), "header_type": type_name, "header_ids": ids}
        )
        return StackLoc(name, st, elements)

    def new_union(self, base: str, ut: T.HeaderUnionType) -> UnionLoc:
        name = self.unique(base, self._names | self._header_names)
        self._names.add(name)
        if ut.name not in self.union_types:
            self.union_types[ut.name] = {
                "name": ut.name,
                "id": len(self.union_types),
                "headers": [
                    [f.name, self.header_type_name(f.type)]  # type: ignore[arg-type]
                    for f in ut.fields
                ],
            }
        loc = UnionLoc(name, ut)
        ids = []
        for f in ut.fields:
            assert isinstance(f.type, T.HeaderType)
            h = self.new_header(f"{name}.{f.name}", f.type)
            loc.members[f.name] = h
            ids.append(self.headers[-1]["id"])
        self.unions.append(
            {"name": name, "id": len(self.unions), "union_type": ut.name, "header_ids": ids}
        )
        return loc

    def allocate(
        self, base: str, t: T.Type, loc: SourceLocation | None, scalar_prefix: str = ""
    ) -> Loc:
        """Storage for a variable of type t: scalars go to "scalars" (named
        scalar_prefix + base), headers get instances named base."""
        t0 = T.strip_newtype(t)
        if is_scalar_type(t0):
            return self.new_scalar(scalar_prefix + base, t)
        if isinstance(t0, T.HeaderType):
            return self.new_header(base, t0)
        if isinstance(t0, T.VarbitType):
            # BMv2 has variable-length fields only in headers: a varbit variable is the
            # one field of a header instance of its own (never emitted).
            holder_t = T.HeaderType(f"varbit_{t0.max_width}_holder_t", [T.Field("value", t)])
            return self.new_header(f"{scalar_prefix}{base}", holder_t).fields["value"]
        if isinstance(t0, T.HeaderStackType):
            return self.new_stack(base, t0, loc)
        if isinstance(t0, T.HeaderUnionType):
            return self.new_union(base, t0)
        if isinstance(t0, T.StructType):
            s = StructLoc(t0)
            for f in t0.fields:
                s.fields[f.name] = self.allocate(f.name, f.type, loc, f"{scalar_prefix}{base}.")
            return s
        if isinstance(t0, T.TupleType):
            s = StructLoc(t0)
            for i, et in enumerate(t0.elements):
                s.fields[f"f{i}"] = self.allocate(f"f{i}", et, loc, f"{scalar_prefix}{base}.")
            return s
        raise CompileError(f"cannot allocate storage for a value of type {t}", loc)

    # ------------------------------------------------------------------ JSON
    def header_types_json(self) -> list[dict[str, Any]]:
        out = []
        scal_total = sum(f[1] for f in self.scalar_fields)
        for i, hj in enumerate(self.header_types.values()):
            fields = hj.fields
            if hj.name == SCALARS_TYPE and scal_total % 8:
                fields = [*fields, ["_padding_0", 8 - scal_total % 8, False]]
            item: dict[str, Any] = {"name": hj.name, "id": i, "fields": fields}
            if hj.max_length is not None:
                item["max_length"] = hj.max_length
            out.append(item)
        return out
