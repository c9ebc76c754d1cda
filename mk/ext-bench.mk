# Go extension functions (package pyext) against PyO3 (rust-numpy, built with
# maturin), nanobind's nb::ndarray and gopy's slice path: per-call cost of
# sum(x), of scalar calls, keyword arguments, bytes both ways and method calls
# on a class, one process, interleaved rounds, with the cgo floor.
# Builds its probes (bench/ext/) into bench/out/ when their sources changed
# (PyO3's cargo cache: bench/ext/pyo3bench/target); results go there too.
# Without cargo the PyO3 column is skipped with one sentence saying why.
# EXT_BENCH_ARGS: e.g. --rounds 101, --no-gopy, --sizes 1,1000.
.PHONY: bench-ext
bench-ext: venv
	$(PYTHON) -c 'import nanobind' 2>/dev/null || $(PYTHON) -m pip install -q nanobind
	if command -v cargo >/dev/null; then $(PYTHON) -c 'import maturin' 2>/dev/null || $(PYTHON) -m pip install -q maturin \
		|| echo "maturin did not install: the PyO3 column will be skipped"; fi
	$(PYTHON) bench/ext_bench.py $(EXT_BENCH_ARGS)

# Part of `make bench` (the ratios in the same run).
bench: bench-ext
