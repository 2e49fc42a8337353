# ptf_tests/: PTF packet tests of router.p4 on a live P4Runtime switch, plus the
# network harness's own tests (sim/tests). docs/PTF.md explains both.
#   make ptf                         the suite against ratelab-switch
#   make ptf PTF_TARGET=bmv2         against BMv2's simple_switch_grpc (on PATH)
#   make ptf PTF_TESTS="rbcc vectors.Vector_fwd_lpm"   a subset (ptf test names)
# Needs root (network namespaces and veth pairs), like CI.

# ethtool, iproute2 and iputils-ping: in the top Makefile's shared APT_PACKAGES
TEST_TARGETS += test-ptf

PTF_TARGET ?= ratelab
PTF_TESTS ?=

.PHONY: ptf test-ptf test-sim-harness

ptf test-ptf: deps
	$(PY) ptf_tests/run.py --target $(PTF_TARGET) $(PTF_TESTS)

# the harness's unit tests alone (`make test-python` collects them too)
test-sim-harness: deps
	PYTHONPATH=sim $(VENV)/bin/pytest sim/tests
