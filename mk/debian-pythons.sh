#!/usr/bin/env bash
# CPython 3.14 and 3.15 for a machine whose own Debian has neither: a Debian
# unstable root made by mmdebstrap from Debian's packages (about 25 s, 330 MB),
# kept in $DEBIAN_PYTHONS (default ~/.cache/godlpack/debian-sid), and commands
# run in it with this tree, /tmp, the Go toolchain and Go's caches mounted at
# the same paths, so paths mean the same inside and out.
#
#   mk/debian-pythons.sh ensure        make the root if missing (needs root and apt)
#   mk/debian-pythons.sh has 3.X       exit 0 when the root has python3.X
#   mk/debian-pythons.sh run CMD...    run CMD in the root, in the current folder
#
# `run` mounts what it needs in a mount namespace of its own. The package
# mirror's snapshot may carry an expired Release date: its validity is not
# checked (the signatures are).
set -euo pipefail
ROOTFS=${DEBIAN_PYTHONS:-${XDG_CACHE_HOME:-$HOME/.cache}/godlpack/debian-sid}
PACKAGES=python3.14,python3.14-venv,python3.14-dev,python3.15,python3.15-venv,python3.15-dev,gcc,g++,libc6-dev,git,make,ca-certificates
STAMP=$ROOTFS/.godlpack-$(echo "$PACKAGES" | cksum | cut -d' ' -f1)

ensure() {
  [ -e "$STAMP" ] && return 0
  [ "$(id -u)" = 0 ] || { echo "debian-pythons: making the Debian root needs root (mmdebstrap, chroot)" >&2; return 3; }
  if ! command -v mmdebstrap >/dev/null; then
    command -v apt-get >/dev/null || { echo "debian-pythons: no apt-get to install mmdebstrap" >&2; return 3; }
    apt-get -qq update >&2 && DEBIAN_FRONTEND=noninteractive apt-get -qq install -y mmdebstrap >&2
  fi
  # Never delete through a mount (runs mount in namespaces of their own, so
  # none should be visible here).
  if grep -q " $ROOTFS/" /proc/self/mounts; then
    echo "debian-pythons: something is mounted inside $ROOTFS; not remaking it" >&2
    return 3
  fi
  rm -rf --one-file-system "$ROOTFS" && mkdir -p "$(dirname "$ROOTFS")"
  mmdebstrap --quiet --variant=apt --aptopt='Acquire::Check-Valid-Until "false"' --include="$PACKAGES" \
    unstable "$ROOTFS" http://deb.debian.org/debian >&2
  touch "$STAMP"
}

# The host's resolver, CA bundle (pip may reach PyPI through a proxy with its
# own CA) and pip settings, copied in before each run.
host_config() {
  cp /etc/resolv.conf "$ROOTFS/etc/resolv.conf"
  [ ! -e /etc/ssl/certs/ca-certificates.crt ] || cp /etc/ssl/certs/ca-certificates.crt "$ROOTFS/etc/ssl/certs/"
  [ ! -e /etc/pip.conf ] || cp /etc/pip.conf "$ROOTFS/etc/pip.conf"
}

run() {
  ensure
  host_config
  # The mounts live in a mount namespace of this command's own: they vanish
  # with it, other runs at the same time have theirs, and outside nothing
  # is ever mounted inside the root (so remaking it deletes only the root).
  if [ -z "${DEBIAN_PYTHONS_NS:-}" ]; then
    exec unshare --mount --propagation private env DEBIAN_PYTHONS_NS=1 bash "$0" run "$@"
  fi
  local go_root go_cache go_mod
  go_root=$(go env GOROOT) go_cache=$(go env GOCACHE) go_mod=$(go env GOMODCACHE)
  mkdir -p "$go_cache" "$go_mod"
  # Parents before children, the tree itself last.
  for p in /proc /sys /dev /dev/shm /tmp "$go_root" "$go_cache" "$go_mod" "$PWD"; do
    [ -d "$p" ] || continue
    mkdir -p "$ROOTFS$p"
    mount --bind "$p" "$ROOTFS$p"
  done
  # The host's CGO flags name the host's Python headers: builds in the root
  # take their own from sysconfig.
  exec chroot "$ROOTFS" /usr/bin/env -u CGO_CFLAGS -u CGO_LDFLAGS -u VIRTUAL_ENV -u PYENV_VERSION -u PIP_FIND_LINKS \
    -u DEBIAN_PYTHONS_NS PATH="$go_root/bin:/usr/local/bin:/usr/bin:/bin" HOME="$HOME" GOCACHE="$go_cache" \
    GOMODCACHE="$go_mod" GOFLAGS="${GOFLAGS:-}" GOTOOLCHAIN=local \
    /bin/sh -c 'cd "$1" && shift && exec "$@"' sh "$PWD" "$@"
}

case ${1:-} in
  ensure) ensure ;;
  has) [ -e "$STAMP" ] && [ -x "$ROOTFS/usr/bin/python$2" ] ;;
  run) shift; run "$@" ;;
  *) sed -n '2,14p' "$0" >&2; exit 2 ;;
esac
