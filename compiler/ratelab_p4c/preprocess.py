"""C preprocessing of P4 sources with pcpp.

The output is plain text for the lexer in which every token sits on a line that maps
back to its original file and line: whenever the mapping is not "next line of the same
file", a gcc-style line marker `# <line> "<file>"` precedes the line.  Tokens are placed
at their original columns where possible (macro expansions may shift the rest of a line).

Include search: `#include "f"` looks next to the including file first, then in the -I
directories, then in the compiler's own p4include/; `#include <f>` looks in the -I
directories, then p4include/.
"""

from __future__ import annotations

import bisect
import io
import os
import re
from dataclasses import dataclass, field
from typing import Any

from pcpp import Action, OutputDirective, Preprocessor

from .errors import CompileError, SourceLocation

P4INCLUDE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "p4include")

_NEWLINE = re.compile("\n")
_WIDTH_SUFFIX = re.compile(r"[ws][0-9]")

# Predefined like p4c (its driver defines these for the bmv2 target).
DEFAULT_DEFINES: dict[str, str] = {"__p4c__": "1", "__TARGET_BMV2__": "1"}


@dataclass
class PreprocessResult:
    """text: preprocessed source with line markers; files: display names of every file
    read (main file first); sources: display name -> source lines (for diagnostics)."""

    text: str
    files: list[str] = field(default_factory=list)
    sources: dict[str, list[str]] = field(default_factory=dict)


def display_name(abs_path: str) -> str:
    """The name used in diagnostics: relative to the working directory when inside it."""
    cwd = os.getcwd()
    if abs_path.startswith(cwd + os.sep):
        return os.path.relpath(abs_path, cwd)
    return abs_path


class _P4Preprocessor(Preprocessor):  # type: ignore[misc]
    """pcpp with errors turned into CompileError and file contents recorded."""

    def __init__(self) -> None:
        super().__init__()
        self.line_directive = None
        self.data: dict[str, str] = {}  # display name -> file text
        self.names: dict[str, str] = {}  # absolute path -> display name
        self.order: list[str] = []

    def register(self, abs_path: str, name: str, text: str) -> None:
        self.names[abs_path] = name
        if name not in self.data:
            self.order.append(name)
        self.data[name] = text

    def on_file_open(self, is_system_include: bool, includepath: str) -> Any:
        # OSError (not found, a directory) makes pcpp try the next search directory.
        with open(includepath, encoding="utf-8") as f:
            try:
                text = f.read()
            except UnicodeDecodeError as e:
                d = self.lastdirective
                raise CompileError(
                    f"{includepath} is not UTF-8 text ({e.reason})", self._loc(d.source, d.lineno)
                ) from None
        self.register(includepath, display_name(includepath), text)
        return io.StringIO(text)

    def _loc(self, source: str | None, line: int, tok: Any = None) -> SourceLocation:
        col = 1
        source = self.names.get(source or "", source)
        if tok is not None and source in self.data:
            text = "\n".join(x.rstrip() for x in self.data[source].splitlines())
            start = text.rfind("\n", 0, tok.lexpos) + 1
            col = tok.lexpos - start + 1
        return SourceLocation(source or "<unknown>", line, col)

    def on_error(self, file: str, line: int, msg: str) -> None:
        raise CompileError(f"preprocessor: {msg}", self._loc(file, line))

    def on_include_not_found(
        self, is_malformed: bool, is_system_include: bool, curdir: str, includepath: str
    ) -> None:
        what = "malformed #include" if is_malformed else f"cannot find include file '{includepath}'"
        raise CompileError(what, self.directive_loc())

    def directive_loc(self) -> SourceLocation:
        """The '#' that starts the line of the directive being processed."""
        d = self.lastdirective
        loc = self._loc(d.source, d.lineno)
        lines = self.data.get(loc.file, "").splitlines()
        if 1 <= loc.line <= len(lines):
            text = lines[loc.line - 1]
            loc = SourceLocation(loc.file, loc.line, len(text) - len(text.lstrip()) + 1)
        return loc

    def on_directive_handle(
        self, directive: Any, toks: Any, ifpassthru: bool, precedingtoks: Any
    ) -> Any:
        if directive.value == "pragma" and not toks:
            # An empty #pragma does nothing in C; pcpp would fail on it.
            self.lastdirective = directive
            raise OutputDirective(Action.IgnoreAndRemove)
        return super().on_directive_handle(directive, toks, ifpassthru, precedingtoks)

    def on_directive_unknown(
        self, directive: Any, toks: Any, ifpassthru: bool, precedingtoks: Any
    ) -> Any:
        if directive.value == "error":
            msg = "".join(t.value for t in toks).strip()
            raise CompileError(f"#error {msg}", self._loc(directive.source, directive.lineno))
        if directive.value == "warning":
            return True
        # #pragma and friends pass through to the output; the lexer ignores them.
        return None

    def on_unknown_macro_in_expr(self, ident: Any) -> Any:
        return 0  # C semantics: unknown identifiers in #if are 0


def preprocess(
    path: str,
    include_dirs: list[str] | None = None,
    defines: dict[str, str | None] | None = None,
    text: str | None = None,
) -> PreprocessResult:
    """Preprocess the file at `path` (or `text`, named `path`).  defines: NAME -> value
    (None or "" means `-D NAME`, i.e. 1)."""
    pp = _P4Preprocessor()
    for d in include_dirs or []:
        pp.add_path(d)
    pp.add_path(P4INCLUDE_DIR)
    # Tokens then carry absolute paths as `source`; _layout maps them to display names.
    pp.rewrite_paths = []
    all_defines: dict[str, str | None] = dict(DEFAULT_DEFINES)
    all_defines.update(defines or {})
    for name, value in all_defines.items():
        pp.define(f"{name} {value if value not in (None, '') else '1'}")
    if text is None:
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise CompileError(f"cannot read {path}: {e.strerror}") from None
        except UnicodeDecodeError as e:
            raise CompileError(f"cannot read {path}: not UTF-8 text ({e.reason})") from None
    abs_path = os.path.abspath(path)
    pp.register(abs_path, path, text)
    pp.parse(text, path)
    out = _layout(pp)
    sources = {name: data.splitlines() for name, data in pp.data.items()}
    return PreprocessResult(text=out, files=list(pp.order), sources=sources)


def _layout(pp: _P4Preprocessor) -> str:
    """Write tokens line by line at their original columns, with line markers."""
    ws_types = set(pp.t_WS) | set(pp.t_COMMENT)
    line_starts: dict[str, list[int]] = {}
    out: list[str] = []
    cur_file: str | None = None
    cur_line = 0
    line_len = 0
    starts: list[int] = []
    prev_end = -1
    prev_body_end: tuple[Any, int] | None = None
    while True:
        try:
            tok = pp.token()
        except IndexError:
            # pcpp reads a directive's arguments without checking there are any
            # (`#ifndef` alone, `#if !defined`): report the directive.
            if getattr(pp, "lastdirective", None) is None:
                raise
            name = pp.lastdirective.value
            raise CompileError(
                f"preprocessor: #{name} without the arguments it needs", pp.directive_loc()
            ) from None
        if tok is None:
            break
        if tok.type in ws_types:
            continue
        src = pp.names.get(tok.source, tok.source) if tok.source else cur_file
        ln = tok.lineno
        if src != cur_file or ln != cur_line:
            if src == cur_file and cur_line < ln <= cur_line + 8:
                out.append("\n" * (ln - cur_line))
            elif src is not None:
                if out:
                    out.append("\n")
                out.append(f'# {ln} "{src}"\n')
            cur_file, cur_line, line_len = src, ln, 0
            starts = line_starts.get(src, []) if src else []
            if src and src not in line_starts and src in pp.data:
                # pcpp strips trailing whitespace from every line before lexing, so
                # its token positions are relative to that text.
                data = "\n".join(x.rstrip() for x in pp.data[src].splitlines())
                starts = [0] + [m.end() for m in _NEWLINE.finditer(data)]
                line_starts[src] = starts
        col = _column(starts, ln, tok.lexpos)
        value = str(tok.value)
        # A width literal in a macro body (`32w1024`, `8s5`) is lexed by pcpp as a number
        # and an identifier; when they touched in the #define they must stay touching.
        glued_body = (
            col is None
            and prev_body_end is not None
            and prev_body_end == (tok.source, tok.lexpos)
            and _WIDTH_SUFFIX.match(value) is not None
        )
        if col is not None and col >= line_len:
            out.append(" " * (col - line_len))
            line_len = col
        elif line_len > 0 and not glued_body and not (col is not None and tok.lexpos == prev_end):
            # Shifted by a macro expansion: keep tokens that touched in the source
            # touching (`8w5`, `&&&`), separate the rest.
            out.append(" ")
            line_len += 1
        out.append(value)
        line_len += len(value)
        prev_end = tok.lexpos + len(value) if col is not None else -1
        prev_body_end = (
            (tok.source, tok.lexpos + len(value)) if col is None and value.isdigit() else None
        )
    out.append("\n")
    return "".join(out)


def _column(starts: list[int], line: int, lexpos: int) -> int | None:
    """0-based column of lexpos if it lies on `line` (1-based), else None (the token came
    from a macro body elsewhere)."""
    if not starts or line < 1 or line > len(starts):
        return None
    begin = starts[line - 1]
    end = starts[line] if line < len(starts) else 1 << 60
    if begin <= lexpos < end:
        return lexpos - begin
    # Tokens after a line continuation: accept if the position is later in the file.
    idx = bisect.bisect_right(starts, lexpos) - 1
    return None if idx != line - 1 else lexpos - begin
