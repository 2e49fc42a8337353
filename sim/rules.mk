# sim/: the network harness (ratelab_sim: namespaces, veth pairs, switch
# processes, `make run`) and ratelab-net (ratelab_net: the router in Mininet,
# docs/NET.md). Their tests run with pytest (sim/tests); the ones that build
# networks need root, as CI has.

# Debian's Mininet (no Open vSwitch: the routers are ratelab-switch processes);
# iproute2, ethtool and iputils-ping are in the top Makefile's shared APT_PACKAGES.
APT_PACKAGES += mininet

.PHONY: net-dumbbell net-three-routers net-stacks sim-netsim sim-dumbbell

# ratelab-netsim, the simulator `ratelab-net run --backend sim` and
# ratelab_net.simulate run (release build; cargo rebuilds only what changed)
DEPS_TARGETS += sim-netsim
sim-netsim: rust-deps
	cargo build --quiet --release -p ratelab-netsim --bin ratelab-netsim

# bufferbloat on a dumbbell: small vs large FIFO queue vs RED, compared
net-dumbbell: deps
	$(VENV)/bin/ratelab-net run sim/examples/dumbbell.yaml

# RBCC flows beside Reno over three routers
net-three-routers: deps
	$(VENV)/bin/ratelab-net run sim/examples/three_routers.yaml

# the ratelab TCP stack (Reno, Cubic) beside the kernel's, and Vegas's queue
net-stacks: deps
	$(VENV)/bin/ratelab-net run sim/examples/stacks.yaml

# the same dumbbell file in ratelab's simulator: no root, a few seconds; the
# report, tables and plots of net-dumbbell (docs/NET.md "Simulation")
sim-dumbbell: deps
	$(VENV)/bin/ratelab-net run sim/examples/dumbbell.yaml --backend sim --out build/net/dumbbell-sim

# The simulator against Mininet (docs/NET.md "Simulation"): the dumbbell's
# variants and the three-router example, 3 Mininet runs (root, each holding
# /tmp/ratelab-mininet.lock) and 3 seeds each; the table goes to
# bench/results/sim_agreement.md, the runs to build/agreement/ (about 8 minutes)
BENCH_TARGETS += bench-sim-agreement
.PHONY: bench-sim-agreement
bench-sim-agreement: deps
	@mkdir -p $(RESULTS) && rm -rf build/agreement
	$(VENV)/bin/python -m ratelab_net.agreement --runs 3 --out build/agreement --report $(RESULTS)/sim_agreement.md

# ratelab-exp (sim/experiments/README.md): the studies as experiment files,
# run on an embedded Dask LocalCluster; report in build/exp/<name>/report.md.
# A rerun resumes an interrupted sweep (finished runs are kept).
.PHONY: exp-e1 exp-e3
# E1: 500 random scenarios x rbcc / reno / vegas
exp-e1: deps
	$(VENV)/bin/ratelab-exp run sim/experiments/e1.yaml
# E3: the UDP-background dumbbell, NewReno / NewReno+PRR / Cubic
exp-e3: deps
	$(VENV)/bin/ratelab-exp run sim/experiments/e3.yaml
# E2: IW3 / IW10 x initial RTO 3 s / 1 s on EDGE / HSPA / LTE, FIFO vs RED / REDok
# (20,800 runs: about 2,600 s of CPU, 22 min on two idle cores; --quick is in make test,
# sim/experiments/README.md "E2")
.PHONY: exp-e2
exp-e2: deps
	$(VENV)/bin/ratelab-exp run sim/experiments/e2.yaml
# E5: three mobile-broadband-like paths x bulk / on-off / streams, Reno / Cubic / Vegas
.PHONY: exp-e5
exp-e5: deps
	$(VENV)/bin/ratelab-exp run sim/experiments/e5.yaml
# E4: bufferbloat, small vs large FIFO vs two priority queues, Reno / Cubic, in the
# simulator; exp-e4-mininet: the same file in Mininet (root; kernel TCP; the runs
# one at a time, about 70 s each: 24 runs, half an hour)
.PHONY: exp-e4 exp-e4-mininet
exp-e4: deps
	$(VENV)/bin/ratelab-exp run sim/experiments/e4.yaml
exp-e4-mininet: deps
	$(VENV)/bin/ratelab-exp run sim/experiments/e4.yaml --backend mininet
# the full E1 timed from scratch (the issue's target: under 15 minutes on 2 cores)
BENCH_TARGETS += bench-exp-e1
.PHONY: bench-exp-e1
bench-exp-e1: deps
	@mkdir -p $(RESULTS) && rm -rf build/exp/e1-bench
	start=$$(date +%s); $(VENV)/bin/ratelab-exp run sim/experiments/e1.yaml --out build/exp/e1-bench; \
	echo "E1 full size (500 scenarios x 3 transports): $$(( $$(date +%s) - start )) s on $$(nproc) cores" \
	  | tee $(RESULTS)/exp-e1.txt
