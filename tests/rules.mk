# `make fuzz`: the property and fuzz tests, long. `make test` runs the same tests
# briefly (2 proptest cases per engine program, 16 per fuzz.rs property, 25
# hypothesis examples per test);
# this target runs FUZZ_ENGINE_CASES cases per program of the engine's corpus and
# FUZZ_CASES examples per Python test, and prints how many ran and how long each took
# (about 7 minutes on the 2-core development machine; with FUZZ_ENGINE_CASES=128
# FUZZ_CASES=2000, 12 minutes).
#   engine      switch/engine/tests/properties.rs   (proptest, PROPTEST_CASES; FUZZ_ENGINE_CASES)
#               switch/engine/tests/fuzz.rs         (proptest; 8 x FUZZ_ENGINE_CASES)
#   compiler    compiler/tests/test_fuzz_compiler.py
#   P4Runtime   switch/tests/test_switch_fuzz_writes.py, test_switch_fuzz_engine_writes.py
#   controller  control_plane/tests/test_ctl_fuzz_config.py
# (hypothesis profile "fuzz" of conftest.py, RATELAB_FUZZ_CASES)
FUZZ_ENGINE_CASES ?= 64
FUZZ_CASES ?= 1000
FUZZ_PYTHON_TESTS := compiler/tests/test_fuzz_compiler.py switch/tests/test_switch_fuzz_writes.py \
	switch/tests/test_switch_fuzz_engine_writes.py control_plane/tests/test_ctl_fuzz_config.py

.PHONY: fuzz
fuzz: deps
	PROPTEST_CASES=$(FUZZ_ENGINE_CASES) cargo test --quiet -p ratelab-engine --test properties \
	  -- --nocapture
	PROPTEST_CASES=$$(( $(FUZZ_ENGINE_CASES) * 8 )) cargo test --quiet -p ratelab-engine --test fuzz
	RATELAB_FUZZ_PROFILE=fuzz RATELAB_FUZZ_CASES=$(FUZZ_CASES) $(VENV)/bin/pytest \
	  --hypothesis-show-statistics $(FUZZ_PYTHON_TESTS)
	@echo "make fuzz: no defect found"
