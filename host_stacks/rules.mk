# host_stacks/: the rate-based host stack (package ratelab_hosts). Its tests run
# with pytest (host_stacks/tests); the end-to-end ones need root, iproute2 and ethtool
# (in the top Makefile's shared APT_PACKAGES).

# Pacing accuracy of RBCC and UDP CBR over a veth pair (needs root).
BENCH_TARGETS += bench-hosts
.PHONY: bench-hosts
bench-hosts: deps
	@mkdir -p $(RESULTS)
	PYTHONPATH=host_stacks $(PY) host_stacks/benchmarks/pacing.py --out $(RESULTS)/host_stacks_pacing.json
