"""BMv2 back end: lowers the typed AST of a v1model program to the BMv2 JSON that
p4c-bm2-ss writes, plus the control-plane model the P4Info is written from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import __version__
from .. import ast as A
from .. import types as T
from ..errors import CompileError
from .control import ControlLowering, Pipeline
from .externs import declare_instance, finish_externs
from .lower import Lowering, source_info
from .model import ControllerHeaderInfo, ControlPlaneModel, EnumTypeInfo, NewTypeInfo
from .names import annotations_of, id_annotation
from .parser import PacketRef, ParserLowering, lower_deparser
from .scope import Scope
from .sinks import Sink
from .storage import value_width

JSON_VERSION = [2, 23]
_BLOCKS = ("p", "vr", "ig", "eg", "ck", "dep")


@dataclass
class BackendResult:
    """The BMv2 JSON document and the control-plane model for the P4Info."""

    json: dict[str, Any]
    cp: ControlPlaneModel


class _ChecksumSink(Sink):
    """Checksum controls may only call verify_checksum / update_checksum."""

    def prim(self, name: str, params: list[Any], source: Any = None) -> None:
        raise CompileError(
            "only verify_checksum / update_checksum calls are supported in checksum controls"
        )

    def assign(self, dst: Any, src: Any, source: Any = None) -> None:
        self.prim("assign", [])


def _block(arg: A.Argument | None, what: str, main: A.InstanceDecl) -> tuple[A.Node, str, list]:
    """The parser/control declaration passed to V1Switch, its instance name and ctor args."""
    if arg is None:
        raise CompileError(f"V1Switch is missing its {what} argument", main.loc)
    v = arg.value
    if isinstance(v, A.ConstructorCall) and v.decl is not None:
        return v.decl, v.decl.name, list(v.args)  # type: ignore[attr-defined]
    if isinstance(v, A.PathExpression) and isinstance(v.decl, A.InstanceDecl):
        inst = v.decl
        if inst.decl is not None:
            return inst.decl, inst.name, list(inst.params_to_args)
    raise CompileError(f"unsupported {what} argument to V1Switch", v.loc)


def compile_program(program: A.Program, program_name: str = "") -> BackendResult:
    """Lower a checked program; every CompileError carries a source location."""
    lw = Lowering(program)
    try:
        return _compile(program, program_name, lw)
    except CompileError as e:
        if e.location is None:
            e.location = lw.cur_loc
        raise
    except Exception as e:
        if lw.cur_loc is not None:
            e.add_note(f"while compiling {lw.cur_loc}")
        raise


def _compile(program: A.Program, program_name: str, lw: Lowering) -> BackendResult:
    main = program.main
    if main is None:
        raise CompileError("the program has no `main` package instance")
    pkg = main.decl
    if not isinstance(pkg, A.PackageTypeDecl) or pkg.name != "V1Switch":
        raise CompileError("this target needs `main` to be a V1Switch package", main.loc)
    args = dict(zip(_BLOCKS, main.params_to_args, strict=False))
    blocks = {k: _block(args.get(k), k, main) for k in _BLOCKS}
    parser_decl = blocks["p"][0]
    if not isinstance(parser_decl, A.ParserDecl):
        raise CompileError("the first V1Switch argument must be a parser", main.loc)

    # Storage shared by all blocks: headers, user metadata, standard metadata.
    ptypes = [p.type for p in parser_decl.params]
    if len(ptypes) != 4 or any(t is None for t in ptypes):
        raise CompileError("the parser must have the v1model Parser signature", parser_decl.loc)
    sm_type = ptypes[3]
    h_type, m_type = ptypes[1], ptypes[2]
    if isinstance(main.type, T.SpecializedType) and len(main.type.type_args) == 2:
        h_type, m_type = main.type.type_args
    assert isinstance(sm_type, T.StructLikeType)
    sm_loc = lw.storage.standard_metadata(sm_type)
    hdr_loc = lw.storage.allocate("hdr", h_type, parser_decl.loc)  # type: ignore[arg-type]
    meta_loc = lw.storage.allocate("userMetadata", m_type, parser_decl.loc)  # type: ignore[arg-type]
    lw.meta_loc, lw.meta_type = meta_loc, m_type
    shared = {"hdr": hdr_loc, "meta": meta_loc, "sm": sm_loc, "pkt": PacketRef()}
    layouts = {
        "p": ("pkt", "hdr", "meta", "sm"),
        "vr": ("hdr", "meta"),
        "ig": ("hdr", "meta", "sm"),
        "eg": ("hdr", "meta", "sm"),
        "ck": ("hdr", "meta"),
        "dep": ("pkt", "hdr"),
    }

    # Top-level extern instances.
    for d in program.declarations:
        if isinstance(d, A.InstanceDecl) and isinstance(d.type, T.ExternType):
            lw.global_scope.bind(d, declare_instance(lw, d, "", None))

    def block_scope(key: str) -> tuple[A.Node, Scope, str]:
        decl, inst_name, _ = blocks[key]
        params = getattr(decl, "params", [])
        if len(params) != len(layouts[key]):
            raise CompileError(
                f"`{getattr(decl, 'name', '?')}` does not have the v1model signature", decl.loc
            )
        scope = Scope(lw.global_scope, f"{inst_name}.")
        for p, role in zip(params, layouts[key], strict=True):
            scope.bind(p, shared[role])
        return decl, scope, inst_name

    decl, scope, name = block_scope("p")
    assert isinstance(decl, A.ParserDecl)
    parser_json = ParserLowering(lw, decl, scope, f"{name}.").lower()

    for key, mode in (("vr", "verify"), ("ck", "update")):
        decl, scope, name = block_scope(key)
        if not isinstance(decl, A.ControlDecl):
            raise CompileError("checksum blocks must be controls", main.loc)
        lw.checksum_mode = mode
        for d in decl.locals:
            raise CompileError("declarations in checksum controls are not supported", d.loc)
        lw.stmts(decl.body.statements, scope, _ChecksumSink())
        lw.checksum_mode = None

    pipelines = []
    for key, pname in (("ig", "ingress"), ("eg", "egress")):
        decl, scope, name = block_scope(key)
        if not isinstance(decl, A.ControlDecl):
            raise CompileError(f"the {pname} block must be a control", main.loc)
        pipe = Pipeline(pname, loc=decl.loc)
        ControlLowering(lw, pipe).lower_top(decl, scope, f"{name}.")
        pipelines.append(pipe)

    decl, scope, name = block_scope("dep")
    assert isinstance(decl, A.ControlDecl)
    deparser_json = lower_deparser(lw, decl, scope)
    finish_externs(lw)
    _collect_types(program, lw.cp)

    aliases = []
    for f in sm_type.fields:
        for a in f.annotations:
            if a.name == "alias" and a.string_arg():
                aliases.append([a.string_arg(), ["standard_metadata", f.name]])

    doc: dict[str, Any] = {
        "header_types": lw.storage.header_types_json(),
        "headers": lw.storage.headers,
        "header_stacks": lw.storage.stacks,
        "header_union_types": list(lw.storage.union_types.values()),
        "header_unions": lw.storage.unions,
        "header_union_stacks": lw.storage.union_stacks,
        "field_lists": lw.field_lists,
        "errors": [[n, v] for n, v in lw.errors.items()],
        "enums": [
            {"name": n, "entries": [[m, v] for m, v in entries.items()]}
            for n, entries in lw.enums.items()
        ],
        "parsers": [parser_json],
        "parse_vsets": lw.parse_vsets,
        "deparsers": [deparser_json],
        "meter_arrays": lw.meter_arrays,
        "counter_arrays": lw.counter_arrays,
        "register_arrays": lw.register_arrays,
        "calculations": lw.calculations,
        "learn_lists": lw.learn_lists,
        "actions": lw.actions_json,
        "pipelines": [p.json(i) for i, p in enumerate(pipelines)],
        "checksums": lw.checksums,
        "force_arith": [],
        "extern_instances": lw.extern_instances,
        "field_aliases": aliases,
        "program": program_name,
        "__meta__": {"version": JSON_VERSION, "compiler": f"ratelab-p4c {__version__}"},
    }
    _drop_null_source_info(doc)
    return BackendResult(doc, lw.cp)


def _drop_null_source_info(node: Any) -> None:
    """Leave out "source_info" where no location is known (p4c omits it too)."""
    if isinstance(node, dict):
        if node.get("source_info", 0) is None:
            del node["source_info"]
        for v in node.values():
            if isinstance(v, dict | list):
                _drop_null_source_info(v)
    elif isinstance(node, list):
        for v in node:
            if isinstance(v, dict | list):
                _drop_null_source_info(v)


def _collect_types(program: A.Program, cp: ControlPlaneModel) -> None:
    """Controller headers, serializable enums and translated `type`s for the P4Info."""
    for d in program.declarations:
        if isinstance(d, A.HeaderDecl) and d.has_annotation("controller_header"):
            ann = d.annotation("controller_header")
            name = (ann.string_arg() if ann else None) or d.name
            ht = d.resolved
            if not isinstance(ht, T.HeaderType):
                continue
            fields = []
            for fd, f in zip(d.fields, ht.fields, strict=False):
                if isinstance(T.strip_newtype(f.type), T.StructType):
                    raise CompileError(
                        "struct-typed fields are not supported in controller headers", fd.loc
                    )
                fields.append((f.name, value_width(f.type), annotations_of(fd)))
            cp.controller_headers.append(
                ControllerHeaderInfo(
                    name, fields, id_annotation(d), annotations_of(d), type_name=d.name
                )
            )
        elif isinstance(d, A.EnumDecl) and isinstance(d.resolved, T.EnumType):
            et = d.resolved
            if et.underlying is not None and d.loc is not None and "p4include" not in d.loc.file:
                cp.enums.append(
                    EnumTypeInfo(
                        et.name, et.underlying.width, [(m, et.values.get(m, 0)) for m in et.members]
                    )
                )
        elif isinstance(d, A.NewTypeDecl) and isinstance(d.resolved, T.NewType):
            nt = d.resolved
            try:
                w = value_width(nt)
            except CompileError:
                continue
            info = NewTypeInfo(nt.name, w)
            ann = d.annotation("p4runtime_translation")
            if ann is not None and ann.expressions:
                info.translation_uri = ann.string_arg() or ""
                if len(ann.expressions) > 1:
                    second = ann.expressions[1]
                    v = second.const_value
                    if isinstance(second, A.IntLiteral):
                        v = second.value
                    if isinstance(v, int) and not isinstance(v, bool):
                        info.translation_width = v
                    elif isinstance(second, A.PathExpression) and second.name == "string":
                        info.translation_is_string = True
                elif ann.tokens and ann.tokens[-1] == "string":
                    info.translation_is_string = True
            cp.new_types.append(info)


__all__ = ["BackendResult", "compile_program", "source_info"]
