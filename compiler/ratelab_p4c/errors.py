"""Source locations and compile errors with p4c-style formatting.

A CompileError formats as

    file:line:col: error: message
    <the offending source line>
          ^

Locations always refer to the original file and line (the preprocessor's line markers
are honoured by the lexer), with 1-based line and column numbers.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SourceLocation:
    """A position in an original source file: file path, 1-based line and column."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


class CompileError(Exception):
    """An error in the compiled program (or its preprocessing).  location may be None for
    errors not tied to a place in the source (e.g. a missing input file)."""

    def __init__(self, message: str, location: SourceLocation | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.location = location

    def __str__(self) -> str:
        if self.location is None:
            return f"error: {self.message}"
        return f"{self.location}: error: {self.message}"

    def format(self, source_lines: dict[str, list[str]] | None = None) -> str:
        """The full diagnostic: header line, source line and caret (when the file can be
        read).  source_lines optionally maps file path -> lines (avoids re-reading)."""
        return format_error(self, source_lines)


def _read_line(path: str, line: int, cache: dict[str, list[str]] | None) -> str | None:
    lines: list[str] | None = None
    if cache is not None:
        lines = cache.get(path)
    if lines is None:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                lines = f.read().splitlines()
        except OSError:
            return None
    if 1 <= line <= len(lines):
        return lines[line - 1]
    return None


def format_error(err: CompileError, source_lines: dict[str, list[str]] | None = None) -> str:
    """Format `file:line:col: error: message`, then the source line and a caret line."""
    head = str(err)
    loc = err.location
    if loc is None:
        return head
    text = _read_line(loc.file, loc.line, source_lines)
    if text is None:
        return head
    # Keep tabs in the caret line so the caret lines up under tab-indented source.
    prefix = "".join(ch if ch == "\t" else " " for ch in text[: max(loc.col - 1, 0)])
    return f"{head}\n{text}\n{prefix}^"
