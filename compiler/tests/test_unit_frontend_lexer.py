"""Lexer: integer literals, tokens, keywords, comments and line markers."""

from __future__ import annotations

import pytest
from ratelab_p4c.errors import CompileError
from ratelab_p4c.lexer import tokenize


def kinds(text: str) -> list[str]:
    return [t.kind for t in tokenize(text)][:-1]


@pytest.mark.parametrize(
    ("text", "value", "width", "signed"),
    [
        ("5", 5, None, False),
        ("8w5", 5, 8, False),
        ("4s3", 3, 4, True),
        ("0x1F", 31, None, False),
        ("0XfF", 255, None, False),
        ("0b1010", 10, None, False),
        ("0B11", 3, None, False),
        ("0o17", 15, None, False),
        ("0d99", 99, None, False),
        ("1_000", 1000, None, False),
        ("32w0xFFFF_FFFF", 0xFFFFFFFF, 32, False),
        ("16w0b1111_0000", 0xF0, 16, False),
        ("8s0x7f", 127, 8, True),
        ("48w0o777", 0o777, 48, False),
        ("12w0d100", 100, 12, False),
    ],
)
def test_integer_literals(text: str, value: int, width: int | None, signed: bool) -> None:
    (tok, eof) = tokenize(text)
    assert tok.kind == "INT"
    assert tok.value == (value, width, signed)
    assert eof.kind == "EOF"


def test_operators_longest_match() -> None:
    assert kinds("a &&& b && c & d") == ["ID", "&&&", "ID", "&&", "ID", "&", "ID"]
    assert kinds("a |+| b |-| c || d | e") == [
        "ID",
        "|+|",
        "ID",
        "|-|",
        "ID",
        "||",
        "ID",
        "|",
        "ID",
    ]
    assert kinds("a ++ b + c .. d . e") == ["ID", "++", "ID", "+", "ID", "..", "ID", ".", "ID"]
    assert kinds("<< <= < == = != >=") == ["<<", "<=", "<", "==", "=", "!=", ">="]


def test_shift_right_is_two_tokens_with_adjacency() -> None:
    toks = tokenize("a >> b > > c")
    assert [t.kind for t in toks[:6]] == ["ID", ">", ">", "ID", ">", ">"]
    assert toks[2].spaced is False
    assert toks[5].spaced is True


def test_keywords_identifiers_dontcare_annotations() -> None:
    toks = tokenize('control apply_x _ @name("x") @priority state')
    assert [t.kind for t in toks[:-1]] == [
        "control",
        "ID",
        "_",
        "ANNOT",
        "(",
        "STRING",
        ")",
        "ANNOT",
        "state",
    ]
    assert toks[3].value == "name"
    assert toks[7].value == "priority"


def test_string_escapes() -> None:
    tok = tokenize(r'"a\"b\\c\n"')[0]
    assert tok.kind == "STRING"
    assert tok.value == 'a"b\\c\n'


def test_comments_and_locations() -> None:
    toks = tokenize("a /* x\n y */ b // c\n  c")
    assert [(t.text, t.loc.line, t.loc.col) for t in toks[:-1]] == [
        ("a", 1, 1),
        ("b", 2, 7),
        ("c", 3, 3),
    ]


def test_line_markers_set_file_and_line() -> None:
    text = 'x\n# 10 "inc.p4"\ny\n  z\n#line 3 "main.p4"\nw\n#pragma once\nv\n'
    toks = tokenize(text, "top.p4")
    locs = [(t.text, t.loc.file, t.loc.line, t.loc.col) for t in toks[:-1]]
    assert locs == [
        ("x", "top.p4", 1, 1),
        ("y", "inc.p4", 10, 1),
        ("z", "inc.p4", 11, 3),
        ("w", "main.p4", 3, 1),
        ("v", "main.p4", 5, 1),
    ]


def test_bad_character_is_located() -> None:
    with pytest.raises(CompileError) as info:
        tokenize("a\n  b $ c", "f.p4")
    assert str(info.value) == "f.p4:2:5: error: unexpected character '$'"


def test_unterminated_string() -> None:
    with pytest.raises(CompileError, match="unterminated string"):
        tokenize('x = "abc\n')
