# godlpack build, test and benchmark entry points.
# Tests and benchmarks run in .venv, made on first use with everything they need.
BASEPYTHON ?= python3
VENV ?= .venv
PYTHON := $(VENV)/bin/python
PYINCLUDE := $(shell $(BASEPYTHON) -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
PYLIBDIR := $(shell $(BASEPYTHON) -c 'import sysconfig; print(sysconfig.get_config_var("LIBDIR") or "")')
EXT_SUFFIX := $(shell $(BASEPYTHON) -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
TEST_DEPS := numpy torch "jax[cpu]" pytest hypothesis psutil matplotlib cffi setuptools
# cgo finds Python.h through CGO_CFLAGS; the extension never links libpython.
export CGO_CFLAGS := -I$(PYINCLUDE) -O2
export GOFLAGS := -buildvcs=false
EXT := pyext/godlpack/_godlpack$(EXT_SUFFIX)
GOFILES := $(shell find . -path ./.venv -prune -o \( -name '*.go' -o -name '*.c' -o -name '*.h' \) -print)

.PHONY: all ext venv test gotest pytest lint bench soak clean

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
	go build -buildmode=c-shared -o $(EXT) ./pyext
	rm -f $(basename $(EXT)).h
	mkdir -p pyext/godlpack/include/godlpack && cp include/godlpack/*.h pyext/godlpack/include/godlpack/

lint:
	@files=$$(find . -name '*.go' -not -path './.venv/*'); out=$$(gofmt -l $$files); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	go vet ./...

# Go tests of capsule/ embed CPython (internal/pyembed): they link libpython.
PYLINK := -L$(PYLIBDIR) $(shell $(BASEPYTHON) -c 'import sysconfig; print("-lpython" + sysconfig.get_config_var("LDVERSION"))')
gotest:
	CGO_LDFLAGS="$(PYLINK)" LD_LIBRARY_PATH=$(PYLIBDIR) go test -race -count=1 ./...

pytest: ext venv
	PYTHONPATH=pyext $(PYTHON) -m pytest -q tests

# The whole suite: Go checks, Go tests under the race detector, pytest.
test: lint gotest pytest

# Python exchange figures: every path next to NumPy, PyTorch, JAX, tvm-ffi and
# a C floor, ratios in one process (bench/out/, git-ignored; UPDATE=1 rewrites
# the committed bench/results/); then the Go-side figures (export, import,
# pinning, one cgo crossing).
bench: ext venv
	$(PYTHON) -c 'import tvm_ffi' 2>/dev/null || $(PYTHON) -m pip install -q apache-tvm-ffi
	PYTHONPATH=pyext $(PYTHON) bench/bench.py $(if $(UPDATE),--update)
	go test -run='^$$' -bench=. -benchtime=200ms ./producer ./consumer

soak: ext venv
	PYTHONPATH=pyext $(PYTHON) bench/soak.py

clean:
	rm -rf build dist *.egg-info $(EXT) pyext/godlpack/include
