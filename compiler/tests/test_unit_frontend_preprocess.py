"""Preprocessor (pcpp) integration and p4c-style error formatting with original
file/line locations after #include."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from ratelab_p4c.errors import CompileError, SourceLocation, format_error
from ratelab_p4c.frontend import parse_and_check
from ratelab_p4c.lexer import tokenize
from ratelab_p4c.preprocess import P4INCLUDE_DIR, preprocess


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def compile_error(path: Path, **kw: object) -> CompileError:
    with pytest.raises(CompileError) as info:
        parse_and_check(str(path), **kw)  # type: ignore[arg-type]
    return info.value


def test_defines_and_conditionals(tmp_path: Path) -> None:
    src = write(
        tmp_path / "m.p4",
        "#if WIDTH > 8\nconst bit<WIDTH> A = 1;\n#elif defined(SMALL)\nconst bit<4> A = 2;\n"
        "#else\nconst bit<8> A = 3;\n#endif\n#ifdef FLAG\nconst bit<8> F = FLAG;\n#endif\n",
    )
    p = parse_and_check(str(src), defines={"WIDTH": "16", "FLAG": None})
    assert p.find("A").type_ref.resolved.width == 16
    assert p.find("F").value.const_value == 1
    p = parse_and_check(str(src), defines={"SMALL": ""})
    assert p.find("A").type_ref.resolved.width == 4 and p.find("F") is None
    p = parse_and_check(str(src))
    assert p.find("A").value.const_value == 3


def test_include_search_order(tmp_path: Path) -> None:
    # "quoted" includes look next to the including file before -I directories.
    write(tmp_path / "src" / "defs.p4", "const bit<8> WHERE = 1;\n")
    write(tmp_path / "inc" / "defs.p4", "const bit<8> WHERE = 2;\n")
    write(tmp_path / "inc" / "only_inc.p4", "const bit<8> ONLY = 3;\n")
    main = write(tmp_path / "src" / "main.p4", '#include "defs.p4"\n#include <only_inc.p4>\n')
    p = parse_and_check(str(main), include_dirs=[str(tmp_path / "inc")])
    assert p.find("WHERE").value.const_value == 1
    assert p.find("ONLY").value.const_value == 3
    # <angle> includes do not look next to the including file, only in -I dirs.
    main2 = write(tmp_path / "src" / "main2.p4", "#include <defs.p4>\n")
    p = parse_and_check(str(main2), include_dirs=[str(tmp_path / "inc")])
    assert p.find("WHERE").value.const_value == 2
    assert [os.path.basename(f) for f in p.source_files] == ["main2.p4", "defs.p4"]


def test_include_dirs_take_precedence_over_builtin_p4include(tmp_path: Path) -> None:
    write(tmp_path / "inc" / "core.p4", "const bit<8> MY_CORE = 7;\n")
    main = write(tmp_path / "main.p4", "#include <core.p4>\n")
    p = parse_and_check(str(main), include_dirs=[str(tmp_path / "inc")])
    assert p.find("MY_CORE") is not None


def test_builtin_p4include_is_found(tmp_path: Path) -> None:
    main = write(tmp_path / "main.p4", "#include <core.p4>\n")
    r = preprocess(str(main))
    assert os.path.join(P4INCLUDE_DIR, "core.p4") in [os.path.abspath(f) for f in r.files]


def test_missing_include_is_located(tmp_path: Path) -> None:
    main = write(tmp_path / "main.p4", 'const bit<8> A = 1;\n  #include "nope.p4"\n')
    err = compile_error(main)
    assert err.location == SourceLocation(str(main), 2, 3)
    assert "nope.p4" in err.message


def test_error_directive(tmp_path: Path) -> None:
    main = write(tmp_path / "main.p4", "\n#ifndef PORTS\n#error PORTS must be defined\n#endif\n")
    err = compile_error(main)
    assert err.location.line == 3
    assert "PORTS must be defined" in err.message
    parse_and_check(str(main), defines={"PORTS": "4"})


def test_locations_refer_to_original_file_and_line(tmp_path: Path) -> None:
    write(
        tmp_path / "lib.p4",
        "/* a comment\n   over lines */\n\n\n\n\n\n\n\n\nconst bit<8> L = 1;\n"
        "const bit<8> BAD = 8w1 + 16w2;\n",
    )
    main = write(
        tmp_path / "main.p4",
        '#define N 4\n#include "lib.p4"\nconst bit<8> M = N;\n',
    )
    err = compile_error(main)
    assert err.location.file == str(tmp_path / "lib.p4")
    assert (err.location.line, err.location.col) == (12, 20)
    text = err.format()
    assert text.splitlines() == [
        f"{tmp_path / 'lib.p4'}:12:20: error: '+': operands have different types "
        "bit<8> and bit<16> (use a cast)",
        "const bit<8> BAD = 8w1 + 16w2;",
        "                   ^",
    ]


def test_error_after_include_in_main_file(tmp_path: Path) -> None:
    write(tmp_path / "lib.p4", "// filler\n" * 30 + "const bit<8> L = 1;\n")
    main = write(
        tmp_path / "main.p4",
        '#include "lib.p4"\n\n#define TWICE(x) ((x) + (x))\n'
        "const bit<8> A = TWICE(L);\nconst bit<8> B = A + nope;\n",
    )
    err = compile_error(main)
    assert (err.location.file, err.location.line, err.location.col) == (str(main), 5, 22)


def test_columns_survive_macro_expansion(tmp_path: Path) -> None:
    main = write(
        tmp_path / "m.p4",
        "#define LONG_NAME_MACRO 1\n#define S 8\n"
        "const bit<8> X = (bit<8>)LONG_NAME_MACRO + 8w5 &&& 2;\n"
        "const bit<S> Y = 8w1;\n",
    )
    text = preprocess(str(main)).text
    assert "8w5 &&& 2" in text
    toks = [t for t in tokenize(text, str(main)) if t.text == "8w5"]
    assert toks[0].loc.line == 3


def test_width_literals_in_macro_bodies_stay_whole(tmp_path: Path) -> None:
    """pcpp lexes `32w1024` in a #define as `32` `w1024`; the expansion must not
    separate them (nor glue tokens that were apart in the body)."""
    main = write(
        tmp_path / "m.p4",
        "#define SIZE 32w1024\n#define SUM 8w5 + 8w2\n#define PAIR(a) a 4w1\n"
        "const bit<32> A = SIZE;\nconst bit<8> B = SUM;\nconst bit<4> C = PAIR(-) ;\n",
    )
    text = preprocess(str(main)).text
    assert "32w1024" in text and "8w5 + 8w2" in text
    p = parse_and_check(str(main))
    assert p.find("A").value.const_value == 1024
    assert p.find("B").value.const_value == 7
    assert p.find("C").value.const_value == 15


def test_format_error_with_tabs_and_without_source() -> None:
    err = CompileError("bad", SourceLocation("<mem>", 1, 3))
    assert format_error(err, {"<mem>": ["\tab"]}).splitlines() == [
        "<mem>:1:3: error: bad",
        "\tab",
        "\t ^",
    ]
    assert (
        format_error(CompileError("x", SourceLocation("/no/such", 1, 1)))
        == "/no/such:1:1: error: x"
    )
    assert str(CompileError("plain")) == "error: plain"


def test_missing_input_file() -> None:
    with pytest.raises(CompileError, match="cannot read"):
        parse_and_check("/no/such/file.p4")


V1_PROGRAM = """#include <core.p4>
#include <v1model.p4>
header eth_t { bit<48> dst; bit<48> src; bit<16> etype; }
struct headers { eth_t eth; }
struct meta_t { bit<16> h; }
parser MyParser(packet_in pk, out headers hdr, inout meta_t m,
                inout standard_metadata_t sm) {
    state start { pk.extract(hdr.eth); transition accept; }
}
control MyVerify(inout headers hdr, inout meta_t m) { apply { } }
control MyIngress(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    action fwd(bit<9> port) { sm.egress_spec = port; }
    action drop() { mark_to_drop(sm); }
    table t {
        key = { hdr.eth.dst : exact; sm.ingress_port : ternary; }
        actions = { fwd; drop; NoAction; }
        default_action = drop();
    }
    apply {
        hash(m.h, HashAlgorithm.crc16, 16w0, { hdr.eth.src, hdr.eth.dst }, 16w1024);
        t.apply();
    }
}
control MyEgress(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers hdr, inout meta_t m) { apply { } }
control MyDeparser(packet_out pk, in headers hdr) { apply { pk.emit(hdr.eth); } }
V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
"""


def test_builtin_core_and_v1model_type_check(tmp_path: Path) -> None:
    main = write(tmp_path / "prog.p4", V1_PROGRAM)
    p = parse_and_check(str(main))
    assert p.main is not None and p.main.decl is p.find("V1Switch")
    assert [str(t) for t in p.main.type.type_args] == ["headers", "meta_t"]
    assert "NoError" in p.errors and {"exact", "lpm", "ternary"} <= set(p.match_kinds)
    assert {os.path.basename(f) for f in p.source_files} == {"prog.p4", "core.p4", "v1model.p4"}


def test_non_utf8_input_is_a_compile_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.p4"
    bad.write_bytes(b"const bit<8> X = 1; // \xff\xfe\n")
    with pytest.raises(CompileError, match="not UTF-8"):
        parse_and_check(str(bad))
    main = write(tmp_path / "main.p4", '#include "bad.p4"\n')
    with pytest.raises(CompileError, match="not UTF-8"):
        parse_and_check(str(main))


def test_long_expressions_do_not_overflow_the_stack(tmp_path: Path) -> None:
    main = write(tmp_path / "m.p4", "const bit<8> X = " + " + ".join(["8w1"] * 3000) + ";\n")
    assert parse_and_check(str(main)).find("X").value.const_value == 3000 % 256


def test_undefined_macros_are_zero_in_conditions(tmp_path: Path) -> None:
    src = write(
        tmp_path / "u.p4",
        "#if NOT_DEFINED\nconst bit<8> A = 1;\n#else\nconst bit<8> A = 2;\n#endif\n"
        "#if NOT_DEFINED > 3 || defined(ALSO_NOT)\nconst bit<8> B = 1;\n#endif\n",
    )
    p = parse_and_check(str(src))
    assert p.find("A").value.const_value == 2 and p.find("B") is None


def test_included_twice_with_guard_is_read_once(tmp_path: Path) -> None:
    write(tmp_path / "g.p4", "#ifndef G_P4\n#define G_P4\nconst bit<8> G = 1;\n#endif\n")
    main = write(tmp_path / "m.p4", '#include "g.p4"\n#include "g.p4"\nconst bit<8> H = G;\n')
    assert parse_and_check(str(main)).find("H").value.const_value == 1
