"""The command line, as p4c accepts it for the BMv2 target."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from support.program import Compiled
from support.runner import (
    PROGRAMS_DIR,
    compile_file,
    load_p4info,
    run_command,
    run_compiler,
)

BASIC = PROGRAMS_DIR / "tutorials" / "basic.p4"
INCLUDING = PROGRAMS_DIR / "cli" / "include_and_define.p4"
INCDIR = PROGRAMS_DIR / "cli" / "incdir"


def _table_size(c: Compiled, name: str) -> tuple[int, int]:
    return c.table(name)["max_size"], c.p4_table(name).size


def test_version() -> None:
    from ratelab_p4c import __version__

    rc, out, err = run_compiler(["--version"])
    assert rc == 0, err
    assert __version__ in out


def test_help_lists_the_p4c_options() -> None:
    rc, out, err = run_compiler(["--help"])
    assert rc == 0, err
    for option in ("--target", "--arch", "--std", "-o", "--p4runtime-files", "-I", "-D"):
        assert option in out, option


def test_output_directory_is_created_and_named_after_the_input(tmp_path: Path) -> None:
    outdir = tmp_path / "deep" / "er"
    rc, _, err = run_compiler(
        ["--target", "bmv2", "--arch", "v1model", "-o", str(outdir), str(BASIC)]
    )
    assert rc == 0, err
    assert (outdir / "basic.json").is_file()
    j = json.loads((outdir / "basic.json").read_text())
    assert j["__meta__"]["version"][0] == 2
    # no P4Info unless asked for
    assert sorted(p.name for p in outdir.iterdir()) == ["basic.json"]


def test_without_o_writes_to_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    rc, _, err = run_compiler(["--target", "bmv2", "--arch", "v1model", str(BASIC)])
    assert rc == 0, err
    assert (tmp_path / "basic.json").is_file()


def test_several_p4runtime_files_by_suffix(tmp_path: Path) -> None:
    names = ["a.p4info.txt", "b.p4info.txtpb", "c.p4info.json", "d.p4info.bin"]
    files = [tmp_path / "info" / n for n in names]
    (tmp_path / "info").mkdir()
    rc, _, err = run_compiler(
        ["--target", "bmv2", "--arch", "v1model", "-o", str(tmp_path / "out"),
         "--p4runtime-files", ",".join(map(str, files)), str(BASIC)]
    )  # fmt: skip
    assert rc == 0, err
    decoded = [load_p4info(f) for f in files]
    assert all(d == decoded[0] for d in decoded[1:])
    assert decoded[0].tables[0].preamble.name == "MyIngress.ipv4_lpm"
    json.loads(files[2].read_text())  # the .json file is JSON
    assert files[3].read_bytes()[:1] != b"{"  # the .bin file is the binary encoding


def test_include_dir(tmp_path: Path) -> None:
    missing = compile_file(INCLUDING, tmp_path / "a")
    assert missing.returncode != 0
    first = missing.stderr.splitlines()[0]
    m = re.match(r"^(.+?):(\d+):(\d+): error: ", first)
    assert m and Path(m[1]).name == INCLUDING.name and m[2] == "5", first
    assert not missing.json_path.exists()
    for flag in (["-I", str(INCDIR)], [f"-I{INCDIR}"]):
        ok = compile_file(INCLUDING, tmp_path / f"b{len(flag)}", tuple(flag))
        assert ok.returncode == 0, ok.describe()
        c = Compiled.load(ok)
        assert _table_size(c, "MyIngress.l2") == (128, 128)


def test_quoted_include_is_found_next_to_the_including_file(tmp_path: Path) -> None:
    """Like cpp: "file" includes search the including file's directory first."""
    src_dir = tmp_path / "src"
    src_dir.mkdir()
    (src_dir / "ratelab_test_defs.p4").write_text((INCDIR / "ratelab_test_defs.p4").read_text())
    main = src_dir / "main.p4"
    main.write_text(INCLUDING.read_text())
    result = compile_file(main, tmp_path / "out")
    assert result.returncode == 0, result.describe()


def test_silent_on_success(tmp_path: Path) -> None:
    result = compile_file(BASIC, tmp_path / "out")
    assert result.returncode == 0, result.describe()
    assert result.stdout == ""
    assert "error" not in result.stderr.lower()


def test_defines(tmp_path: Path) -> None:
    inc = ("-I", str(INCDIR))
    base = Compiled.load(compile_file(INCLUDING, tmp_path / "base", inc))
    assert "MyIngress.acl" not in base.all_tables()
    sized = compile_file(
        INCLUDING, tmp_path / "sized", (*inc, "-D", "TABLE_SIZE=512", "-DWITH_ACL")
    )
    assert sized.returncode == 0, sized.describe()
    c = Compiled.load(sized)
    assert _table_size(c, "MyIngress.l2") == (512, 512)
    assert "MyIngress.acl" in c.all_tables()
    assert sorted(t.preamble.name for t in c.p4info.tables) == ["MyIngress.acl", "MyIngress.l2"]


def test_std_p4_16_accepted_other_values_rejected(tmp_path: Path) -> None:
    assert compile_file(BASIC, tmp_path / "a").returncode == 0  # passes --std p4-16
    for std in ("p4-14", "p4-17", "c99"):
        out = tmp_path / std
        rc, stdout, err = run_compiler(
            ["--target", "bmv2", "--arch", "v1model", "--std", std, "-o", str(out), str(BASIC)]
        )
        assert rc != 0, std
        assert "error" in err.lower() and "Traceback" not in err + stdout, err
        assert not (out / "basic.json").exists()


@pytest.mark.parametrize(
    "flags",
    [
        ["--target", "tofino", "--arch", "v1model"],
        ["--target", "bmv2", "--arch", "psa"],
        ["--target", "ebpf", "--arch", "v1model"],
        ["--frobnicate"],
        ["-o"],
    ],
    ids=["target", "arch", "target-ebpf", "unknown-flag", "missing-value"],
)
def test_bad_command_lines_fail_cleanly(flags: list[str], tmp_path: Path) -> None:
    out = tmp_path / "out"
    argv = [*flags, str(BASIC)] if flags != ["-o"] else [str(BASIC), "-o"]
    if "-o" not in flags:
        argv = ["-o", str(out), *argv]
    rc, stdout, err = run_compiler(argv)
    assert rc != 0
    assert "Traceback" not in err + stdout
    assert err.strip(), "no message on stderr"
    assert not (out / "basic.json").exists()


def test_no_input_file() -> None:
    rc, stdout, err = run_compiler(["--target", "bmv2", "--arch", "v1model"])
    assert rc != 0
    assert "Traceback" not in err + stdout
    assert err.strip()


def test_outputs_are_deterministic(tmp_path: Path) -> None:
    first = compile_file(BASIC, tmp_path / "one")
    second = compile_file(BASIC, tmp_path / "two")
    assert first.returncode == second.returncode == 0
    assert first.json_path.read_bytes() == second.json_path.read_bytes()
    for suffix in ("p4info.txtpb", "p4info.bin"):
        assert first.p4info_path(suffix).read_bytes() == second.p4info_path(suffix).read_bytes()


def test_installed_command_compiles(tmp_path: Path) -> None:
    out = tmp_path / "out"
    p4info = tmp_path / "basic.p4info.txtpb"
    proc = run_command(
        ["--target", "bmv2", "--arch", "v1model", "--std", "p4-16", "-o", str(out),
         "--p4runtime-files", str(p4info), str(BASIC)]
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert (out / "basic.json").is_file()
    assert load_p4info(p4info).tables[0].preamble.name == "MyIngress.ipv4_lpm"


def test_installed_command_version() -> None:
    proc = run_command(["--version"])
    assert proc.returncode == 0
    assert proc.stdout.strip()
