#!/usr/bin/env bash
# make gpu-bundle: what a GPU machine without Go or network needs to run
# `make gpu-test` against an installed godlpack, built here into .gpu/
# (git-ignored; GPU_BUNDLE=DIR elsewhere):
#   .gpu/godlpack-*-cp312-*.whl  pip's build of this tree (tools/godlpack_build.py, Go) with
#                                CPython GPU_PYVER (default 3.12: pyenv's, or python3.12 on PATH),
#   .gpu/ext/vecmath-*.whl       the Go extension example, for tests/runtime/test_gpu_peers.py,
#   .gpu/wheels/                 numpy, pytest and pytest's dependencies for that Python, installed
#                                there only if the machine lacks them.
# Then, on the GPU machine: make gpu-test GPU_WHEEL=$(ls .gpu/godlpack-*.whl)
set -euo pipefail
cd "$(dirname "$0")/.."
GPU_PYVER=${GPU_PYVER:-3.12}
DEST=${GPU_BUNDLE:-.gpu}
py=${GPU_PYTHON:-$(bash tools/find_python.sh "$GPU_PYVER")}
[ -n "$py" ] || { echo "gpu-bundle: no CPython $GPU_PYVER found (pyenv or python$GPU_PYVER; or set GPU_PYTHON)" >&2; exit 1; }
start=$SECONDS
rm -rf "$DEST" && mkdir -p "$DEST/wheels" "$DEST/ext"
echo "== godlpack wheel with $py"
"$py" -m pip wheel -q --disable-pip-version-check --no-deps -w "$DEST" .
echo "== the vecmath example (a Go extension) with $py"
"$py" -m pip wheel -q --disable-pip-version-check --no-deps -w "$DEST/ext" examples/vecmath
echo "== numpy, pytest and their dependencies for $("$py" -V)"
"$py" -m pip download -q --disable-pip-version-check --only-binary=:all: -d "$DEST/wheels" numpy pytest
whl=$(ls "$DEST"/godlpack-*.whl)
# The newest glibc symbol version the extension needs (the GPU machine must have at least that).
glibc=$(unzip -p "$whl" 'godlpack/_godlpack*.so' | strings | grep -oE '^GLIBC_[0-9.]+$' | sort -Vu | tail -1 || true)
echo "== $DEST ($((SECONDS - start)) s):"
ls -l "$whl" "$DEST"/ext "$DEST"/wheels
echo "the extension needs ${glibc:-an unknown glibc} or newer; run there: make gpu-test GPU_WHEEL=$whl"
