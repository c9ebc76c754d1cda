#!/usr/bin/env bash
# Builds the gopy example into examples/gopy/build/vecgopy/ (an importable
# Python package: vecgopy.vecgopy, plus the gopydl.py helper) for PYTHON.
#
#   examples/gopy/build.sh [PYTHON]      # default: python3
#
# Needs Go and a C compiler; installs pybindgen into PYTHON with pip when it
# is missing. gopy and goimports are built from tools/go.mod, which pins
# gopy v0.4.10 with golang.org/x/tools v0.52.0 (gopy's own v0.16.0 does not
# build with Go >= 1.25). Exit status 3: a prerequisite is missing (the
# message says which); anything else non-zero: the build failed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
py=${1:-${PYTHON:-python3}}
bin=$here/.bin
out=$here/build/vecgopy
missing() { echo "build.sh: prerequisite missing: $*" >&2; exit 3; }

command -v go >/dev/null || missing "go is not on PATH"
command -v "$py" >/dev/null || [ -x "$py" ] || missing "no Python at $py"
if ! "$py" -c 'import pybindgen' 2>/dev/null; then
  "$py" -m pip install -q pybindgen >&2 || missing "pybindgen (pip install pybindgen) for $py"
fi
if [ ! -x "$bin/gopy" ] || [ ! -x "$bin/goimports" ] || [ "$here/tools/go.mod" -nt "$bin/gopy" ]; then
  (cd "$here/tools" && go build -o "$bin/gopy" github.com/go-python/gopy &&
    go build -o "$bin/goimports" golang.org/x/tools/cmd/goimports) ||
    missing "could not build gopy from examples/gopy/tools (no Go module proxy?)"
fi

export PATH="$bin:$PATH" GOFLAGS="${GOFLAGS:--buildvcs=false}"
# gopy's generated C declares `typedef uint8_t bool;`, which C23 (the default
# of GCC 15, Debian's from trixie on) refuses: its C is C17.
export CC="${CC:-cc} -std=gnu17"
# gopydl needs no Python headers; gopy sets CGO_CFLAGS/LDFLAGS for its own C.
cd "$here"
rm -rf "$out" && mkdir -p "$here/build"
gopy build -vm="$py" -output="$out" -name=vecgopy ./vecgopy >"$here/build/gopy.log" 2>&1 ||
  { cat "$here/build/gopy.log" >&2; exit 1; }
touch "$out/__init__.py"
cp "$here/../../gopydl/python/gopydl.py" "$out/"
echo "built $out" >&2
