"""Bad input: one program per error class. Each must fail with a located one-line
error (`file:line:col: error: ...`), the source line and a caret, no traceback, and
no output written (files already in the output directory stay untouched)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.runner import ERRORS_DIR, CompileResult, compile_file, run_command, standard_argv

HEADER = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): error: (?P<msg>.+)$")
STALE = '{"stale": "left by an earlier run"}\n'
STALE_P4INFO = 'pkg_info { arch: "v1model" }\n'


@dataclass(frozen=True)
class Expected:
    """Where the error must point: one of `lines`, a column in [col_min, col_max]
    (the offending token or construct on that line), words the message must contain."""

    program: str
    lines: tuple[int, ...]
    col_min: int
    col_max: int
    words: tuple[str, ...] = ()


CASES = [
    # `hdr.h.small + ;` -- the parser stops at the `;` (column 37) after the `+` (35)
    Expected("syntax_error", (31,), 35, 37),
    Expected("unknown_identifier", (31,), 23, 23, ("ttl_limit",)),
    # `hdr.h.wide = hdr.h.small;` -- anywhere in the statement
    Expected("type_mismatch", (31,), 9, 32),
    # `set_port(1, 2);`
    Expected("wrong_argument_count", (34,), 9, 22, ("set_port",)),
    # `value = 8w1;` in a control whose `value` parameter is `in`
    Expected("assign_to_in_param", (30,), 9, 19, ("value",)),
    # `t.apply();` twice: BMv2 tables can be applied only once per pipeline
    Expected("unsupported_double_apply", (36, 37), 9, 17, ("t",)),
    Expected("missing_include", (2,), 1, 34, ("ratelab_no_such_file.p4",)),
    Expected("error_directive", (3,), 1, 38, ("RATELAB_PORTS must be defined",)),
    Expected("undefined_type", (8,), 5, 14, ("mac_addr_t",)),
    # the second `action drop()` (line 33), at `action` or at the name
    Expected("duplicate_declaration", (33,), 5, 15, ("drop",)),
    # the second `once.apply(hdr.h);`: the sub-control owns a table
    Expected("unsupported_double_apply_control", (44,), 9, 18, ("control",)),
    # the second unnamed `implementation = action_selector(...)` property
    Expected("duplicate_inline_profile", (47,), 9, 26, ("implementation",)),
    # the second `tagger.apply(hdr.h);` of a control type that owns a table
    Expected("unsupported_double_direct_invocation", (56,), 9, 21, ("directly",)),
    # `nibbles.apply(pkt, hdr.h.v[7:4]);`: a slice as a sub-parser's inout argument
    Expected("slice_subparser_argument", (31,), 28, 39, ("slice", "sub-parser")),
    # the second `options.apply(...)` of a sub-parser that owns a value set
    Expected("unsupported_double_apply_parser", (45,), 9, 15, ("parser", "once")),
    # `default_action = drop();` where drop is not in `actions`
    Expected("bad_table_property", (39,), 9, 32, ("drop",)),
]


def _compile_with_stale_outputs(src: Path, outdir: Path) -> CompileResult:
    """Compile into a directory that already holds outputs of an earlier good run."""
    outdir.mkdir(parents=True)
    (outdir / f"{src.stem}.json").write_text(STALE)
    (outdir / f"{src.stem}.p4info.txtpb").write_text(STALE_P4INFO)
    return compile_file(src, outdir)


def assert_clean_failure(result: CompileResult) -> None:
    assert result.returncode != 0, result.describe()
    assert "Traceback" not in result.stderr + result.stdout, result.stderr
    assert result.stderr.strip(), "no diagnostic on stderr"


def assert_nothing_written(result: CompileResult) -> None:
    assert result.json_path.read_text() == STALE, "the old JSON output was modified"
    old_p4info = result.p4info_path("p4info.txtpb")
    assert old_p4info.read_text() == STALE_P4INFO, "the old P4Info was modified"
    left = sorted(p.name for p in result.outdir.iterdir())
    expected = sorted([result.json_path.name, old_p4info.name])
    assert left == expected, f"files written despite the error: {left}"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.program)
def test_located_error(case: Expected, tmp_path: Path) -> None:
    src = ERRORS_DIR / f"{case.program}.p4"
    result = _compile_with_stale_outputs(src, tmp_path / "out")
    assert_clean_failure(result)
    lines = result.stderr.splitlines()
    m = HEADER.match(lines[0])
    assert m, f"first stderr line is not 'file:line:col: error: ...':\n{result.stderr}"
    assert Path(m["file"]).name == src.name, m["file"]
    line, col = int(m["line"]), int(m["col"])
    assert line in case.lines, f"line {line}, expected {case.lines}\n{result.stderr}"
    assert case.col_min <= col <= case.col_max, f"column {col}\n{result.stderr}"
    for word in case.words:
        assert word in m["msg"], f"{word!r} not in message {m['msg']!r}"
    # the offending source line, then a caret under the reported column
    source = src.read_text().splitlines()[line - 1]
    assert source in lines, f"source line not shown:\n{result.stderr}"
    caret = lines[lines.index(source) + 1]
    assert caret.strip() == "^" or caret.strip().startswith("^"), caret
    assert caret.index("^") == col - 1, f"caret at {caret.index('^') + 1}, column {col}"
    assert_nothing_written(result)


def test_every_error_program_has_a_case() -> None:
    assert sorted(p.stem for p in ERRORS_DIR.glob("*.p4")) == sorted(c.program for c in CASES)


def test_nonexistent_input_file(tmp_path: Path) -> None:
    result = _compile_with_stale_outputs(tmp_path / "no_such_program.p4", tmp_path / "out")
    assert_clean_failure(result)
    first = result.stderr.splitlines()[0]
    assert "error" in first and "no_such_program.p4" in first, first
    assert_nothing_written(result)


def test_a_directory_as_input(tmp_path: Path) -> None:
    (tmp_path / "dir.p4").mkdir()
    result = _compile_with_stale_outputs(tmp_path / "dir.p4", tmp_path / "out")
    assert_clean_failure(result)
    assert "error" in result.stderr.splitlines()[0]


def test_error_through_the_installed_command(tmp_path: Path) -> None:
    """The same diagnostics and exit status from the console script."""
    src = ERRORS_DIR / "unknown_identifier.p4"
    out = tmp_path / "out"
    out.mkdir()
    proc = run_command(standard_argv(src, out, src.stem))
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    m = HEADER.match(proc.stderr.splitlines()[0])
    assert m and (int(m["line"]), int(m["col"])) == (31, 23), proc.stderr
    assert list(out.iterdir()) == []


def test_errors_in_an_included_file_point_into_that_file(tmp_path: Path) -> None:
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "broken.p4").write_text("header h_t {\n    bit<8> a;\n    undefined_t b;\n}\n")
    src = tmp_path / "main.p4"
    src.write_text('#include <core.p4>\n#include <v1model.p4>\n#include "broken.p4"\n')
    result = compile_file(src, tmp_path / "out", ("-I", str(inc)))
    assert_clean_failure(result)
    m = HEADER.match(result.stderr.splitlines()[0])
    assert m, result.stderr
    assert Path(m["file"]).name == "broken.p4"
    assert (int(m["line"]), int(m["col"])) == (3, 5)
