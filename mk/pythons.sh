#!/usr/bin/env bash
# make test-pythons: for every CPython 3.11-3.15, build the extension and the
# probes with it, then run the NumPy-only suite in a throwaway venv (numpy
# pytest hypothesis psutil ml_dtypes setuptools). A version this machine lacks
# (pyenv's, else python3.X on PATH) is taken from a Debian unstable root
# (mk/debian-pythons.sh: 3.14 and 3.15) where root and apt allow; under CI
# (CI=true) a version that can be had by neither fails the target instead of
# being skipped. A free-threaded python3.Xt found on the machine is tested
# too. Prints a table.
#   bash mk/pythons.sh [--one PYTHON]   (--one: one interpreter, one row on fd 3)
# SUITE_SKIP="3.11.7 ...": versions (platform.python_version()) left out
# whole (no venv, build or suite): CI's make test builds, imports and tests
# that Python, with every peer, and nothing is done twice.
# SUITE_TESTS="tests/runtime ...": the test paths each suite runs (default: tests).
# SUITE_MARKS="not one_python": pytest's -m for each suite (CI leaves out the
# tests that check nothing of the Python version: make test runs them).
set -uo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS=-buildvcs=false
DEPS="numpy pytest hypothesis psutil ml_dtypes setuptools>=77"  # 3.11 venvs come with setuptools 65 (no bdist_wheel)
WANT=${PYTHONS:-3.11 3.12 3.13 3.14 3.15}
FROM_DEBIAN="3.14 3.15"

# One interpreter: build, import, suite. Prints the table row on fd 3.
one() {
  local py=$1 full tmp suffix inc ext probe log status result rc
  full=$("$py" -c 'import platform, sysconfig; print(platform.python_version() + ("t" if sysconfig.get_config_var("Py_GIL_DISABLED") else ""))')
  tmp=$(mktemp -d)
  suffix=$("$py" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
  inc=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
  ext="python/godlpack/_godlpack$suffix" probe="python/godlpack/_probe$suffix"
  log="$tmp/log"
  echo "== Python $full ($py)"
  if [[ " ${SUITE_SKIP:-} " == *" $full "* ]]; then
    echo "$full | left to make test (SUITE_SKIP) | - | -" >&3
    rm -rf "$tmp"
    return
  fi
  status=ok
  if ! { "$py" -m venv "$tmp/venv" && "$tmp/venv/bin/python" -m pip install -q --disable-pip-version-check $DEPS; } >"$log" 2>&1; then
    status="venv/deps failed"
  elif ! "$tmp/venv/bin/python" tools/godlpack_build.py "$ext" ./module >>"$log" 2>&1 \
      || ! ${CC:-cc} -shared -fPIC -O2 -Wall -pthread -I"$inc" -Iinclude -o "$probe" python/godlpack/_probe.c >>"$log" 2>&1; then
    status="build failed"
  elif ! (cd "$tmp" && PYTHONPATH="$OLDPWD/python" "$tmp/venv/bin/python" -c 'import godlpack; godlpack.zeros(1)') >>"$log" 2>&1; then
    status="import failed"
  fi
  result="-"
  if [ "$status" = ok ]; then
    PYTHONPATH=python "$tmp/venv/bin/python" -m pytest -q -p no:cacheprovider ${SUITE_MARKS:+-m "$SUITE_MARKS"} \
      ${SUITE_TESTS:-tests} >"$tmp/pytest" 2>&1
    rc=$?
    result=$(tail -1 "$tmp/pytest" | sed 's/=//g; s/^ *//; s/ *$//')
    [ $rc -eq 0 ] || status="tests failed"
  fi
  if [ "$status" != ok ]; then
    echo "--- $full: $status; last lines:"; tail -n 30 "$log"; grep -E "^(FAILED|ERROR)" "$tmp/pytest" || tail -n 30 "$tmp/pytest"
  fi
  # Builds for other interpreters are this target's own: the default one (make ext) stays.
  [ "$suffix" = "$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))' 2>/dev/null)" ] || rm -f "$ext" "$probe"
  echo "$full | $status | $result | $("$tmp/venv/bin/python" -c 'import numpy; print(numpy.__version__)' 2>/dev/null || echo -)" >&3
  rm -rf "$tmp"
}

if [ "${1:-}" = --one ]; then
  one "$2"
  exit 0
fi

rowfile=$(mktemp)
trap 'rm -f "$rowfile"' EXIT
failed=0
for minor in $WANT; do
  py=$(bash tools/find_python.sh "$minor")
  if [ -n "$py" ]; then
    one "$py" 3>>"$rowfile"
  elif [[ " $FROM_DEBIAN " == *" $minor "* ]] && bash mk/debian-pythons.sh ensure; then
    echo "== python$minor from the Debian unstable root (mk/debian-pythons.sh)"
    bash mk/debian-pythons.sh run bash mk/pythons.sh --one "/usr/bin/python$minor" 3>>"$rowfile" \
      || echo "$minor | Debian root failed | - | -" >>"$rowfile"
  elif [ "${CI:-}" = true ]; then
    echo "$minor | not found (CI needs every version) | - | -" >>"$rowfile"
  else
    echo "$minor | skipped: not installed | - | -" >>"$rowfile"
  fi
  # A free-threaded build of the same version, where the machine has one.
  if ft=$(command -v "python${minor}t"); then one "$ft" 3>>"$rowfile"; fi
done

echo
echo "| Python | result | NumPy-only suite | NumPy |"
echo "|---|---|---|---|"
while IFS= read -r r; do
  echo "| $r |"
  case $r in *"| ok |"*|*"| skipped: not installed |"*|*"| left to make test (SUITE_SKIP) |"*) ;; *) failed=1 ;; esac
done <"$rowfile"
exit $failed
