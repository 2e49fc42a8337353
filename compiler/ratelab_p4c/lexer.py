"""Lexer for preprocessed P4_16 text.

One compiled regular expression scans the whole text (no per-character Python loop).
Line markers `# N "file"` / `#line N "file"` written by the preprocessor set the original
file and line of the lines that follow; other `#` lines (`#pragma`) are ignored.

Token kinds: 'ID' (identifier), 'INT' (value = (value, width|None, signed)), 'STRING'
(value = unescaped text), 'ANNOT' (value = annotation name, text '@name'), '_' (don't
care), 'EOF', each keyword as itself, each operator/punctuation as itself.  `>>` is never
one token: the parser joins two adjacent '>' (type argument lists end in `>>`).
"""

from __future__ import annotations

import re
from typing import Any

from .errors import CompileError, SourceLocation
from .types import MAX_WIDTH

KEYWORDS = frozenset(
    [
        "abstract",
        "action",
        "actions",
        "apply",
        "bool",
        "bit",
        "break",
        "const",
        "continue",
        "control",
        "default",
        "else",
        "entries",
        "enum",
        "error",
        "exit",
        "extern",
        "false",
        "for",
        "header",
        "header_union",
        "if",
        "in",
        "inout",
        "int",
        "key",
        "list",
        "match_kind",
        "out",
        "package",
        "parser",
        "priority",
        "return",
        "select",
        "state",
        "string",
        "struct",
        "switch",
        "table",
        "this",
        "transition",
        "true",
        "tuple",
        "type",
        "typedef",
        "value_set",
        "varbit",
        "void",
    ]
)

_TOKEN_RE = re.compile(
    r"""
    (?P<ws>[ \t\r\f\v]+)
  | (?P<nl>\n)
  | (?P<lc>//[^\n]*)
  | (?P<bc>/\*.*?\*/)
  | (?P<dir>\#[^\n]*)
  | (?P<int>\d+[ws]0[xX][0-9a-fA-F_]+|\d+[ws]0[bB][01_]+|\d+[ws]0[oO][0-7_]+
           |\d+[ws]0[dD][0-9_]+|\d+[ws][0-9_]+
           |0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|0[dD][0-9_]+|\d[0-9_]*)
  | (?P<id>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<str>"(?:[^"\\\n]|\\.)*")
  | (?P<annot>@[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>&&&|\|\+\||\|-\||\+\+|\.\.|<<|&&|\|\||==|!=|<=|>=|[-+*/%&|^~!<>=?:;,.(){}\[\]])
  | (?P<bad>.)
    """,
    re.VERBOSE | re.DOTALL,
)

_LINE_MARKER_RE = re.compile(r'#\s*(?:line\s+)?(\d+)(?:\s+"((?:[^"\\]|\\.)*)")?')
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'", "0": "\0"}


class Token:
    """A token: kind, source text, value (for INT/STRING/ANNOT), location, and whether
    whitespace/comments preceded it (`spaced`, used to join `>` `>` into a shift)."""

    __slots__ = ("kind", "loc", "spaced", "text", "value")

    def __init__(self, kind: str, text: str, value: Any, loc: SourceLocation, spaced: bool):
        self.kind = kind
        self.text = text
        self.value = value
        self.loc = loc
        self.spaced = spaced

    def __repr__(self) -> str:
        return f"Token({self.kind!r}, {self.text!r}, {self.loc})"


def parse_int_literal(text: str, loc: SourceLocation) -> tuple[int, int | None, bool]:
    """Value, width (None if unsized) and signedness of an integer literal."""
    width: int | None = None
    signed = False
    body = text
    for i, ch in enumerate(text):
        if ch in "ws":
            width = int(text[:i])
            signed = ch == "s"
            body = text[i + 1 :]
            break
        if not ch.isdigit():
            break
    body = body.replace("_", "")
    base = 10
    if len(body) > 1 and body[0] == "0" and body[1] in "xXbBoOdD":
        base = {"x": 16, "b": 2, "o": 8, "d": 10}[body[1].lower()]
        body = body[2:]
    if not body:
        raise CompileError(f"invalid integer literal '{text}'", loc)
    try:
        value = int(body, base)
    except ValueError:
        raise CompileError(f"invalid integer literal '{text}'", loc) from None
    if width is not None and signed and width < 1:
        raise CompileError(f"invalid width in integer literal '{text}'", loc)
    if width is not None and width > MAX_WIDTH:
        raise CompileError(f"width {width} of '{text}' is over the maximum, {MAX_WIDTH}", loc)
    return value, width, signed


def _unescape(body: str, loc: SourceLocation) -> str:
    if "\\" not in body:
        return body
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            out.append(_ESCAPES.get(nxt, nxt))
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def tokenize(text: str, file: str = "<input>") -> list[Token]:
    """Split preprocessed text into tokens (ending with an 'EOF' token)."""
    tokens: list[Token] = []
    append = tokens.append
    line = 1
    line_start = 0
    spaced = True
    keywords = KEYWORDS
    for m in _TOKEN_RE.finditer(text):
        kind = m.lastgroup
        if kind == "ws":
            spaced = True
            continue
        if kind == "nl":
            line += 1
            line_start = m.end()
            spaced = True
            continue
        start = m.start()
        if kind == "lc":
            spaced = True
            continue
        if kind == "bc":
            s = m.group()
            n = s.count("\n")
            if n:
                line += n
                line_start = start + s.rfind("\n") + 1
            spaced = True
            continue
        if kind == "dir":
            if text[line_start:start].strip():
                raise CompileError(
                    "unexpected '#'", SourceLocation(file, line, start - line_start + 1)
                )
            mk = _LINE_MARKER_RE.match(m.group())
            if mk:
                # The marker names the line that follows it.
                line = int(mk.group(1)) - 1
                if mk.group(2) is not None:
                    file = _unescape(mk.group(2), SourceLocation(file, line, 1))
            spaced = True
            continue
        s = m.group()
        loc = SourceLocation(file, line, start - line_start + 1)
        if kind == "id":
            if s in keywords:
                append(Token(s, s, None, loc, spaced))
            elif s == "_":
                append(Token("_", s, None, loc, spaced))
            else:
                append(Token("ID", s, s, loc, spaced))
        elif kind == "op":
            append(Token(s, s, None, loc, spaced))
        elif kind == "int":
            append(Token("INT", s, parse_int_literal(s, loc), loc, spaced))
        elif kind == "str":
            append(Token("STRING", s, _unescape(s[1:-1], loc), loc, spaced))
        elif kind == "annot":
            append(Token("ANNOT", s, s[1:], loc, spaced))
        else:
            if s == '"':
                raise CompileError("unterminated string literal", loc)
            if s == "/" and text.startswith("/*", start):
                raise CompileError("unterminated comment", loc)
            raise CompileError(f"unexpected character '{s}'", loc)
        spaced = False
    append(Token("EOF", "", None, SourceLocation(file, line, len(text) - line_start + 1), True))
    return tokens
