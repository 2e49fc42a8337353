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
	host_stacks/pyhoststack/src/*.rs host_stacks/pyhoststack/src/*/*.rs host_stacks/pyhoststack/*.pyi)
.PHONY: hosts-pyhoststack
hosts-pyhoststack: $(STAMPS)/hosts-pyhoststack
$(STAMPS)/hosts-pyhoststack: $(STAMPS)/python $(HOSTS_PYHOSTSTACK_INPUTS) | rust-deps
	@echo "building the ratelab_hoststack extension (maturin, release)"
	VIRTUAL_ENV=$(CURDIR)/$(VENV) $(VENV)/bin/maturin develop --release -q \
	  -m host_stacks/pyhoststack/Cargo.toml
	@mkdir -p $(STAMPS) && touch $@

# CPU per data packet of the host stacks in memory, in one run: the sans-IO TCP machine
# (host_stacks/stack, crate ratelab-stack: sender alone, send + ACK processing, and both
# endpoints, per cc), the rate-based host in Rust alone, through the Python binding, and
# the Python state machines it replaced (from git history), with ratios against those.
BENCH_TARGETS += bench-host-stacks
.PHONY: bench-host-stacks
bench-host-stacks: deps
	@mkdir -p $(RESULTS)
	cargo build --quiet --release -p ratelab-stack --bin ratelab-stack-bench
	cargo build --quiet --release -p ratelab-rbcc-host --bin rbcc-host-bench
	PYTHONPATH=host_stacks $(PY) host_stacks/benchmarks/host_stacks_cpu.py \
	  --stack-bench target/release/ratelab-stack-bench \
	  --rbcc-bench target/release/rbcc-host-bench --out $(RESULTS)/host_stacks_cpu.txt
