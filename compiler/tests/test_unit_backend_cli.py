"""The ratelab-p4c command line: p4c's options, output names and formats, atomic output,
exit codes and diagnostics without tracebacks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from backend_helpers import program
from google.protobuf import json_format, text_format
from ratelab_p4c import cli
from ratelab_p4c.p4info_proto import p4info_pb2


def run_cli(args: list[str], cwd: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    old = os.getcwd()
    os.chdir(cwd)
    try:
        rc = cli.run(args)
    finally:
        os.chdir(old)
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture
def src(tmp_path: Path) -> Path:
    p = tmp_path / "prog.p4"
    p.write_text(program("", "hdr.h.a = 1;"))
    return p


def test_default_output_is_cwd_program_json(src: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    rc, _, err = run_cli([str(src)], tmp_path, capsys)
    assert rc == 0, err
    doc = json.loads((tmp_path / "prog.json").read_text())
    assert doc["__meta__"]["version"] == [2, 23]


def test_output_directory_and_p4runtime_formats(src: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "out"
    files = [out / "p.p4info.txtpb", out / "p.json", out / "p.bin", out / "p.txt"]
    rc, _, err = run_cli(
        ["--target", "bmv2", "--arch", "v1model", "--std", "p4-16", "-o", str(out),
         "--p4runtime-files", ",".join(map(str, files)), str(src)],
        tmp_path, capsys,
    )  # fmt: skip
    assert rc == 0, err
    assert (out / "prog.json").is_file()
    text = text_format.Parse(files[0].read_text(), p4info_pb2.P4Info())
    from_json = json_format.Parse(files[1].read_text(), p4info_pb2.P4Info())
    binary = p4info_pb2.P4Info.FromString(files[2].read_bytes())
    txt = text_format.Parse(files[3].read_text(), p4info_pb2.P4Info())
    assert text == from_json == binary == txt
    assert text.pkg_info.arch == "v1model"
    mode = (out / "prog.json").stat().st_mode & 0o777
    assert mode & 0o044  # readable by others like any normal file (umask permitting)


def test_output_file_name_like_p4c_bm2_ss(src: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    rc, _, err = run_cli(["-b", "bmv2", "-o", str(tmp_path / "x" / "my.json"), str(src)],
                         tmp_path, capsys)  # fmt: skip
    assert rc == 0, err
    assert (tmp_path / "x" / "my.json").is_file()


def test_older_p4runtime_file_and_format(src: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    rc, _, err = run_cli(
        ["--p4runtime-file", str(tmp_path / "info.out"), "--p4runtime-format", "json", str(src)],
        tmp_path, capsys,
    )  # fmt: skip
    assert rc == 0, err
    json_format.Parse((tmp_path / "info.out").read_text(), p4info_pb2.P4Info())


def test_include_dirs_and_defines(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "defs.p4").write_text("#define VALUE 0x2a\n")
    body = program("", "hdr.h.a = VALUE; hdr.h.b = EXTRA;")
    p = tmp_path / "d.p4"
    p.write_text('#include "defs.p4"\n' + body)
    rc, _, err = run_cli(["-I", str(inc), "-DEXTRA=7", str(p)], tmp_path, capsys)
    assert rc == 0, err
    doc = json.loads((tmp_path / "d.json").read_text())
    values = [
        prim["parameters"][1]["value"]
        for a in doc["actions"]
        for prim in a["primitives"]
        if prim["op"] == "assign"
    ]
    assert values == ["0x2a", "0x07"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--target", "tofino"], "unsupported target"),
        (["--arch", "psa"], "unsupported architecture"),
        (["--std", "p4-14"], "unsupported language"),
        (["-b", "ebpf"], "unsupported back end"),
        (["--p4runtime-files", "x.unknown"], "extension"),
        (["--no-such-flag"], "unrecognized"),
    ],
)
def test_bad_command_lines(  # type: ignore[no-untyped-def]
    src: Path, tmp_path: Path, capsys, args: list[str], message: str
) -> None:
    rc, _, err = run_cli([*args, str(src)], tmp_path, capsys)
    assert rc == 1
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "prog.json").exists()


def test_missing_input(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    rc, _, err = run_cli([str(tmp_path / "none.p4")], tmp_path, capsys)
    assert rc == 1 and "no such file" in err
    rc, _, err = run_cli([], tmp_path, capsys)
    assert rc == 1 and "no input file" in err


def test_compile_error_prints_location_and_writes_nothing(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "bad.p4"
    bad.write_text(program("", "hdr.h.nosuch = 1;"))
    out = tmp_path / "out"
    out.mkdir()
    (out / "bad.json").write_text("previous")
    rc, _, err = run_cli(
        ["-o", str(out), "--p4runtime-files", str(out / "bad.txtpb"), str(bad)], tmp_path, capsys
    )
    assert rc == 1
    first = err.splitlines()[0]
    assert first.startswith(str(bad)) and ": error: " in first
    assert err.splitlines()[-1].strip() == "^"
    assert (out / "bad.json").read_text() == "previous"  # untouched
    assert sorted(os.listdir(out)) == ["bad.json"]  # no P4Info, no temporaries


def test_backend_error_writes_nothing(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "twice.p4"
    bad.write_text(
        program(
            "table t { key = { hdr.h.a: exact; } actions = { NoAction; } }",
            "t.apply(); t.apply();",
        )
    )
    rc, _, err = run_cli(["-o", str(tmp_path / "o"), str(bad)], tmp_path, capsys)
    assert rc == 1 and "applied more than once" in err
    assert not (tmp_path / "o").exists() or not os.listdir(tmp_path / "o")


def test_internal_error_is_one_line_exit_2(  # type: ignore[no-untyped-def]
    src: Path, tmp_path: Path, capsys, monkeypatch
) -> None:
    import ratelab_p4c.backend as backend

    def boom(*a, **k):  # type: ignore[no-untyped-def]
        raise KeyError("oops")

    monkeypatch.setattr(backend, "compile_program", boom)
    rc, _, err = run_cli([str(src)], tmp_path, capsys)
    assert rc == 2
    assert err.startswith("internal compiler error:") and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "prog.json").exists()


def test_failed_write_leaves_no_partial_output(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    good = tmp_path / "ok" / "a.json"
    with pytest.raises(OSError):
        cli.write_atomically({str(good): b"1", str(blocker / "sub" / "b.json"): b"2"})
    assert not good.exists()
    assert not [n for n in os.listdir(tmp_path / "ok") if n.startswith(".ratelab")]


def test_version_and_help(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    rc, out, _ = run_cli(["--version"], tmp_path, capsys)
    assert rc == 0 and out.startswith("ratelab-p4c ")
    rc, out, _ = run_cli(["--help"], tmp_path, capsys)
    assert rc == 0 and "--p4runtime-files" in out


def test_console_script_runs_without_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "bad.p4"
    bad.write_text("control c( { }")
    proc = subprocess.run(
        [sys.executable, "-m", "ratelab_p4c.cli", str(bad)],
        capture_output=True, text=True, cwd=tmp_path, check=False,
    )  # fmt: skip
    assert proc.returncode == 1
    assert "error" in proc.stderr and "Traceback" not in proc.stderr
