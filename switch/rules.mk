# switch/: the BMv2-JSON engine (switch/engine, crate ratelab-engine).
# Its unit and integration tests run with `cargo test --workspace`.

# The engine compiles each program's controls with LLVM 14 (crate inkwell,
# linked against Debian's shared libLLVM-14).
APT_PACKAGES += llvm-14-dev

BENCH_TARGETS += bench-engine

.PHONY: bench-engine
# Packets/s of the engine alone: basic IPv4 forwarding (1,000 and 10,000 LPM routes)
# and router.p4 as ratelab-p4c compiles it (1,000 routes, 8 FIFO ports).
BENCH_ROUTER_DIR := build/bench
bench-engine: rust-deps deps
	@mkdir -p $(RESULTS) $(BENCH_ROUTER_DIR)
	$(VENV)/bin/ratelab-p4c --target bmv2 --arch v1model -o $(BENCH_ROUTER_DIR) p4src/router.p4
	cargo run --quiet --release -p ratelab-engine --bin ratelab-engine-bench -- \
	  $(RESULTS)/engine.txt 3000000 $(BENCH_ROUTER_DIR)/router.json

# Daemon forwarding between two veth pairs (needs root): 64- and 1500-byte frames
# offered by ratelab-pktgen (switch/dataplane), packets/s forwarded and loss.
BENCH_TARGETS += bench-switch-daemon
.PHONY: bench-switch-daemon
bench-switch-daemon: deps
	@mkdir -p $(RESULTS)
	cargo build --quiet --release -p ratelab-dataplane --bin ratelab-pktgen
	$(PY) switch/tests/bench_daemon.py --pktgen target/release/ratelab-pktgen \
	  --out $(RESULTS)/switch_daemon.json

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

# Link emulation through the daemon (needs root): per (rate, delay) point on a veth
# port, configured vs measured one-way delay and achieved rate.
BENCH_TARGETS += bench-switch-link
.PHONY: bench-switch-link
bench-switch-link: deps
	@mkdir -p $(RESULTS)
	cargo build --quiet --release -p ratelab-dataplane --bin ratelab-pktgen
	$(PY) switch/tests/bench_link.py --pktgen target/release/ratelab-pktgen \
	  --out $(RESULTS)/switch_link.json

# Soak (needs root): the daemon running router.p4 forwards flat out for SOAK_SECONDS
# while routes are written, counters, registers and tables read, and a controller
# reconnects every 3 s; RSS slope, forwarded rate over time, and a failure if an
# entry is lost or a stream left open. `make bench-switch-soak SOAK_SECONDS=60` for a short one.
SOAK_SECONDS ?= 600
BENCH_TARGETS += bench-switch-soak
.PHONY: bench-switch-soak
bench-switch-soak: deps
	@mkdir -p $(RESULTS)
	cargo build --quiet --release -p ratelab-dataplane --bin ratelab-pktgen
	$(PY) switch/tests/bench_soak.py --pktgen target/release/ratelab-pktgen \
	  --duration $(SOAK_SECONDS) --out $(RESULTS)/switch_soak.json
