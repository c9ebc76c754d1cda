# The extension built with AddressSanitizer (go build -asan instruments Go and
# the cgo C code) or UBSan (C code; any report aborts), installed with the
# Python package under build/<san>/, and the pytest suite run against it.
# The build runs with the sanitizer's runtime preloaded: it loads the library
# in a child Python to read its stubs.
# allocator_may_return_null: a too-large zeros() is a MemoryError there too.
# Reports go to build/<san>/report.PID (pytest captures stderr) and are shown.
# RSS and glibc-heap checks skip there (GODLPACK_SANITIZER is set). pytest's
# pythonpath setting (python/ first) is overridden so the instrumented build is
# the one imported; tests/conftest.py checks that it is. The test extensions
# (tests/pyext/NAME) are built with the same flags (GODLPACK_SAN_*, read by
# tests/support/gomod.py). make asan-pyext: their checks only (SAN_TESTS=tests/pyext).
SAN_CFLAGS_asan := -O1 -g -fno-omit-frame-pointer -fsanitize=address
SAN_LDFLAGS_asan := -fsanitize=address
SAN_GOFLAGS_asan := -asan
SAN_CFLAGS_ubsan := -O1 -g -fsanitize=undefined -fno-sanitize-recover=all
SAN_LDFLAGS_ubsan := -fsanitize=undefined
SAN_GOFLAGS_ubsan :=
SAN_PRELOAD_asan = $(shell $(CC) -print-file-name=libasan.so) $(shell $(CC) -print-file-name=libstdc++.so)
SAN_PRELOAD_ubsan = $(shell $(CC) -print-file-name=libubsan.so) $(shell $(CC) -print-file-name=libstdc++.so)
SAN_TESTS ?= tests

.PHONY: asan ubsan asan-ext ubsan-ext asan-pyext ubsan-pyext
asan-ext ubsan-ext: %-ext: probe
	rm -rf build/$* && mkdir -p build/$* && cp -r python/godlpack build/$*/ && rm -f build/$*/godlpack/_godlpack*.so \
	  && rm -rf build/$*/godlpack/include && cp -r include build/$*/godlpack/include
	CGO_CFLAGS="$(SAN_CFLAGS_$*)" CGO_LDFLAGS="$(SAN_LDFLAGS_$*)" GOFLAGS="-buildvcs=false $(SAN_GOFLAGS_$*)" \
	  LD_PRELOAD="$(SAN_PRELOAD_$*)" ASAN_OPTIONS=detect_leaks=0 $(BASEPYTHON) tools/godlpack_build.py build/$*/godlpack/_godlpack$(EXT_SUFFIX) ./module

asan ubsan: %: %-ext venv
	LD_PRELOAD="$(SAN_PRELOAD_$*)" ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:allocator_may_return_null=1:log_path=$(CURDIR)/build/$*/report \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:log_path=$(CURDIR)/build/$*/report PYTHONMALLOC=malloc GODLPACK_SANITIZER=$* \
	  GODLPACK_SAN_CFLAGS="$(SAN_CFLAGS_$*)" GODLPACK_SAN_LDFLAGS="$(SAN_LDFLAGS_$*)" GODLPACK_SAN_GOFLAGS="$(SAN_GOFLAGS_$*)" \
	  PYTHONPATH=$(CURDIR)/build/$*:$(CURDIR)/python $(PYTHON) -m pytest -q -p no:cacheprovider -o pythonpath= $(SAN_TESTS) \
	  || { cat build/$*/report.* 2>/dev/null; exit 1; }

asan-pyext ubsan-pyext: %-pyext:
	$(MAKE) $* SAN_TESTS=tests/pyext
