"""Front end entry point: preprocess, lex, parse and type-check a P4_16 program."""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable
from typing import TypeVar

from . import ast
from .errors import CompileError
from .lexer import tokenize
from .parser import Parser
from .preprocess import preprocess
from .typecheck import Checker

R = TypeVar("R")

# Deeply nested expressions recurse through the parser and checker.
_RECURSION_LIMIT = 20000


def _deep(fn: Callable[[], R]) -> R:
    """Run a front-end phase with room for deep recursion and without the cyclic
    garbage collector (the AST is kept alive anyway; collection passes over the growing
    tree cost about a third of the front end's time)."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, _RECURSION_LIMIT))
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return fn()
    except RecursionError:
        raise CompileError("program is nested too deeply to compile") from None
    finally:
        sys.setrecursionlimit(old)
        if gc_was_enabled:
            gc.enable()


def check_declarations(decls: list[ast.Node]) -> ast.Program:
    """Type-check parsed top-level declarations and build the Program root."""
    checker = Checker()
    checker.check_program(decls)
    return ast.Program(
        loc=decls[0].loc if decls else None,
        declarations=decls,
        main=checker.main,
        errors=checker.errors,
        match_kinds=checker.match_kinds,
        warnings=checker.warnings,
    )


def parse_and_check_text(text: str, file: str = "<input>") -> ast.Program:
    """Lex, parse and check already-preprocessed text (used by tests)."""
    return _deep(lambda: check_declarations(Parser(tokenize(text, file)).parse_program()))


def parse_and_check(
    path: str,
    include_dirs: list[str] | None = None,
    defines: dict[str, str | None] | None = None,
) -> ast.Program:
    """Compile the front half of `path`: the typed, resolved AST root.

    include_dirs: -I directories (searched before the compiler's p4include/);
    defines: -D NAME[=VALUE] macros (value None means 1).
    Raises CompileError (with the original file/line) on any error.
    """

    def run() -> ast.Program:
        pp = preprocess(path, include_dirs or [], defines or {})
        program = check_declarations(Parser(tokenize(pp.text, path)).parse_program())
        program.source_files = pp.files
        return program

    return _deep(run)
