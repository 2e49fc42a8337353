"""Fuzzing `ratelab-ctl check` with mutated configuration files: the example
(control_plane/examples/router.yaml) with values of the wrong type or range, keys
removed or added, lines deleted, duplicated, swapped or cut, and junk YAML. Every file
is either accepted or refused with exit status 2 and one line
`file:line:col: error: ...`: never a traceback.

`make fuzz` runs many more examples (the hypothesis profile `fuzz`, see ../../conftest.py).
"""

from __future__ import annotations

import contextlib
import io
import re
import tempfile
from pathlib import Path
from typing import Any

import yaml
from ctl_support import Compiled
from hypothesis import example, given
from hypothesis import strategies as st
from ratelab_ctl.cli import main

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "router.yaml"
TEXT = EXAMPLE.read_text()
DOC = yaml.safe_load(TEXT)

# Values of every YAML type, and the edges of the ranges the fields have.
WRONG = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.sampled_from([0, -1, 1, 511, 512, 2**32, 2**64, 0.5, 1e300, float("nan"), float("inf")]),
    st.sampled_from(["", "x", "1gbit", "0bit", "-1mbit", "2xBDP", "0xBDP", "1s", "-1ms", "fifo"]),
    st.sampled_from(["red-lte", "redok-lte", "02:00:00:00:00:01", "10.0.0.1", "10.0.0.0/33"]),
    st.text(max_size=8),
    st.lists(st.integers(0, 3), max_size=3),
    st.dictionaries(
        st.sampled_from(["port", "mac", "preset", "rate", "x"]), st.integers(), max_size=2
    ),
)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key path in the document (mappings only)."""
    out: list[tuple[Any, ...]] = []
    if isinstance(node, dict):
        for k, v in node.items():
            out.append((*prefix, k))
            out.extend(_paths(v, (*prefix, k)))
    return out


PATHS = _paths(DOC)


@st.composite
def mutated_document(draw: st.DrawFn) -> str:
    doc = yaml.safe_load(TEXT)
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(PATHS))
        parent = doc
        for k in path[:-1]:
            if not isinstance(parent, dict) or k not in parent:
                break
            parent = parent[k]
        else:
            if not isinstance(parent, dict):
                continue
            kind = draw(st.sampled_from(["replace", "delete", "add"]))
            if kind == "replace":
                parent[path[-1]] = draw(WRONG)
            elif kind == "delete":
                parent.pop(path[-1], None)
            else:
                parent[draw(st.sampled_from(["extra", 3, 4, "10.0.9.0/24", "aqm", "mac"]))] = draw(
                    WRONG
                )
    return yaml.safe_dump(doc, sort_keys=False)


@st.composite
def mutated_text(draw: st.DrawFn) -> str:
    lines = TEXT.splitlines(keepends=True)
    for _ in range(draw(st.integers(1, 3))):
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        kind = draw(st.sampled_from(["delete", "duplicate", "swap", "insert", "indent", "cut"]))
        if kind == "delete":
            del lines[i]
        elif kind == "duplicate":
            lines.insert(i, lines[i])
        elif kind == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif kind == "insert":
            junk = draw(
                st.sampled_from(
                    [
                        ": ",
                        "- ",
                        "{",
                        "[",
                        "&a ",
                        "*a",
                        "!!python/object:os.system ",
                        "\t",
                        "? ",
                        "%YAML 1.1\n",
                        "---\n",
                        "...\n",
                        "'",
                        '"',
                        "\x00",
                        "é",
                    ]
                )
                | st.text(max_size=6)
            )
            col = draw(st.integers(0, len(lines[i])))
            lines[i] = lines[i][:col] + junk + lines[i][col:]
        elif kind == "indent":
            lines[i] = " " * draw(st.integers(1, 3)) + lines[i]
        else:
            lines[i] = lines[i][: draw(st.integers(0, len(lines[i])))]
            del lines[i + 1 :]
    return "".join(lines)


def check_accepted_or_one_error_line(text: str, *extra: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "router.yaml"
        path.write_text(text)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["check", *extra, str(path)])
    message = err.getvalue()
    assert "Traceback" not in message, message
    if code == 0:
        assert message == "" and out.getvalue().startswith(f"{path}: ok:"), (out, message)
        return
    assert code == 2, (code, message)
    assert message.endswith("\n") and message.count("\n") == 1, message
    assert re.match(rf"^{re.escape(str(path))}:\d+:\d+: error: \S", message), message


@given(mutated_document())
def test_a_config_with_wrong_values_is_accepted_or_gets_one_error_line(text: str) -> None:
    check_accepted_or_one_error_line(text)


@given(mutated_text())
def test_a_config_with_mangled_lines_is_accepted_or_gets_one_error_line(text: str) -> None:
    check_accepted_or_one_error_line(text)


@given(st.text(max_size=200) | st.binary(max_size=200).map(lambda b: b.decode("latin-1")))
@example("\x1f")  # found by this test: PyYAML's reader error was printed on two lines
@example("\ufffe")
def test_junk_is_refused_with_one_error_line(text: str) -> None:
    check_accepted_or_one_error_line(text)


def test_a_key_with_a_newline_is_named_on_one_line(capsys) -> None:
    assert main(["check", "--set", "ports.9\nx=1", str(EXAMPLE)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "ports.9\\nx" in err, err


def test_a_character_yaml_forbids_is_reported_at_its_place(capsys, tmp_path: Path) -> None:
    path = tmp_path / "router.yaml"
    path.write_text(TEXT.replace("device_id: 0", "device_id: \x07"))
    assert main(["check", str(path)]) == 2
    line = TEXT[: TEXT.index("device_id: 0")].count("\n") + 1
    assert capsys.readouterr().err == (
        f"{path}:{line}:12: error: invalid YAML: unacceptable character #x0007: "
        "special characters are not allowed\n"
    )


def _dotted(path: tuple[Any, ...]) -> str:
    return ".".join(str(k) for k in path)


@given(
    st.lists(
        st.tuples(
            st.sampled_from([_dotted(p) for p in PATHS]) | st.text(max_size=8),
            st.sampled_from(["~", "", "{", "[1, 2]", "{preset: x}", "1e9", "-1", "\x07", "a: b"])
            | st.text(max_size=8),
        ),
        min_size=1,
        max_size=3,
    )
)
@example([("-x", "1")])
@example([("0\n0", "[1, 2]")])  # found by this test: the key's newline split the message
def test_overrides_are_accepted_or_get_one_error_line(overrides: list[tuple[str, str]]) -> None:
    # An error in an override points into it (`<command line>:1:col`), else into the file.
    args: list[str] = []
    for key, value in overrides:
        args += ["--set", f"{key}={value}"]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "router.yaml"
        path.write_text(TEXT)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["check", *args, str(path)])
    message = err.getvalue()
    assert "Traceback" not in message, message
    if code == 0:
        assert message == "", message
        return
    assert code == 2 and message.count("\n") == 1, (code, message)
    where = f"({re.escape(str(path))}|<command line>):\\d+:\\d+"
    # A value argparse takes for an option is a usage error (`ratelab-ctl: error:`).
    assert re.match(rf"^({where}|ratelab-ctl): error: \S", message), message


@given(mutated_document())
def test_checked_against_the_program_too(compiled: Compiled, text: str) -> None:
    # The P4Info check runs after the file's own: it adds no new way to fail badly.
    check_accepted_or_one_error_line(text, "--p4info", str(compiled.p4info))
