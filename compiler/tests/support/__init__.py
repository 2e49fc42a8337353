"""Helpers for the ratelab-p4c test suite: running the compiler, reading its outputs,
and evaluating compiled BMv2 JSON (expressions, actions, control flow, parser states)."""
