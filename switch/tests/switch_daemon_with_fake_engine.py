"""TEST DOUBLE launcher: runs the real daemon CLI over the in-memory fake engine."""

from __future__ import annotations

import sys

from ratelab_switch.daemon import main
from switch_fake_engine import FakeEngine

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], engine_factory=lambda _opts: FakeEngine()))
