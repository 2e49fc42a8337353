"""`python -m ratelab_p4c.demo`: compile every program in p4src/ (or the tutorial example
when there is none) the way `make run` shows it, and print what each one contains.

Outputs go to build/p4/<program>/<program>.json and <program>.p4info.txtpb.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from . import backend, frontend, p4info  # noqa: F401 - imported up front so timings exclude it
from .cli import Options, compile_all, write_atomically
from .errors import CompileError

_REPO = Path(__file__).resolve().parents[2]


def programs(root: Path) -> list[Path]:
    """The programs to compile: p4src/*.p4, else the compiler's tutorial example."""
    found = sorted((root / "p4src").glob("*.p4"))
    if found:
        return found
    example = root / "compiler" / "tests" / "programs" / "tutorials" / "basic.p4"
    return [example] if example.is_file() else []


def _rel(p: Path | str, root: Path) -> str:
    try:
        return str(Path(p).resolve().relative_to(root))
    except ValueError:
        return str(p)


def compile_one(src: Path, root: Path) -> tuple[bool, list[str]]:
    """Compile one program; returns (ok, report lines)."""
    name = src.stem
    out_dir = root / "build" / "p4" / name
    p4info_path = str(out_dir / f"{name}.p4info.txtpb")
    opts = Options(str(src), str(out_dir), p4runtime_files=[(p4info_path, None)])
    opts.include_dirs = [str(src.parent / "include"), str(src.parent)]
    t0 = time.perf_counter()
    try:
        comp = compile_all(opts)
        write_atomically(comp.outputs)
    except CompileError as e:
        return False, [e.format()]
    ms = 1000 * (time.perf_counter() - t0)
    result, info, outputs = comp.result, comp.p4info, comp.outputs
    lines = [
        f"  compiled in {ms:.0f} ms (front end {comp.frontend_ms:.0f} ms, "
        f"back end {comp.backend_ms:.0f} ms)"
    ]
    table_ids = {t.preamble.name: t.preamble.id for t in info.tables}
    action_names = {a.preamble.id: a.preamble.name for a in info.actions}
    for t in info.tables:
        keys = ", ".join(f"{mf.name}:{_match_name(mf)}" for mf in t.match_fields) or "(no key)"
        acts = ", ".join(action_names.get(r.id, hex(r.id)) for r in t.action_refs)
        lines.append(f"  table {t.preamble.name} [0x{table_ids[t.preamble.name]:08x}]")
        lines.append(f"      key {keys}; size {t.size}")
        lines.append(f"      actions {acts}")
    for kind, items in (
        ("counter", info.counters),
        ("direct counter", info.direct_counters),
        ("meter", info.meters),
        ("direct meter", info.direct_meters),
        ("register", info.registers),
    ):
        for it in items:
            size = getattr(it, "size", 0)
            extra = f" size {size}" if size else ""
            if kind == "register":
                extra += f" width {it.type_spec.bitstring.bit.bitwidth}"
            lines.append(f"  {kind} {it.preamble.name} [0x{it.preamble.id:08x}]{extra}")
    for d in info.digests:
        lines.append(f"  digest {d.preamble.name} [0x{d.preamble.id:08x}]")
    j = result.json
    n_tables = sum(len(p["tables"]) for p in j["pipelines"])
    lines.append(
        f"  BMv2 JSON: {len(j['actions'])} actions, {n_tables} tables (incl. synthesized), "
        f"{sum(len(p['conditionals']) for p in j['pipelines'])} conditionals, "
        f"{len(j['parsers'][0]['parse_states'])} parse states"
    )
    for path in outputs:
        lines.append(f"  wrote {_rel(path, root)}")
    return True, lines


def _match_name(mf: object) -> str:
    from .p4info import p4info_pb2

    mt = getattr(mf, "match_type", 0)
    if mt:
        return p4info_pb2.MatchField.MatchType.Name(mt).lower()
    return getattr(mf, "other_match_type", "?")


def main() -> int:
    root = _REPO if (_REPO / "compiler").is_dir() else Path.cwd()
    progs = programs(root)
    if not progs:
        print("ratelab-p4c demo: no P4 programs found (p4src/*.p4)")
        return 1
    failures = 0
    for src in progs:
        print(f"[ratelab-p4c] compiling {_rel(src, root)} ...", flush=True)
        try:
            ok, lines = compile_one(src, root)
        except Exception as e:  # the demo reports and goes on with the next program
            ok, lines = False, [f"internal compiler error: {type(e).__name__}: {e}"]
        for line in lines:
            print(line)
        if not ok:
            failures += 1
            print(f"[ratelab-p4c] FAILED: {_rel(src, root)}")
    print(
        f"[ratelab-p4c] {len(progs) - failures} of {len(progs)} program(s) compiled"
        + (f", {failures} failed" if failures else "")
    )
    return 1 if failures else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
