"""ratelab-p4c: a P4_16 (v1model) compiler for the BMv2 target, compatible with p4c."""

__version__ = "0.1.0"
