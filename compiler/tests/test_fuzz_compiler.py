"""Fuzzing the compiler with mutated P4 sources: the project's P4 test programs and
router.p4 with tokens deleted, duplicated, swapped or inserted, and cut short. Whatever
comes in, the compiler either compiles it (exit 0) or reports one error line naming the
file and the place, with exit status 1: never a traceback, never an internal error.

`make fuzz` runs many more examples (the hypothesis profile `fuzz`, see ../../conftest.py).
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from support.runner import PROGRAMS_DIR, run_compiler

REPO = PROGRAMS_DIR.parents[2]
INCDIR = PROGRAMS_DIR / "cli" / "incdir"
ROUTER = REPO / "p4src" / "router.p4"
ROUTER_PARTS = sorted((REPO / "p4src" / "include").glob("*.p4"))
PROGRAMS = [*sorted(PROGRAMS_DIR.glob("*/*.p4")), ROUTER]
# What gets mutated: the programs, and the files router.p4 includes (the router is then
# compiled with the mutated one in place of the original).
SOURCES = PROGRAMS + ROUTER_PARTS
TEXTS = {p: p.read_text() for p in SOURCES}

# Whitespace, words, strings, comments, or any other single character: joining the
# tokens gives back the source exactly.
_TOKEN = re.compile(r'\s+|\w+|"[^"\n]*"|//[^\n]*|/\*.*?\*/|\S', re.S)

# Tokens worth inserting: P4 keywords and punctuation, edge-case types and literals,
# preprocessor lines and characters P4 does not have.
JUNK = [
    *"{}()[];,<>=:.#@$`\\'\"?!~^|&*+-/%",
    "<<",
    ">>",
    "==",
    "&&&",
    "++",
    "..",
    "::",
    "/*",
    "*/",
    "\n#",
    "\n#define X X\n",
    '\n#include "nothere.p4"\n',
    "\n#if 1\n",
    "\n#endif\n",
    "\n#error x\n",
    "header",
    "struct",
    "enum",
    "typedef",
    "const",
    "extern",
    "control",
    "parser",
    "state",
    "transition",
    "select",
    "apply",
    "table",
    "action",
    "actions",
    "key",
    "default_action",
    "return",
    "exit",
    "default",
    "if",
    "else",
    "switch",
    "tuple",
    "bit<0>",
    "bit<1000>",
    "varbit<8>",
    "int<1>",
    "bool",
    "error",
    "packet_in",
    "8w256",
    "0x",
    "1/0",
    "1 % 0",
    "(bit<4>)",
    "-1",
    "99999999999999999999999999999999",
    '@name("x")',
    "@priority(1)",
    "this",
    "_",
    "\x00",
    "é",
    "\t",
    "\r",
]

NUMBERS = [
    "0",
    "1",
    "2",
    "7",
    "8",
    "9",
    "31",
    "32",
    "33",
    "63",
    "64",
    "65",
    "127",
    "128",
    "129",
    "255",
    "256",
    "1024",
    "65536",
    "4294967296",
    "0x0",
    "0xffffffffffffffffffffffffffffffff",
    "8w0",
    "8w255",
    "1w1",
    "16s-1",
    "0b1",
    "0o7",
    "2147483648",
]


@st.composite
def mutated_source(draw: st.DrawFn) -> tuple[Path, str]:
    path = draw(st.sampled_from(SOURCES))
    tokens = _TOKEN.findall(TEXTS[path])
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(
            st.sampled_from(["delete", "duplicate", "swap", "insert", "replace", "truncate"])
        )
        i = draw(st.integers(0, len(tokens) - 1))
        if kind == "delete":
            del tokens[i]
        elif kind == "duplicate":
            tokens.insert(i, tokens[i])
        elif kind == "swap":
            j = draw(st.integers(0, len(tokens) - 1))
            tokens[i], tokens[j] = tokens[j], tokens[i]
        elif kind == "replace":
            # A word or number for another: programs that parse but mean something else
            # (a type for a value, a header for a struct, widths and sizes at their edges).
            words = [t for t in tokens if t[:1].isalnum() or t[:1] == "_"] or NUMBERS
            tokens[i] = draw(st.sampled_from(words) | st.sampled_from(NUMBERS))
        elif kind == "insert":
            junk = draw(st.sampled_from(JUNK) | st.text(max_size=3) | st.sampled_from(tokens))
            tokens.insert(i, f" {junk} " if draw(st.booleans()) else junk)
        else:
            del tokens[i:]
        if not tokens:
            break
    return path, "".join(tokens)


# One error line: file:line:col: error: ..., or error: ... when no place applies.
_ERROR_LINE = re.compile(r"^(\S+:\d+:\d+: )?error: \S|^ratelab-p4c: error: \S")


def check_compiles_or_reports(path: Path, source: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        if path in ROUTER_PARTS:
            (Path(tmp) / "include").mkdir()
            for part in ROUTER_PARTS:
                (Path(tmp) / "include" / part.name).write_text(TEXTS[part])
            (Path(tmp) / "include" / path.name).write_text(source)
            p4 = Path(tmp) / ROUTER.name
            p4.write_text(TEXTS[ROUTER])
        else:
            p4 = Path(tmp) / path.name
            p4.write_text(source)
        argv = ["-I", str(path.parent), "-I", str(INCDIR), "-o", tmp, str(p4)]
        rc, _out, err = run_compiler(argv)
    assert "Traceback" not in err, err
    assert rc in (0, 1), f"exit {rc}: {err}"
    if rc == 1:
        first = err.splitlines()[0] if err else ""
        assert _ERROR_LINE.match(first), f"not an error line: {first!r}\n{err}"


DEFINES = REPO / "p4src" / "include" / "defines.p4"
EXTERNS = PROGRAMS_DIR / "constructs" / "externs.p4"


@given(mutated_source())
# Found by this test: `#ifndef` without a name was an internal compiler error, and a
# literal 429496729616 bits wide ran out of memory.
@example((DEFINES, TEXTS[DEFINES].replace("#ifndef MAX_PORTS", "#ifndef ", 1)))
@example((EXTERNS, TEXTS[EXTERNS].replace("crc16, 16w100", "crc16,429496729616w100", 1)))
def test_a_mutated_program_compiles_or_gets_one_error_line(case: tuple[Path, str]) -> None:
    check_compiles_or_reports(*case)


@given(st.sampled_from(SOURCES), st.data())
def test_a_program_cut_anywhere_compiles_or_gets_one_error_line(
    path: Path, data: st.DataObject
) -> None:
    text = TEXTS[path]
    cut = data.draw(st.integers(0, len(text)))
    check_compiles_or_reports(path, text[:cut])


@pytest.mark.parametrize(
    "directive", ["#ifndef", "#ifdef", "#define", "#undef", "#if", "#if !", "#if !defined"]
)
def test_a_directive_without_its_arguments_is_one_error_line(
    tmp_path: Path, directive: str
) -> None:
    # Found by the fuzzer: the preprocessor (pcpp) failed with an IndexError on these.
    p4 = tmp_path / "a.p4"
    p4.write_text(f"/* a */\n  {directive}\n#define X 1\n#endif\n")
    rc, _out, err = run_compiler(["-o", str(tmp_path), str(p4)])
    name = directive.split()[0]
    assert (rc, err.splitlines()[0]) == (
        1,
        f"{p4}:2:3: error: preprocessor: {name} without the arguments it needs",
    )


def test_an_empty_pragma_does_nothing(tmp_path: Path) -> None:
    # As in C; pcpp failed on it too.
    p4 = tmp_path / "basic.p4"
    p4.write_text("#pragma\n" + (PROGRAMS_DIR / "tutorials" / "basic.p4").read_text())
    rc, _out, err = run_compiler(["-o", str(tmp_path), str(p4)])
    assert rc == 0, err


@pytest.mark.parametrize(
    ("source", "column"),
    [
        ("const bit<8> A = (bit<8>)429496729616w100;", 26),
        ("const bit<4294967296> A = 1;", 11),
        ("header h_t { varbit<4294967296> v; }", 21),
        ("const int A = 1 << 429496729616;", 15),
    ],
)
def test_a_width_past_the_maximum_is_one_error_line(
    tmp_path: Path, source: str, column: int
) -> None:
    # Found by the fuzzer: such widths ran out of memory (an internal compiler error).
    p4 = tmp_path / "a.p4"
    p4.write_text(source + "\n")
    rc, _out, err = run_compiler(["-o", str(tmp_path), str(p4)])
    first = err.splitlines()[0]
    assert rc == 1 and first.startswith(f"{p4}:1:{column}: error: "), err
    assert "over the maximum" in first, err
