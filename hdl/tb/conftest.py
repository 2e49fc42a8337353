"""pytest setup for the cocotb testbenches: makes hdlsim importable, points at Verilator."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hdlsim import setup_verilator_env

setup_verilator_env()
