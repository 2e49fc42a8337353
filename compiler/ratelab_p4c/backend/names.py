"""Control-plane names and annotations as p4c derives them."""

from __future__ import annotations

from .. import ast as A

# Annotations p4c interprets itself and does not copy into the P4Info.
_CONSUMED = {
    "name",
    "id",
    "hidden",
    "defaultonly",
    "tableonly",
    "noWarn",
    "match",
    "brief",
    "description",
    "optional",
    "field_list",
    "priority",
    "p4runtime_translation",
    "controller_header",
    "deprecated",
    "pure",
    "noSideEffects",
    "metadata",
    "alias",
    "max_group_size",
}


def cp_name(decl: A.Declaration, prefix: str) -> str:
    """The control-plane name: @name (absolute when it starts with '.') or prefix+name."""
    n = decl.name_annotation
    if n is None:
        return prefix + decl.name
    if n.startswith("."):
        return n[1:]
    return prefix + n


def annotations_of(node: A.Annotated) -> list[str]:
    """The node's annotations as P4Info strings (`@name(body)`), minus consumed ones."""
    out = []
    for a in node.annotations:
        if a.name in _CONSUMED:
            continue
        out.append(f"@{a.name}({''.join(_spaced(a.tokens))})" if a.tokens else f"@{a.name}")
    return out


def _spaced(tokens: list[str]) -> list[str]:
    """Annotation body tokens with a space after each comma."""
    return [t + " " if t == "," else t for t in tokens]


def annotation_int(a: A.Annotation | None) -> int | None:
    """The integer argument of an annotation such as @id(5) / @priority(3)."""
    if a is None:
        return None
    v = a.int_arg()
    if v is None and a.expressions and isinstance(a.expressions[0], A.IntLiteral):
        v = a.expressions[0].value
    if v is None and len(a.tokens) == 1:
        try:
            v = int(a.tokens[0].replace("_", ""), 0)
        except ValueError:
            v = None
    return v


def id_annotation(node: A.Annotated) -> int | None:
    return annotation_int(node.annotation("id"))


def brief(node: A.Annotated) -> str | None:
    a = node.annotation("brief")
    return a.string_arg() if a is not None else None
