"""Shared test vectors: the case generator, the file format and the --check/--write tool."""
