"""Write the vector files from the model, or check that the files match it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ratelab_model.vectors.cases import CASES
from ratelab_model.vectors.runner import case_to_json, expected_results
from ratelab_model.vectors.schema import VectorError, load_file

DEFAULT_DIR = Path(__file__).resolve().parents[3] / "tests" / "vectors"


def render(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=1) + "\n"


def generate() -> dict[str, str]:
    """File name -> file text for every case."""
    texts = {}
    for build in CASES:
        case = build()
        texts[f"{case.name}.json"] = render(case_to_json(case))
    return texts


def first_difference(a: Any, b: Any, path: str = "$") -> str:
    """The JSON path where `a` (the file) first differs from `b` (the model)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b or a[key] != b[key]:
                return first_difference(a.get(key), b.get(key), f"{path}.{key}")
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path} (length {len(a)}, model has {len(b)})"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return first_difference(x, y, f"{path}[{i}]")
    return f"{path} (file {json.dumps(a)[:60]}, model {json.dumps(b)[:60]})"


def write(directory: Path = DEFAULT_DIR) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in generate().items():
        path = directory / name
        path.write_text(text)
        written.append(path)
    return written


def check(directory: Path = DEFAULT_DIR) -> list[str]:
    """Problems found, one line each; empty when every file matches the model.

    Two checks: each file equals what the generator writes now, and the model
    replayed on the file's own inputs (read through the schema reader, as any
    consumer would) gives the file's expected results.
    """
    problems = []
    texts = generate()
    on_disk = {p.name for p in directory.glob("*.json")}
    for name in sorted(on_disk - set(texts)):
        problems.append(f"{directory / name}: no generator case of that name")
    for name, text in texts.items():
        path = directory / name
        if name not in on_disk:
            problems.append(f"{path}: missing (run with --write)")
            continue
        try:
            case, data = load_file(path)
        except VectorError as err:
            problems.append(str(err))
            continue
        replayed = expected_results(case)
        if data.get("expected") != replayed:
            where = first_difference(data.get("expected"), replayed, "$.expected")
            problems.append(f"{path}: expected results differ from the model at {where}")
        elif path.read_text() != text:
            where = first_difference(data, json.loads(text))
            problems.append(f"{path}: differs from the generator at {where}")
    return problems
