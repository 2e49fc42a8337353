# switch/: the BMv2-JSON engine (switch/engine, crate ratelab-engine).
# Its unit and integration tests run with `cargo test --workspace`.

BENCH_TARGETS += bench-engine

.PHONY: bench-engine
# Packets/s of the engine alone (basic IPv4 forwarding, 1,000 LPM routes).
bench-engine: rust-deps
	@mkdir -p $(RESULTS)
	cargo run --quiet --release -p ratelab-engine --bin ratelab-engine-bench -- $(RESULTS)/engine.txt

# Daemon forwarding between two veth pairs (needs root): CPU time per packet.
BENCH_TARGETS += bench-switch-daemon
.PHONY: bench-switch-daemon
bench-switch-daemon: deps
	@mkdir -p $(RESULTS)
	$(PY) switch/tests/bench_daemon.py --out $(RESULTS)/switch_daemon.json

# The Python binding (switch/pyengine, module ratelab_engine), built in release
# (it moves packets) and installed into the venv; the daemon (switch/ratelab_switch,
# `ratelab-switch`) and its tests (switch/tests) need it.
DEPS_TARGETS += switch-pyengine
SWITCH_PYENGINE_INPUTS := $(wildcard switch/pyengine/Cargo.toml switch/pyengine/pyproject.toml \
	switch/dataplane/Cargo.toml switch/dataplane/src/*.rs \
	switch/pyengine/src/*.rs switch/engine/Cargo.toml switch/engine/src/*.rs \
	switch/engine/src/*/*.rs)
.PHONY: switch-pyengine
switch-pyengine: $(STAMPS)/switch-pyengine
$(STAMPS)/switch-pyengine: $(STAMPS)/python $(SWITCH_PYENGINE_INPUTS) | rust-deps
	@echo "building the ratelab_engine extension (maturin, release)"
	VIRTUAL_ENV=$(CURDIR)/$(VENV) $(VENV)/bin/maturin develop --release -q \
	  -m switch/pyengine/Cargo.toml
	@mkdir -p $(STAMPS) && touch $@
