"""A compiled program: its BMv2 JSON and P4Info with lookups by name."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from finsy.proto.p4.config.v1 import p4info_pb2

from .runner import CompileResult, load_json, load_p4info


def hexval(text: str) -> int:
    """The integer value of a BMv2 hexstr ("0x0a", "-0x1")."""
    return int(text, 16)


@dataclass
class Compiled:
    result: CompileResult
    json: dict[str, Any]
    p4info: p4info_pb2.P4Info
    _cache: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, result: CompileResult) -> Compiled:
        assert result.returncode == 0, f"compilation failed\n{result.describe()}"
        j = load_json(result.json_path)
        info = load_p4info(result.p4info_path("p4info.txtpb"))
        return cls(result, j, info)

    # ---- BMv2 JSON ---------------------------------------------------------------

    def pipeline(self, name: str) -> dict[str, Any]:
        for p in self.json["pipelines"]:
            if p["name"] == name:
                return p
        raise AssertionError(f"no pipeline {name!r}: {[p['name'] for p in self.json['pipelines']]}")

    def all_tables(self) -> dict[str, dict[str, Any]]:
        return {t["name"]: t for p in self.json["pipelines"] for t in p["tables"]}

    def table(self, name: str) -> dict[str, Any]:
        tables = self.all_tables()
        assert name in tables, f"no table {name!r} in JSON; tables: {sorted(tables)}"
        return tables[name]

    def action_by_id(self, action_id: int) -> dict[str, Any]:
        for a in self.json["actions"]:
            if a["id"] == action_id:
                return a
        raise AssertionError(f"no action with id {action_id}")

    def actions_named(self, name: str) -> list[dict[str, Any]]:
        return [a for a in self.json["actions"] if a["name"] == name]

    def action(self, name: str) -> dict[str, Any]:
        found = self.actions_named(name)
        assert found, (
            f"no action {name!r}; actions: {sorted({a['name'] for a in self.json['actions']})}"
        )
        return found[0]

    def table_action_names(self, table: dict[str, Any]) -> list[str]:
        return [self.action_by_id(i)["name"] for i in table["action_ids"]]

    def header_type(self, name: str) -> dict[str, Any]:
        for ht in self.json["header_types"]:
            if ht["name"] == name:
                return ht
        raise AssertionError(f"no header type {name!r}")

    def header(self, name: str) -> dict[str, Any]:
        for h in self.json["headers"]:
            if h["name"] == name:
                return h
        raise AssertionError(
            f"no header instance {name!r}: {[h['name'] for h in self.json['headers']]}"
        )

    def fields_of(self, header_name: str) -> dict[str, tuple[Any, bool]]:
        """field name -> (width or "*", signed) of a header instance."""
        ht = self.header_type(self.header(header_name)["header_type"])
        return {f[0]: (f[1], bool(f[2]) if len(f) > 2 else False) for f in ht["fields"]}

    def parser(self, name: str = "parser") -> dict[str, Any]:
        for p in self.json["parsers"]:
            if p["name"] == name:
                return p
        raise AssertionError(f"no parser {name!r}")

    def parse_state(self, name: str, parser: str = "parser") -> dict[str, Any]:
        for s in self.parser(parser)["parse_states"]:
            if s["name"] == name:
                return s
        raise AssertionError(
            f"no parse state {name!r}: {[s['name'] for s in self.parser(parser)['parse_states']]}"
        )

    def states_extracting(self, header_or_stack: str) -> list[dict[str, Any]]:
        """Parse states with an extract (or extract_VL) into the named header or stack."""
        found = []
        for s in self.parser()["parse_states"]:
            for op in s["parser_ops"]:
                if (
                    op["op"] in ("extract", "extract_VL")
                    and op["parameters"][0]["value"] == header_or_stack
                ):
                    found.append(s)
                    break
        return found

    def primitive_ops(self, action: dict[str, Any]) -> list[str]:
        return [p["op"] for p in action["primitives"]]

    def all_primitives(self) -> list[dict[str, Any]]:
        return [p for a in self.json["actions"] for p in a["primitives"]]

    def named(self, section: str, name: str) -> dict[str, Any]:
        for item in self.json[section]:
            if item["name"] == name:
                return item
        raise AssertionError(
            f"no {section} entry {name!r}: {[i['name'] for i in self.json[section]]}"
        )

    # ---- P4Info ------------------------------------------------------------------

    def p4_table(self, name: str) -> p4info_pb2.Table:
        for t in self.p4info.tables:
            if t.preamble.name == name:
                return t
        raise AssertionError(
            f"no P4Info table {name!r}: {[t.preamble.name for t in self.p4info.tables]}"
        )

    def p4_action(self, name: str) -> p4info_pb2.Action:
        for a in self.p4info.actions:
            if a.preamble.name == name:
                return a
        raise AssertionError(
            f"no P4Info action {name!r}: {[a.preamble.name for a in self.p4info.actions]}"
        )

    def p4_action_by_id(self, action_id: int) -> p4info_pb2.Action:
        for a in self.p4info.actions:
            if a.preamble.id == action_id:
                return a
        raise AssertionError(f"no P4Info action with id {action_id:#x}")

    def p4_entity(self, kind: str, name: str) -> Any:
        """An entity of a repeated P4Info field (e.g. "registers") by preamble name."""
        for e in getattr(self.p4info, kind):
            if e.preamble.name == name:
                return e
        raise AssertionError(
            f"no P4Info {kind} {name!r}: {[e.preamble.name for e in getattr(self.p4info, kind)]}"
        )

    def p4_table_action_names(self, table: p4info_pb2.Table) -> list[str]:
        return [self.p4_action_by_id(ref.id).preamble.name for ref in table.action_refs]
