# make cross: godlpack's own module and a pyext extension (tests/pyext/opmod)
# built for windows/amd64, darwin/arm64 and darwin/amd64 with zig, the two
# macOS builds joined into universal2 (tools/fatmacho.py), and each checked
# against the target's real libpython (tools/cross.py: imports, exports,
# minimum macOS, arm64 signature; universal2: each slice); then opmod against
# the stable ABI (abi3) for macOS arm64 and x86_64, joined into universal2, each
# slice binding only the limited API (Windows abi3: make wine-test). The jars, the import libraries
# and zig's cache live in CROSS_CACHE (git-ignored; cache it in CI).
# make cross-deps: Debian's llvm (llvm-objdump, llvm-nm) where missing.
CROSS_CACHE ?= $(CURDIR)/.crosscache
CROSS_OUT ?= build/cross
CROSS_PYTHON ?= 3.13
CROSS_ENV = GODLPACK_CROSS_CACHE=$(CROSS_CACHE) ZIG_GLOBAL_CACHE_DIR=$(CROSS_CACHE)/zig GOFLAGS=-buildvcs=false
.PHONY: cross cross-deps
cross-deps:
	@command -v llvm-objdump >/dev/null || command -v llvm-objdump-14 >/dev/null || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq llvm >/dev/null; }

cross: cross-deps
	$(CROSS_ENV) $(PYTHON) tools/cross.py all -o $(CROSS_OUT) -p $(CROSS_PYTHON)
	$(CROSS_ENV) $(PYTHON) tools/cross.py all --abi3 -o $(CROSS_OUT)/abi3 -t macosx_12_0_universal2
