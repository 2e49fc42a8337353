# host_stacks/: the rate-based host stack (package ratelab_hosts, its Rust core
# host_stacks/rbcc and binding host_stacks/pyhoststack) and the sans-IO TCP/UDP crate
# host_stacks/stack. The Python tests run with pytest (host_stacks/tests; the end-to-end
# ones need root, iproute2 and ethtool, in the top Makefile's shared APT_PACKAGES), the
# crates' with cargo test.

# Pacing accuracy of RBCC and UDP CBR over a veth pair (needs root).
BENCH_TARGETS += bench-hosts
.PHONY: bench-hosts
bench-hosts: deps
	@mkdir -p $(RESULTS)
	PYTHONPATH=host_stacks $(PY) host_stacks/benchmarks/pacing.py --out $(RESULTS)/host_stacks_pacing.json

# The rate-based host in Rust (host_stacks/rbcc, crate ratelab-rbcc-host) and its
# Python binding (host_stacks/pyhoststack, module ratelab_hoststack), built in release
# and installed into the venv: ratelab_hosts' RBCC sender, receiver and pacer are it.
DEPS_TARGETS += hosts-pyhoststack
HOSTS_PYHOSTSTACK_INPUTS := $(wildcard host_stacks/rbcc/Cargo.toml host_stacks/rbcc/src/*.rs \
	host_stacks/stack/Cargo.toml host_stacks/stack/src/*.rs host_stacks/stack/src/*/*.rs \
	host_stacks/pyhoststack/Cargo.toml host_stacks/pyhoststack/pyproject.toml \
	host_stacks/pyhoststack/src/*.rs host_stacks/pyhoststack/*.pyi)
.PHONY: hosts-pyhoststack
hosts-pyhoststack: $(STAMPS)/hosts-pyhoststack
$(STAMPS)/hosts-pyhoststack: $(STAMPS)/python $(HOSTS_PYHOSTSTACK_INPUTS) | rust-deps
	@echo "building the ratelab_hoststack extension (maturin, release)"
	VIRTUAL_ENV=$(CURDIR)/$(VENV) $(VENV)/bin/maturin develop --release -q \
	  -m host_stacks/pyhoststack/Cargo.toml
	@mkdir -p $(STAMPS) && touch $@

# CPU per data packet of the rate-based host, in memory: the Rust crate alone, the
# Python binding, and the Python state machines it replaced (run from git history).
BENCH_TARGETS += bench-rbcc-host
.PHONY: bench-rbcc-host
bench-rbcc-host: deps
	@mkdir -p $(RESULTS)
	cargo build --quiet --release -p ratelab-rbcc-host --bin rbcc-host-bench
	PYTHONPATH=host_stacks $(PY) host_stacks/benchmarks/rbcc_host_cpu.py --all \
	  --native target/release/rbcc-host-bench --out $(RESULTS)/hosts_rbcc.txt

# CPU per data packet of the sans-IO TCP machine (host_stacks/stack, crate
# ratelab-stack): send + receive + ACK processing through two endpoints in memory.
BENCH_TARGETS += bench-stack
.PHONY: bench-stack
bench-stack: rust-deps
	@mkdir -p $(RESULTS)
	cargo run --quiet --release -p ratelab-stack --bin ratelab-stack-bench -- \
	  $(RESULTS)/stack.txt 2000000
