# Compiler: `make bench` times ratelab-p4c on the router and a 600-line program.
BENCH_TARGETS += bench-compiler

.PHONY: bench-compiler
bench-compiler: deps
	@mkdir -p $(RESULTS)
	$(PY) compiler/bench/compile_time.py --out $(RESULTS)/compiler.txt
