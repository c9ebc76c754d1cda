# godlpack build, test and benchmark entry points.
# Tests and benchmarks run in .venv, made on first use with everything they need.
BASEPYTHON ?= python3
VENV ?= .venv
PYTHON := $(VENV)/bin/python
PYINCLUDE := $(shell $(BASEPYTHON) -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
PYLIBDIR := $(shell $(BASEPYTHON) -c 'import sysconfig; print(sysconfig.get_config_var("LIBDIR") or "")')
EXT_SUFFIX := $(shell $(BASEPYTHON) -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
# Listed once, in pyproject.toml (extra `dev`: test, peers, bench).
TEST_DEPS := $(shell $(BASEPYTHON) tools/extras.py dev)
# cgo finds Python.h through CGO_CFLAGS for the Go tests of packages that
# embed CPython; extensions are built by tools/godlpack_build.py.
export CGO_CFLAGS := -I$(PYINCLUDE) -O2
export GOFLAGS := -buildvcs=false
EXT := python/godlpack/_godlpack$(EXT_SUFFIX)
# The project's own sources (git's list; a source tree without .git, e.g. the sdist, is searched).
GOFILES := $(shell git ls-files '*.go' '*.c' '*.h' 2>/dev/null || find . -path ./.venv -prune -o \( -name '*.go' -o -name '*.c' -o -name '*.h' \) -print)

.PHONY: all ext probe venv test gotest pytest lint bench soak clean generate

all: ext

venv: $(VENV)/.deps
$(VENV)/.deps:
	$(BASEPYTHON) -m venv $(VENV)
	$(PYTHON) -m pip install -q --upgrade pip
	$(PYTHON) -m pip install -q $(TEST_DEPS)
	touch $@

# The extension module, built in place so tests run against the source tree.
ext: $(EXT)
$(EXT): $(GOFILES) go.mod
	$(BASEPYTHON) tools/godlpack_build.py $(EXT) ./module

# The conformance checker's counting probes: a small C extension of their own
# (test scaffolding, kept out of the production module), built in place.
PROBE := python/godlpack/_probe$(EXT_SUFFIX)
probe: $(PROBE)
$(PROBE): python/godlpack/_probe.c include/godlpack/dlpack.h
	$(CC) -shared -fPIC -O2 -Wall -pthread -I$(PYINCLUDE) -Iinclude -o $@ $<

# Only the project's own files (a Go toolchain unpacked into .gotool/ is not ours);
# tools/layers.py: the runtime's C calls go one way (docs/architecture.md).
# The committed pyext_gen.go files must be what pyextgen writes from their
# package's //pyext: directives.
lint:
	@files=$$(git ls-files '*.go'); out=$$(gofmt -l $$files); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@for f in $$(git ls-files '*pyext_gen.go'); do go run ./pyext/pyextgen -check $$(dirname $$f) || exit 1; done
	go vet ./...
	$(BASEPYTHON) tools/layers.py

# Go tests of capsule/ embed CPython (internal/testkit/pyembed): they link libpython.
PYLINK := -L$(PYLIBDIR) $(shell $(BASEPYTHON) -c 'import sysconfig; print("-lpython" + sysconfig.get_config_var("LDVERSION"))')
# GDL_HEADERS_KEY: the headers' content in every cgo package's build key
# (the go command keys a package by its own folder's files; tools/godlpack_build.py).
gotest:
	CGO_CFLAGS="$(CGO_CFLAGS) -DGDL_HEADERS_KEY=0x$$(find pyext internal core capsule include -name '*.h' | LC_ALL=C sort | xargs cat | sha256sum | cut -c1-16)" \
	  CGO_LDFLAGS="$(PYLINK)" LD_LIBRARY_PATH=$(PYLIBDIR) go test -race -count=1 ./...

pytest: ext probe venv
	PYTHONPATH=python $(PYTHON) -m pytest -q tests

# The whole suite: Go checks, Go tests under the race detector, pytest.
test: lint gotest pytest

# Python exchange figures: every path next to NumPy, PyTorch, JAX, tvm-ffi and
# a C floor, ratios in one process (bench/out/, git-ignored; UPDATE=1 rewrites
# the committed bench/results/); the GPU figures (bench/gpu_bench.py: one line
# without a GPU); pickling and a Dask map against NumPy (bench/scale_bench.py);
# then the Go-side figures (export, import,
# pinning, one cgo crossing).
bench: ext venv
	$(PYTHON) -c 'import tvm_ffi' 2>/dev/null || $(PYTHON) -m pip install -q apache-tvm-ffi
	PYTHONPATH=python $(PYTHON) bench/bench.py $(if $(UPDATE),--update)
	PYTHONPATH=python $(PYTHON) bench/gpu_bench.py
	PYTHONPATH=python $(PYTHON) bench/scale_bench.py
	go test -run='^$$' -bench=. -benchtime=200ms ./producer ./consumer

soak: ext venv
	PYTHONPATH=python $(PYTHON) bench/soak.py

# Regenerate the dtype/device/version tables from internal/gen/tables/data.go.
generate:
	go generate ./...

# gopy users (examples/gopy): build the example with the pinned gopy, run its tests.
.PHONY: gopy-example
gopy-example: venv
	bash examples/gopy/build.sh $(abspath $(PYTHON))
	cd examples/gopy && $(abspath $(PYTHON)) -m pytest -q -p no:cacheprovider --rootdir . test_vecgopy.py

clean:
	rm -rf build dist *.egg-info $(EXT) $(PROBE) python/godlpack/include

# Further targets, one file per concern (wheels, sanitizers, mutants, ...).
include $(wildcard mk/*.mk)
