"""Hypothesis profiles for the property and fuzz tests (test_fuzz_*.py).

`quick` (the default, `make test`) runs RATELAB_QUICK_CASES examples per test
(default 25); `fuzz` (`make fuzz`)
runs RATELAB_FUZZ_CASES of them (default 2000). Choose with RATELAB_FUZZ_PROFILE or
pytest's --hypothesis-profile.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

# No example database: a failure is reproduced from the seed hypothesis prints, and
# every defect found is kept as an explicit @example. No deadline: a timing is no test.
settings.register_profile("_ratelab", deadline=None, database=None, print_blob=True)
settings.register_profile(
    "quick",
    settings.get_profile("_ratelab"),
    max_examples=int(os.environ.get("RATELAB_QUICK_CASES", "25")),
)
settings.register_profile(
    "fuzz",
    settings.get_profile("_ratelab"),
    max_examples=int(os.environ.get("RATELAB_FUZZ_CASES", "2000")),
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("RATELAB_FUZZ_PROFILE", "quick"))
