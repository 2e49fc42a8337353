"""Helpers for the back-end unit tests: compile a small v1model program given as text
(with the compiler's own core.p4 / v1model.p4) to BMv2 JSON + P4Info, and find objects
in the result."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ratelab_p4c.backend import compile_program
from ratelab_p4c.frontend import parse_and_check
from ratelab_p4c.p4info import build_p4info

HEADERS = """
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  a;
    bit<8>  b;
    bit<16> c;
    int<8>  s;
    bit<32> w;
}
struct metadata {
    bit<8>  m;
    bit<32> idx;
    bool    flag;
}
struct headers {
    h_t h;
    h_t h2;
}
"""

PARSER = """
parser P(packet_in pkt, out headers hdr, inout metadata meta,
         inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}
"""

REST = """
control VC(inout headers hdr, inout metadata meta) { apply { } }
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { EGRESS }
}
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); pkt.emit(hdr.h2); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


@dataclass
class Result:
    json: dict[str, Any]
    p4info: Any

    def action(self, name: str) -> dict[str, Any]:
        found = [a for a in self.json["actions"] if a["name"] == name]
        assert found, f"no action {name}: {[a['name'] for a in self.json['actions']]}"
        return found[0]

    def table(self, name: str) -> dict[str, Any]:
        for p in self.json["pipelines"]:
            for t in p["tables"]:
                if t["name"] == name:
                    return t
        raise AssertionError(f"no table {name}")

    def pipeline(self, name: str = "ingress") -> dict[str, Any]:
        return next(p for p in self.json["pipelines"] if p["name"] == name)

    def node(self, name: str | None, pipeline: str = "ingress") -> dict[str, Any]:
        p = self.pipeline(pipeline)
        for item in p["tables"] + p["conditionals"]:
            if item["name"] == name:
                return item
        raise AssertionError(f"no node {name}")

    def state(self, name: str) -> dict[str, Any]:
        for s in self.json["parsers"][0]["parse_states"]:
            if s["name"] == name:
                return s
        raise AssertionError(f"no parse state {name}")

    def primitives(self) -> list[dict[str, Any]]:
        return [p for a in self.json["actions"] for p in a["primitives"]]


def compile_text(tmp_path: Path, text: str) -> Result:
    src = tmp_path / "prog.p4"
    src.write_text(text)
    program = parse_and_check(str(src))
    result = compile_program(program, str(src))
    return Result(result.json, build_p4info(result.cp))


def program(
    ingress_locals: str = "",
    ingress_apply: str = "",
    *,
    top: str = "",
    parser: str = PARSER,
    egress_apply: str = "",
) -> str:
    """A complete program with the given ingress control locals and apply body."""
    ingress = (
        "control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {\n"
        f"{ingress_locals}\n    apply {{\n{ingress_apply}\n    }}\n}}\n"
    )
    return HEADERS + top + parser + ingress + REST.replace("EGRESS", egress_apply)


def compile_ingress(tmp_path: Path, locals_: str = "", apply: str = "", **kw: Any) -> Result:
    return compile_text(tmp_path, program(locals_, apply, **kw))
