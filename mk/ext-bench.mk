# Go extension functions (package pyext) against PyO3 (rust-numpy, built with
# maturin), nanobind's nb::ndarray and gopy's slice path: per-call cost of
# sum(x), of scalar calls, keyword arguments, bytes both ways and method calls
# on a class, one process, interleaved rounds, with the cgo floor.
# Builds its probes (bench/ext/) into bench/out/ when their sources changed
# (PyO3's cargo cache: bench/ext/pyo3bench/target); results go there too.
# Without cargo the PyO3 column is skipped with one sentence saying why.
# EXT_BENCH_ARGS: e.g. --rounds 101, --no-gopy, --sizes 1,1000; ABI3_BENCH_ARGS: e.g. --rounds 11.
.PHONY: bench-ext
bench-ext: venv
	$(PYTHON) -c 'import nanobind' 2>/dev/null || $(PYTHON) -m pip install -q nanobind
	if command -v cargo >/dev/null; then $(PYTHON) -c 'import maturin' 2>/dev/null || $(PYTHON) -m pip install -q maturin \
		|| echo "maturin did not install: the PyO3 column will be skipped"; fi
	$(PYTHON) bench/ext_bench.py $(EXT_BENCH_ARGS)
	@# The same extension built for the stable ABI (abi3) against its version-specific build, on
	@# CPython 3.12 (bench/abi3_bench.py: each in a child of its own, its venv in bench/out/).
	@py=$$(bash tools/find_python.sh 3.12); if [ -z "$$py" ]; then echo "no CPython 3.12 here: the abi3 comparison is skipped"; \
	else [ -x bench/out/abi3-venv/bin/python ] || { $$py -m venv bench/out/abi3-venv && bench/out/abi3-venv/bin/pip install -q numpy; } \
	  && bench/out/abi3-venv/bin/python bench/abi3_bench.py $(ABI3_BENCH_ARGS); fi

# Part of `make bench` (the ratios in the same run).
bench: bench-ext
