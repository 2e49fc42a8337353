"""Compile test programs once per session and cache what they produced."""

from __future__ import annotations

from pathlib import Path

from .program import Compiled
from .runner import PROGRAMS_DIR, CompileResult, compile_file


class Builder:
    """Compiles programs under tests/programs on demand and caches the results."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._results: dict[tuple[str, tuple[str, ...]], CompileResult] = {}
        self._loaded: dict[tuple[str, tuple[str, ...]], Compiled] = {}

    def result(self, rel: str, *extra: str) -> CompileResult:
        key = (rel, extra)
        if key not in self._results:
            outdir = (
                self.root
                / f"{rel.replace('/', '__')}{'_' + str(len(self._results)) if extra else ''}"
            )
            self._results[key] = compile_file(PROGRAMS_DIR / rel, outdir, extra)
        return self._results[key]

    def __call__(self, rel: str, *extra: str) -> Compiled:
        key = (rel, extra)
        if key not in self._loaded:
            self._loaded[key] = Compiled.load(self.result(rel, *extra))
        return self._loaded[key]
