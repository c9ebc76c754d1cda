#!/usr/bin/env bash
# Prints the path of a working CPython 3.X ($1 = 3.X): pyenv's newest 3.X.N,
# else python3.X on PATH, else python3 if it is 3.X; nothing if none.
v=$1
if command -v pyenv >/dev/null 2>&1; then
  d=$(ls -d "$(pyenv root)"/versions/"$v".[0-9]* 2>/dev/null | grep -E "/$v\.[0-9]+$" | sort -V | tail -1)
  if [ -n "$d" ] && "$d/bin/python$v" -c '' 2>/dev/null; then echo "$d/bin/python$v"; exit 0; fi
fi
for c in "python$v" python3; do
  p=$(command -v "$c" 2>/dev/null) || continue
  if [ "$("$p" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)" = "$v" ]; then
    echo "$p"; exit 0
  fi
done
