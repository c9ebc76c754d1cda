#!/usr/bin/env bash
# mk/qemu-arm64.sh 3.X WHEEL: prints a command that runs an aarch64 CPython
# 3.X under qemu-user with WHEEL and the NumPy-only suite's dependencies
# importable (for mk/wheels.sh). Everything comes from package registries,
# unpacked without installing: Debian's arm64 python3.X (bookworm has 3.11,
# trixie 3.13, unstable 3.14 and 3.15; none has 3.12) and amd64 qemu-user, via a
# private apt state (the system's apt configuration is not touched), and the
# dependencies' aarch64 wheels from PyPI (pip --platform). No binfmt needed:
# the interpreter is a script running `qemu-aarch64-static -L SYSROOT
# python3.X` that is its own sys.executable. Cached in $WHEEL_TOOLS/arm64/.
# Exits 3 (saying why on stderr) where no aarch64 CPython 3.X can be had.
set -euo pipefail
minor=$1 whl=$2
# qemu: bookworm's qemu-user-static; trixie's qemu-user is static itself.
case $minor in
  3.11) suite=bookworm qpkg=qemu-user-static ;;
  3.13) suite=trixie qpkg=qemu-user ;;
  3.14|3.15) suite=unstable qpkg=qemu-user ;;
  *) echo "no Debian arm64 python$minor" >&2; exit 3 ;;
esac
command -v apt-get >/dev/null || { echo "no apt-get (Debian/Ubuntu) to fetch python$minor:arm64" >&2; exit 3; }
tools=$(cd "${WHEEL_TOOLS:-.wheeltools}" && pwd)
dir=$tools/arm64/$minor root=$tools/arm64/$minor/root
DEPS="numpy pytest hypothesis psutil ml_dtypes setuptools"
# On the sysroot's own sys.path (a child Python the tests start finds them too):
# the dependencies in /usr/local's dist-packages, the wheel in /usr/lib/python3's.
site=$root/usr/local/lib/python$minor/dist-packages wheel=$root/usr/lib/python3/dist-packages
if [ ! -e "$dir/.done" ]; then
  rm -rf "$dir"; mkdir -p "$dir"/{lists/partial,cache/archives/partial,debs} "$root"
  key=/usr/share/keyrings/debian-archive-keyring.gpg
  {
    echo "deb [arch=arm64,amd64 signed-by=$key] http://deb.debian.org/debian $suite main"
    [ $suite = bookworm ] && echo "deb [arch=arm64,amd64 signed-by=$key] http://deb.debian.org/debian-security $suite-security main"
  } >"$dir/sources.list"
  # The mirror's snapshot of unstable may carry an expired Release date.
  apt=(-o Acquire::Check-Valid-Until=false -o APT::Architecture=arm64 -o APT::Architectures::=arm64 -o APT::Architectures::=amd64
       -o Dir::State::Lists="$dir/lists" -o Dir::Cache="$dir/cache" -o Dir::State::Status=/dev/null
       -o Dir::Etc::SourceList="$dir/sources.list" -o Dir::Etc::SourceParts=/nonexistent)
  apt-get "${apt[@]}" -qq update >&2
  pkgs=$(apt-cache "${apt[@]}" depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
           --no-replaces --no-enhances --no-pre-depends "python$minor-minimal" "libpython$minor-stdlib" libstdc++6 \
         | grep -E '^[a-z0-9]' | grep -v -E ':amd64|^(debconf|perl|dpkg|tzdata|media-types|readline-common|libc-bin|mime-support)' | sort -u)
  # shellcheck disable=SC2086
  (cd "$dir/debs" && apt-get "${apt[@]}" -qq download $pkgs $qpkg:amd64 >&2 2>/dev/null)
  for d in "$dir"/debs/*_arm64.deb; do dpkg -x "$d" "$root"; done
  [ -e "$root/lib" ] || ln -s usr/lib "$root/lib"  # merged /usr (trixie): base-files makes it
  dpkg -x "$dir"/debs/${qpkg}_*_amd64.deb "$dir/qemu"
  "$tools/bin/pip" install -q --disable-pip-version-check --target "$site" --platform manylinux_2_28_aarch64 --platform manylinux2014_aarch64 \
    --python-version "$minor" --implementation cp --only-binary=:all: $DEPS >&2
  touch "$dir/.done"
fi
for qemu in "$dir"/qemu/usr/bin/qemu-aarch64-static "$dir"/qemu/usr/bin/qemu-aarch64; do [ -x "$qemu" ] && break; done
rm -rf "$wheel"
"$tools/bin/pip" install -q --disable-pip-version-check --no-deps --target "$wheel" --platform manylinux2014_aarch64 \
  --python-version "$minor" --implementation cp --only-binary=:all: "$whl" >&2
# The interpreter, as a script that is also sys.executable (qemu -0), so
# that tests which start a child Python start it under qemu too.
mkdir -p "$dir/bin"
printf '#!/bin/sh\nexec "%s" -L "%s" -0 "$0" "%s" "$@"\n' \
  "$qemu" "$root" "$root/usr/bin/python$minor" >"$dir/bin/python$minor"
chmod +x "$dir/bin/python$minor"
# The tests that compile C (tests/runtime/fakecuda) get an aarch64 compiler: zig.
"$tools/bin/python" -c 'import ziglang' 2>/dev/null || "$tools/bin/pip" install -q --disable-pip-version-check ziglang >&2
printf '#!/bin/sh
exec "%s" -m ziglang cc -target aarch64-linux-gnu "$@"
' "$tools/bin/python" >"$dir/bin/cc"
chmod +x "$dir/bin/cc"
echo env CC="$dir/bin/cc" "$dir/bin/python$minor"
