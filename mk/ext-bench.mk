# Go extension functions (package pyext) against nanobind's nb::ndarray and
# gopy's slice path: per-call cost of sum(x), of a call with a keyword argument
# and of method calls on a class (nb::class_), one process, interleaved rounds.
# Builds its probes (bench/ext/) into bench/out/; results go there too.
# EXT_BENCH_ARGS: e.g. --rounds 101, --no-gopy, --sizes 1,1000.
.PHONY: bench-ext
bench-ext: venv
	$(PYTHON) -c 'import nanobind' 2>/dev/null || $(PYTHON) -m pip install -q nanobind
	$(PYTHON) bench/ext_bench.py $(EXT_BENCH_ARGS)

# Part of `make bench` (the ratios in the same run).
bench: bench-ext
