#!/usr/bin/env bash
# make test-pythons: for every CPython >= 3.11 this machine has (pyenv's, else
# python3.X on PATH), build the extension and the probes with it, then run the
# NumPy-only suite in a throwaway venv (numpy pytest hypothesis psutil ml_dtypes
# setuptools). Prints a table; versions not found are listed as skipped.
set -uo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS=-buildvcs=false
DEPS="numpy pytest hypothesis psutil ml_dtypes setuptools>=77"  # 3.11 venvs come with setuptools 65 (no bdist_wheel)
WANT="3.11 3.12 3.13 3.14 3.15"

find_python() {  # $1 = 3.X: the newest patch release found
  local root
  if command -v pyenv >/dev/null 2>&1; then
    root=$(pyenv root)
    local v
    v=$(ls -d "$root"/versions/"$1".[0-9]* 2>/dev/null | grep -E "/$1\.[0-9]+$" | sort -V | tail -1)
    if [ -n "$v" ] && [ -x "$v/bin/python$1" ]; then echo "$v/bin/python$1"; return; fi
  fi
  command -v "python$1" 2>/dev/null || true
}

rows=()
failed=0
for minor in $WANT; do
  py=$(find_python "$minor")
  if [ -z "$py" ]; then
    rows+=("$minor | skipped: not installed | - | -")
    continue
  fi
  full=$("$py" -c 'import platform; print(platform.python_version())')
  tmp=$(mktemp -d)
  suffix=$("$py" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
  inc=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
  ext="pyext/godlpack/_godlpack$suffix" probe="pyext/godlpack/_probe$suffix"
  log="$tmp/log"
  echo "== Python $full ($py)"
  status=ok
  if ! { "$py" -m venv "$tmp/venv" && "$tmp/venv/bin/python" -m pip install -q --disable-pip-version-check $DEPS; } >"$log" 2>&1; then
    status="venv/deps failed"
  elif ! "$tmp/venv/bin/python" tools/godlpack_build.py "$ext" ./pyext/module >>"$log" 2>&1 \
      || ! ${CC:-cc} -shared -fPIC -O2 -Wall -pthread -I"$inc" -Iinclude -o "$probe" pyext/godlpack/_probe.c >>"$log" 2>&1; then
    status="build failed"
  elif ! (cd "$tmp" && PYTHONPATH="$OLDPWD/pyext" "$tmp/venv/bin/python" -c 'import godlpack; godlpack.zeros(1)') >>"$log" 2>&1; then
    status="import failed"
  fi
  result="-"
  if [ "$status" = ok ]; then
    PYTHONPATH=pyext "$tmp/venv/bin/python" -m pytest -q -p no:cacheprovider tests >"$tmp/pytest" 2>&1
    rc=$?
    result=$(tail -1 "$tmp/pytest" | sed 's/=//g; s/^ *//; s/ *$//')
    [ $rc -eq 0 ] || status="tests failed"
  fi
  if [ "$status" != ok ]; then
    failed=1
    echo "--- $minor: $status; last lines:"; tail -n 30 "$log"; grep -E "^(FAILED|ERROR)" "$tmp/pytest" || tail -n 30 "$tmp/pytest"
  fi
  # The python3.X builds are this target's own: the default one (make ext) stays.
  [ "$suffix" = "$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')" ] || rm -f "$ext" "$probe"
  rows+=("$full | $status | $result | $("$tmp/venv/bin/python" -c 'import numpy; print(numpy.__version__)' 2>/dev/null || echo -)")
  rm -rf "$tmp"
done

echo
echo "| Python | result | NumPy-only suite | NumPy |"
echo "|---|---|---|---|"
for r in "${rows[@]}"; do echo "| ${r// | / | } |"; done
exit $failed
