# ratelab's front door. Every target installs what it is missing first, so
# `make run` and `make test` work on a fresh Debian machine as root.
#
# Components add to this file through their own <folder>/rules.mk:
#   APT_PACKAGES   Debian packages they need
#   TEST_TARGETS   targets `make test` runs after the shared Python and Rust tests
#   TEST_ALL_TARGETS  extra targets only `make test-all` runs (long variants)
#   LINT_TARGETS   targets `make lint` runs
#   BENCH_TARGETS  targets `make bench` runs (each writes under bench/results/)
#   DEPS_TARGETS   extra install steps (built extensions, tools)
# A Debian package is named once: packages that several components need are in
# the shared list below (`make lint` fails on a package named twice).

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

VENV := .venv
PY := $(VENV)/bin/python
STAMPS := .stamps
RESULTS := bench/results
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)

# network namespaces, veth pairs and their settings, for the tests and runs of
# host_stacks/, sim/ and ptf_tests/
APT_PACKAGES := iproute2 ethtool iputils-ping
TEST_TARGETS :=
TEST_ALL_TARGETS :=
LINT_TARGETS :=
BENCH_TARGETS :=
DEPS_TARGETS :=

include $(sort $(wildcard */rules.mk))

.PHONY: help run test test-all lint lint-apt-packages bench deps apt-deps rust-deps python-deps \
	test-python test-rust clean

help:
	@echo "make run     install what is missing, then run the main job and print its report"
	@echo "make test    install what is missing, then lint and run every test (HDL testbenches"
	@echo "             at their default parameters)"
	@echo "make test-all  make test plus the HDL parameter sweeps and other long variants (CI)"
	@echo "make bench   run the benchmarks; results go to $(RESULTS)/"
	@echo "make fuzz    run the property and fuzz tests long (engine, compiler, P4Runtime, controller)"
	@echo "make lint    ruff, rustfmt, clippy (and the component linters)"
	@echo "make clean   remove build outputs (keeps .venv)"

# ---------------------------------------------------------------- installing
deps: apt-deps rust-deps python-deps $(DEPS_TARGETS)

# Checked every time (a dpkg query per package is fast), installed only if missing.
apt-deps:
	@# --no-install-recommends: Mininet recommends Open vSwitch, which ratelab does not use
	@missing=""; for p in $(sort $(APT_PACKAGES)); do \
	  dpkg-query -W -f='$${Status}' "$$p" 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

rust-deps:
	@command -v cargo >/dev/null || { echo "installing Rust from Debian (cargo not found)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cargo rustfmt rust-clippy >/dev/null; }

python-deps: $(STAMPS)/python

$(STAMPS)/python: requirements.lock pyproject.toml
	@if [ ! -x $(PY) ]; then \
	  python3 -m venv $(VENV) 2>/dev/null || { \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null; \
	    rm -rf $(VENV); python3 -m venv $(VENV); }; \
	fi
	@echo "installing Python packages into $(VENV) (pinned in requirements.lock)"
	@$(PY) -m pip install -q --disable-pip-version-check -r requirements.lock
	@$(PY) -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e .
	@mkdir -p $(STAMPS) && touch $@

# ---------------------------------------------------------------- the two commands
# The router on ratelab-switch with RBCC and UDP traffic between namespaces (needs root).
# RUN_ARGS passes options, e.g. RUN_ARGS="--set ports.3.utilisation=0.6 --duration 8".
RUN_ARGS ?=
run: deps
	@$(PY) -m ratelab_sim.router_run $(RUN_ARGS)

test: deps lint test-rust test-python $(TEST_TARGETS)
	@echo "make test: all checks passed"

# Everything `make test` runs, with TEST_ALL=1 (seen by every prerequisite, e.g. the
# HDL testbenches then run every parameter set), then TEST_ALL_TARGETS. CI runs this.
test-all: TEST_ALL := 1
test-all: test $(TEST_ALL_TARGETS)
	@echo "make test-all: all checks passed"

test-python: deps
	$(VENV)/bin/pytest

test-rust: rust-deps
	cargo test --workspace --quiet

lint: deps lint-apt-packages $(LINT_TARGETS)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	cargo fmt --all --check
	cargo clippy --workspace --all-targets --quiet -- -D warnings

lint-apt-packages:
	@dups="$$(printf '%s\n' $(APT_PACKAGES) | sort | uniq -d | paste -sd' ')"; \
	if [ -n "$$dups" ]; then \
	  echo "Debian package(s) named more than once in Makefile and */rules.mk: $$dups"; exit 1; \
	fi

bench: deps $(BENCH_TARGETS)
	@echo "benchmark results are in $(RESULTS)/"

clean:
	rm -rf target build $(STAMPS) $(RESULTS)
	find . -name __pycache__ -prune -exec rm -rf {} +
