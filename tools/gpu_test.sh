#!/usr/bin/env bash
# make gpu-test: every GPU test of the project in one command (under 5
# minutes on a GPU machine; GPU parts skip, saying why, elsewhere):
#   1. pytest tests/runtime/test_cuda.py tests/runtime/test_fakecuda.py tests/runtime/test_gpu_peers.py
#      (the stand-in driver's tests run anywhere a C compiler is),
#   2. bench/gpu_bench.py --quick,
#   3. compute-sanitizer memcheck over tools/gpu_memcheck.py, where it is on PATH.
# Two ways to get godlpack:
#   in place (default): $PYTHON with pyext/ (make builds ext and probe first);
#   GPU_WHEEL=path/to/godlpack-*.whl: for a machine without Go or network. A
#     fresh venv (--system-site-packages: the machine's torch/cupy/jax) gets
#     the wheel (--no-deps --no-index), the Go extension wheels in ext/ next
#     to it and, if missing, pytest and numpy from the wheels folder next to
#     it (tools/gpu_bundle.sh fills .gpu/); tests/ is copied out of the tree
#     so `import godlpack` is the installed wheel.
# Logs and the bench's JSON go to GPU_OUT (default bench/out/gpu-test).
# GPU_INSTALL=unzip installs the wheels by unpacking them (what happens anyway
# where the venv has no pip).
# Exit status: 0 unless pytest fails, the bench fails, or memcheck reports errors.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PYTHON=${PYTHON:-.venv/bin/python}
GPU_WHEEL=${GPU_WHEEL:-}
GPU_OUT=${GPU_OUT:-$ROOT/bench/out/gpu-test}
GPU_TESTS=${GPU_TESTS:-tests/runtime/test_cuda.py tests/runtime/test_fakecuda.py tests/runtime/test_gpu_peers.py}
T_PYTEST=${GPU_PYTEST_TIMEOUT:-150}
T_BENCH=${GPU_BENCH_TIMEOUT:-90}
T_MEMCHECK=${GPU_MEMCHECK_TIMEOUT:-60}
export XLA_PYTHON_CLIENT_PREALLOCATE=${XLA_PYTHON_CLIENT_PREALLOCATE:-false}
mkdir -p "$GPU_OUT"
GPU_OUT=$(cd "$GPU_OUT" && pwd)
start=$SECONDS

die() { echo "gpu-test: $*" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/godlpack-gpu.XXXXXX") || die "mktemp failed"
trap 'rm -rf "$work"' EXIT

if [ -n "$GPU_WHEEL" ]; then
  [ -f "$GPU_WHEEL" ] || die "GPU_WHEEL=$GPU_WHEEL: no such file"
  GPU_WHEEL=$(cd "$(dirname "$GPU_WHEEL")" && pwd)/$(basename "$GPU_WHEEL")
  tag=$(basename "$GPU_WHEEL" | sed -nE 's/.*-cp3([0-9]+)-.*/\1/p')
  py=${GPU_PYTHON:-$(bash tools/find_python.sh "3.$tag")}
  [ -n "$py" ] || die "no Python 3.$tag for $GPU_WHEEL (set GPU_PYTHON)"
  echo "== venv from $py (--system-site-packages), installing $(basename "$GPU_WHEEL")"
  # A Python without ensurepip (Debian's without python3-venv) still makes a venv without pip.
  "$py" -m venv --system-site-packages "$work/venv" 2>/dev/null \
    || { rm -rf "$work/venv" && "$py" -m venv --system-site-packages --without-pip "$work/venv"; } \
    || die "venv failed"
  vpy=$work/venv/bin/python
  site=$("$vpy" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  # Where $py is itself a venv (the machine's torch in /opt/.../.venv), its
  # packages are not the base's "system site": list them after the new venv's.
  "$py" -c 'import site; print("\n".join(site.getsitepackages()))' >"$site/_gpu_host_site.pth"
  how=${GPU_INSTALL:-pip}
  "$vpy" -m pip --version >/dev/null 2>&1 || how=unzip
  install() {  # wheel files: pip (no index, no dependencies) or, without pip, unpacked into the venv
    if [ "$how" = pip ]; then
      "$vpy" -m pip install -q --disable-pip-version-check --no-deps --no-index "$@"
    else
      local w
      for w in "$@"; do
        "$vpy" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$w" "$site" || return 1
      done
    fi
  }
  install "$GPU_WHEEL" || die "installing $GPU_WHEEL ($how) failed (wrong Python or platform?)"
  for w in "$(dirname "$GPU_WHEEL")"/ext/*.whl; do  # Go extensions built by gpu-bundle
    [ -f "$w" ] || continue
    install "$w" || die "installing $w ($how) failed"
    echo "== installed $(basename "$w")"
  done
  wheels=$(dirname "$GPU_WHEEL")/wheels
  for mod in numpy pytest; do
    "$vpy" -c "import $mod" 2>/dev/null && continue
    [ -d "$wheels" ] || die "$mod is not installed here and $wheels (tools/gpu_bundle.sh) is missing"
    echo "== $mod from $wheels ($how)"
    if [ "$how" = pip ]; then  # only what the machine lacks of $mod's dependencies
      "$vpy" -m pip install -q --disable-pip-version-check --no-index --find-links "$wheels" "$mod"
    elif [ "$mod" = numpy ]; then
      install "$wheels"/numpy-*.whl
    else
      install $(ls "$wheels"/*.whl | grep -v /numpy-)
    fi || die "installing $mod from $wheels failed"
  done
  mkdir -p "$work/run/bench" "$work/run/tools"
  cp -r tests "$work/run/tests"
  cp bench/gpu_bench.py "$work/run/bench/" && cp tools/gpu_memcheck.py "$work/run/tools/"
  printf '[pytest]\npythonpath = tests\n' >"$work/run/pytest.ini"
  rundir=$work/run
  unset PYTHONPATH
else
  case $PYTHON in /*) vpy=$PYTHON ;; *) vpy=$ROOT/$PYTHON ;; esac
  rundir=$ROOT
  export PYTHONPATH=$ROOT/pyext${PYTHONPATH:+:$PYTHONPATH}
fi
cd "$rundir"

where=$("$vpy" -c 'import godlpack, sys; print(godlpack.__file__)') || die "import godlpack failed"
if [ -n "$GPU_WHEEL" ]; then
  case "$where" in "$work"/venv/*) ;; *) die "godlpack came from $where, not the installed wheel" ;; esac
fi
echo "== godlpack: $where"
driver=$("$vpy" -c 'import godlpack; ok, why = godlpack.cuda_status(); print("yes" if ok else "no: " + why)')
echo "== CUDA driver: $driver"
if command -v nvidia-smi >/dev/null 2>&1; then
  timeout 20 nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
fi

tests=()
for t in $GPU_TESTS; do tests+=("$t"); done
skipped_note=""
if ! command -v "${CC:-cc}" >/dev/null 2>&1 && ! command -v gcc >/dev/null 2>&1; then
  skipped_note="tests/runtime/test_fakecuda.py left out: no C compiler to build the stand-in driver"
  tests=("${tests[@]/tests\/runtime\/test_fakecuda.py/}")
  echo "== $skipped_note"
fi

echo "== pytest (timeout ${T_PYTEST}s)"
timeout -k 10 "$T_PYTEST" "$vpy" -m pytest -q -rs -p no:cacheprovider ${tests[@]} 2>&1 | tee "$GPU_OUT/pytest.txt"
rc_pytest=${PIPESTATUS[0]}
pytest_line=$(grep -E '(passed|failed|skipped|error)' "$GPU_OUT/pytest.txt" | tail -1 | sed 's/=//g; s/^ *//')

echo "== bench/gpu_bench.py --quick (timeout ${T_BENCH}s)"
timeout -k 10 "$T_BENCH" "$vpy" bench/gpu_bench.py --quick --out "$GPU_OUT/gpu_bench-quick.json" 2>&1 \
  | tee "$GPU_OUT/bench.txt"
rc_bench=${PIPESTATUS[0]}
bench_line=$(grep -E '^(gpu_bench: skipped|godlpack.from_dlpack\(torch)' "$GPU_OUT/bench.txt" | tail -1)

rc_memcheck=0
if [ "$driver" != yes ]; then
  memcheck_line="skipped: no CUDA driver"
elif ! command -v compute-sanitizer >/dev/null 2>&1; then
  memcheck_line="skipped: compute-sanitizer is not on PATH"
else
  echo "== compute-sanitizer memcheck (timeout ${T_MEMCHECK}s)"
  timeout -k 10 "$T_MEMCHECK" compute-sanitizer --tool memcheck --leak-check full --print-limit 20 \
    "$vpy" tools/gpu_memcheck.py >"$GPU_OUT/memcheck.txt" 2>&1
  rc=$?
  tail -n 5 "$GPU_OUT/memcheck.txt"
  errors=$(sed -nE 's/.*ERROR SUMMARY: ([0-9]+) error.*/\1/p' "$GPU_OUT/memcheck.txt" | tail -1)
  memcheck_line="${errors:-?} errors (rc $rc, log $GPU_OUT/memcheck.txt)"
  [ "$rc" -eq 0 ] && [ "${errors:-1}" -eq 0 ] || rc_memcheck=1
fi

echo
echo "== gpu-test summary ($((SECONDS - start)) s; logs in $GPU_OUT)"
echo "godlpack:  $where"
echo "driver:    $driver"
echo "pytest:    ${pytest_line:-no result} (rc $rc_pytest)"
[ -n "$skipped_note" ] && echo "           $skipped_note"
echo "bench:     ${bench_line:-see $GPU_OUT/bench.txt} (rc $rc_bench)"
echo "memcheck:  $memcheck_line"
[ "$rc_pytest" -eq 0 ] && [ "$rc_bench" -eq 0 ] && [ "$rc_memcheck" -eq 0 ]
