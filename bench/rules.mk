# bench/: comparisons across components. bench/ns3: ratelab-stack's TCP against
# ns-3's models of the same algorithms (Debian's ns-3 3.37) on one simulated dumbbell
# (bench/ns3/README.md). libns3-dev brings g++; its pkg-config files name
# libgsl.so and libsqlite3.so, which only the -dev packages install.
APT_PACKAGES += libns3-dev libgsl-dev libsqlite3-dev pkg-config

NS3_MODULES := ns3-core ns3-network ns3-internet ns3-point-to-point ns3-applications \
	ns3-traffic-control
NS3_DUMBBELL := build/ns3/stack_dumbbell
NS3_E3 := build/ns3/e3_dumbbell
NETSIM_ROUTER_DIR := build/netsim

# Rebuilt only when its source changes (apt-deps is order-only: checked, never a reason
# to rebuild).
$(NS3_DUMBBELL): bench/ns3/stack_dumbbell.cc | apt-deps
	@mkdir -p $(@D)
	g++ -std=c++17 -O2 -Wall -Wextra -o $@ $< $$(pkg-config --cflags --libs $(NS3_MODULES))
$(NS3_E3): bench/ns3/e3_dumbbell.cc | apt-deps
	@mkdir -p $(@D)
	g++ -std=c++17 -O2 -Wall -Wextra -o $@ $< $$(pkg-config --cflags --libs $(NS3_MODULES))

# Each algorithm in both stacks, 30 simulated seconds: a table and a figure of the cwnd
# traces (bench/results/ns3_stacks.md and .png; the figure in the docs is a copy).
BENCH_TARGETS += bench-ns3-stacks
.PHONY: bench-ns3-stacks
bench-ns3-stacks: $(NS3_DUMBBELL) python-deps rust-deps
	@mkdir -p $(RESULTS)
	cargo build --quiet --release -p ratelab-stack --bin ratelab-stack-dumbbell
	$(PY) bench/ns3/compare.py --ns3 $(NS3_DUMBBELL) \
	  --ratelab target/release/ratelab-stack-dumbbell --out $(RESULTS)/ns3_stacks

# ratelab-netsim beside ns-3 (bench/ns3/README.md, "E3"). bench-netsim-e3: the E3
# dumbbell's side-by-side tables, classic and PRR recovery (bench/results/netsim_e3.md,
# netsim_e3_prr.md). bench-netsim: delivered
# packets per wall-clock second of both on that dumbbell and their ratio, an E1-sized
# run's wall-clock time on one core, memory at 30 and 300 s (bench/results/netsim.md).
BENCH_TARGETS += bench-netsim-e3 bench-netsim
.PHONY: bench-netsim-e3 bench-netsim netsim-router
netsim-router: python-deps
	@mkdir -p $(NETSIM_ROUTER_DIR)
	$(VENV)/bin/ratelab-p4c -o $(NETSIM_ROUTER_DIR) p4src/router.p4
bench-netsim-e3: $(NS3_E3) netsim-router rust-deps
	@mkdir -p $(RESULTS)
	cargo build --quiet --release -p ratelab-netsim --bin ratelab-netsim
	$(PY) bench/ns3/compare_e3.py --ns3 $(NS3_E3) --netsim target/release/ratelab-netsim \
	  --router $(NETSIM_ROUTER_DIR)/router.json --out $(RESULTS)/netsim_e3
	$(PY) bench/ns3/compare_e3.py --ns3 $(NS3_E3) --netsim target/release/ratelab-netsim \
	  --router $(NETSIM_ROUTER_DIR)/router.json --out $(RESULTS)/netsim_e3_prr --recovery prr
bench-netsim: $(NS3_E3) netsim-router rust-deps
	@mkdir -p $(RESULTS)
	cargo build --quiet --release -p ratelab-netsim --bin ratelab-netsim --bin ratelab-netsim-time
	$(PY) bench/ns3/bench_netsim.py --ns3 $(NS3_E3) --netsim-dir target/release \
	  --router $(NETSIM_ROUTER_DIR)/router.json --out $(RESULTS)/netsim.md
