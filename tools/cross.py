"""Windows and macOS builds of Go extensions from this Linux machine, and
their static checks (make cross; tests/tooling/test_platforms.py).

    python tools/cross.py build -t TARGET -p 3.13 -n NAME -o DIR GOPKG
    python tools/cross.py check -t TARGET -p 3.13 -n NAME FILE
    python tools/cross.py all [-o DIR] [-p 3.13] [-t TARGET]...

all (make cross): godlpack's own module (./module) and a pyext extension
(tests/pyext/opmod) for each target, built and checked, with the seconds
each took; then the universal2 file of each, joined from its arm64 and
x86_64 builds (tools/fatmacho.py), checked slice by slice. all --abi3: the
pyext extension alone, against the stable ABI (--abi3 below).

TARGET: a zig target or wheel platform of tools/zigcc.py's FOREIGN, or
macosx_12_0_universal2 (both macOS builds in one fat file, for the CPython
versions both have headers for).

build: `go build -buildmode=c-shared` with tools/zigcc.py's cross_go_env,
writing DIR/NAME<suffix>. check: what the binary needs from the machine it
loads on, against the target's real libpython (from the jar):
- macOS: it loads only libSystem (plus the CoreFoundation and libresolv that
  Go's runtime asks for and every Mac has, no symbol taken from them); every
  other undefined symbol is looked up in the process and is one that
  libpython3.X.dylib exports; the minimum macOS is the target's; arm64 is
  signed (LC_CODE_SIGNATURE); it exports _PyInit_NAME.
- macOS universal2: both slices, arm64 and x86_64, each passing the checks
  above for its own architecture.
- Windows: it imports only python3XY.dll (only names that DLL exports),
  KERNEL32.dll and the UCRT (api-ms-win-crt-*); it exports PyInit_NAME.
- --abi3 (a stable-ABI build, limited API of 3.12, NAME.pyd / NAME.abi3.so):
  Windows imports python3.dll instead, only names the python3.dll of that
  CPython exports (the jar's libs/python3.lib); on macOS every symbol bound
  from libpython is also one the target's Python.h declares under
  Py_LIMITED_API=0x030c0000.
Needs llvm-objdump and llvm-nm (Debian's llvm: make cross-deps).
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fatmacho  # noqa: E402
import zigcc  # noqa: E402

MACOS_LOADS = {"/usr/lib/libSystem.B.dylib", "/usr/lib/libresolv.9.dylib",
               "/System/Library/Frameworks/CoreFoundation.framework/Versions/A/CoreFoundation"}


UNIVERSAL2 = "macosx_12_0_universal2"
# universal2's slices: fatmacho's architecture name -> the zig target of its build.
UNIVERSAL2_SLICES = {"arm64": "aarch64-macos.12.0", "x86_64": "x86_64-macos.12.0"}


def universal2_pythons() -> list[str]:
    """The CPython versions (3.X) with both arm64 and x86_64 macOS headers."""
    x86 = zigcc.foreign_pythons(UNIVERSAL2_SLICES["x86_64"])
    return [p for p in zigcc.foreign_pythons(UNIVERSAL2_SLICES["arm64"]) if p in x86]


def _universal2_python(python: str) -> None:
    if python not in universal2_pythons():
        raise ValueError(f"no universal2 build for CPython {python}: both macOS targets have headers only for "
                         f"{', '.join(universal2_pythons())}")


def ext_suffix(target: str, python: str, abi3: bool = False) -> str:
    """The extension suffix for CPython python (3.X) on target (universal2 too)."""
    return zigcc.foreign_ext_suffix(UNIVERSAL2_SLICES["arm64"] if target == UNIVERSAL2 else target, python, abi3)


def wheel_tag(target: str, python: str, abi3: bool = False) -> str:
    """cp3XY-cp3XY-<platform> for CPython python (3.X) on target (universal2
    too); abi3: cp312-abi3-<platform>."""
    if target == UNIVERSAL2:
        _universal2_python(python)
        xy = python.replace(".", "")
        return f"{zigcc.ABI3_TAG}-abi3-{UNIVERSAL2}" if abi3 else f"cp{xy}-cp{xy}-{UNIVERSAL2}"
    return zigcc.foreign_wheel_tag(target, python, abi3)


def abi3_python(target: str) -> str:
    """The CPython (3.X) whose headers a stable-ABI build for target (universal2
    too) compiles with: the oldest from 3.12 on that it has."""
    if target == UNIVERSAL2:
        return next(p for p in universal2_pythons() if tuple(map(int, p.split("."))) >= (3, 12))
    return zigcc.abi3_python(target)


def universal2(arm64: str, x86_64: str, out: str) -> str:
    """Joins an arm64 and an x86_64 build into the fat file out (its path)."""
    with open(arm64, "rb") as a, open(x86_64, "rb") as x:
        data = fatmacho.join([x.read(), a.read()])  # lipo's order: x86_64 first
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out + ".part", "wb") as f:
        f.write(data)
    os.replace(out + ".part", out)
    return out


def llvm(tool: str) -> str:
    for name in (tool, f"{tool}-14", f"{tool}-15", f"{tool}-16"):
        if shutil.which(name):
            return name
    raise RuntimeError(f"{tool} is missing: `make cross-deps` installs Debian's llvm")


def _out(*cmd: str) -> str:
    return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout


def build(target: str, python: str, name: str, out: str, package: str, cwd: str = ".", abi3: bool = False) -> str:
    """Builds Go package (a main package exporting PyInit_NAME) for target and
    CPython python; returns the file written. universal2: both macOS builds
    (in out/arm64 and out/x86_64) joined. abi3: against the stable ABI
    (limited API of 3.12, python's headers), named NAME.pyd / NAME.abi3.so."""
    if target == UNIVERSAL2:
        _universal2_python(python)
        thin = {a: build(t, python, name, os.path.join(out, a), package, cwd, abi3)
                for a, t in UNIVERSAL2_SLICES.items()}
        return universal2(thin["arm64"], thin["x86_64"], os.path.join(out, name + ext_suffix(target, python, abi3)))
    env = zigcc.cross_go_env(target, python, dict(os.environ), abi3)
    os.makedirs(out, exist_ok=True)
    path = os.path.join(os.path.abspath(out), name + zigcc.foreign_ext_suffix(target, python, abi3))
    go = shutil.which("go") or "go"
    # stripped, as the Linux release wheels are (-s -w: no symbol table, no DWARF)
    r = subprocess.run([go, "build", "-trimpath", "-buildmode=c-shared", "-ldflags=-s -w", "-o", path, package],
                       cwd=cwd, env=env,
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"go build {package} for {target}, CPython {python} failed:\n{r.stderr}")
    header = os.path.splitext(path)[0] + ".h"  # cgo's header of the exports: not part of an extension
    if os.path.exists(header):
        os.remove(header)
    return path


def limited_names(target: str, python: str) -> set[str]:
    """Every Py* name the target's Python.h (CPython python) declares under
    Py_LIMITED_API=3.12: what a stable-ABI extension may bind (abi3audit's
    rule), plus the stable ABI's _SizeT helpers, which 3.12's headers name
    (PY_SSIZE_T_CLEAN) and 3.13's no longer declare."""
    key = (zigcc.foreign(target), python)
    if key not in _LIMITED:
        env = zigcc.cross_go_env(key[0], python, {}, abi3=True)
        r = subprocess.run(zigcc.cc(key[0]) + ["-E", *env["CGO_CFLAGS"].split(), "-x", "c", "-"],
                           input="#include <Python.h>\n", capture_output=True, text=True, check=True)
        _LIMITED[key] = set(re.findall(r"\b_?Py\w+", r.stdout)) | _SIZE_T_HELPERS
    return _LIMITED[key]


_LIMITED: dict[tuple[str, str], set[str]] = {}
# CPython's Misc/stable_abi.toml lists these as abi_only: exported by every
# CPython since 3.2 for extensions whose macros named them.
_SIZE_T_HELPERS = {f"_{n}_SizeT" for n in ("PyArg_Parse", "PyArg_ParseTuple", "PyArg_ParseTupleAndKeywords",
                                           "PyArg_VaParse", "PyArg_VaParseTupleAndKeywords", "Py_BuildValue",
                                           "Py_VaBuildValue", "PyObject_CallFunction", "PyObject_CallMethod")}


def macos_problems(path: str, target: str, python: str, name: str, abi3: bool = False) -> list[str]:
    """What is wrong with a macOS extension, as sentences ([] when nothing).
    abi3: each symbol from libpython is also in the limited API."""
    bad = []
    limited = limited_names(target, python) if abi3 else set()
    dylibs = [ln.strip().split(" (compatibility")[0] for ln in _out(llvm("llvm-objdump"), "--macho",
                                                                   "--dylibs-used", path).splitlines()[2:]]
    bad += [f"loads {d}, which a Mac without it lacks" for d in dylibs if d not in MACOS_LOADS]
    exports = set(_out(llvm("llvm-nm"), "-gUj", zigcc.foreign_libpython(target, python)).split())
    for line in _out(llvm("llvm-nm"), "-u", "-m", path).splitlines():
        m = re.match(r"\s*\(undefined\) (?:weak )?external (\S+)(?: \(from (\S+)\))?", line)
        if not m:
            continue
        sym, lib = m.groups()
        if lib is None and sym not in exports:
            bad.append(f"binds {sym}, which libpython{python}.dylib does not export")
        elif lib is None and abi3 and sym[1:] not in limited:  # Mach-O names start with _
            bad.append(f"binds {sym}, which is outside the limited API (stable ABI) of 3.12")
        elif lib is not None and lib != "libSystem":
            bad.append(f"binds {sym} from {lib}")
    headers = _out(llvm("llvm-objdump"), "--macho", "--private-headers", path)
    want = target.split("-macos.", 1)[1]  # the zig target names it: aarch64-macos.12.0
    minos = re.findall(r"minos (\S+)", headers)
    if minos != [want]:
        bad.append(f"states minimum macOS {minos}, want [{want!r}]")
    if target.startswith("aarch64") and "LC_CODE_SIGNATURE" not in headers:
        bad.append("is not signed (arm64 macOS loads only signed code)")
    if f"_PyInit_{name}" not in _out(llvm("llvm-nm"), "-gUj", path).split():
        bad.append(f"does not export _PyInit_{name}")
    return bad


def _pe_imports(text: str) -> dict[str, list[str]]:
    imports: dict[str, list[str]] = {}
    dll = None
    for line in text.splitlines():
        m = re.match(r"\s*DLL Name: (\S+)", line)
        if m:
            dll = m.group(1)
            imports[dll] = []
        elif dll and re.match(r"\s+\d+\s+\S+$", line):
            imports[dll].append(line.split()[-1])
        elif not line.strip():
            dll = None
    return imports


def _pe_exports(text: str) -> set[str]:
    part = text.split("Export Table:", 1)
    return set(re.findall(r"^\s+\d+\s+0x[0-9a-f]+\s+(\S+)$", part[1], re.M)) if len(part) == 2 else set()


def stable_abi_exports(python: str) -> set[str]:
    """What the python3.dll of Windows CPython python (3.X) exports: the
    names of its import library, the jar's libs/python3.lib."""
    d = zigcc._crossdeps()
    lib = d.stable_abi_lib(d.full_version("windows-x86_64", python))
    return {s[len("__imp_"):] for s in _out(llvm("llvm-nm"), "-j", lib).split() if s.startswith("__imp_")}


def windows_problems(path: str, target: str, python: str, name: str, abi3: bool = False) -> list[str]:
    """What is wrong with a Windows extension, as sentences ([] when nothing).
    abi3: it imports python3.dll (names that python's python3.dll exports),
    not python3XY.dll."""
    bad = []
    dll = "python3.dll" if abi3 else f"python{python.replace('.', '')}.dll"
    imports = _pe_imports(_out(llvm("llvm-objdump"), "-p", path))
    exports = (stable_abi_exports(python) if abi3 else
               _pe_exports(_out(llvm("llvm-objdump"), "-p", zigcc.foreign_libpython(target, python))))
    for lib, names in imports.items():
        if lib == dll:
            bad += [f"imports {n} from {dll}, which does not export it" for n in names if n not in exports]
        elif lib.upper() != "KERNEL32.DLL" and not lib.lower().startswith("api-ms-win-crt-"):
            bad.append(f"imports from {lib}, not part of Windows' KERNEL32 or UCRT")
    if dll not in imports:
        bad.append(f"does not import {dll}")
    if f"PyInit_{name}" not in _pe_exports(_out(llvm("llvm-objdump"), "-p", path)):
        bad.append(f"does not export PyInit_{name}")
    return bad


def universal2_problems(path: str, python: str, name: str, abi3: bool = False) -> list[str]:
    """What is wrong with a universal2 file: a missing slice, or what is wrong
    with a slice, as macos_problems says it for its architecture."""
    import tempfile
    try:
        with open(path, "rb") as f:
            parts = fatmacho.slices(f.read())
    except ValueError as e:
        return [str(e)]
    bad = [f"lacks the {a} slice" for a in UNIVERSAL2_SLICES if a not in parts]
    bad += [f"holds a {a} slice, not part of universal2" for a in parts if a not in UNIVERSAL2_SLICES]
    with tempfile.TemporaryDirectory() as tmp:
        for a, target in UNIVERSAL2_SLICES.items():
            if a in parts:
                thin = os.path.join(tmp, a + ".so")
                with open(thin, "wb") as f:
                    f.write(parts[a])
                bad += [f"{a} slice: {b}" for b in macos_problems(thin, target, python, name, abi3)]
    return bad


def problems(path: str, target: str, python: str, name: str, abi3: bool = False) -> list[str]:
    """What is wrong with an extension for target, CPython python (abi3: a
    stable-ABI one, checked against that CPython's libraries)."""
    if target == UNIVERSAL2:
        return universal2_problems(path, python, name, abi3)
    target = zigcc.foreign(target)
    check = windows_problems if zigcc.FOREIGN[target][0] == "windows" else macos_problems
    return check(path, target, python, name, abi3)


# What `all` builds: (module name, Go package).
PACKAGES = [("_godlpack", "./module"), ("opmod", "./tests/pyext/opmod")]


def _row(target: str, path: str, bad: list[str], t0: float) -> None:
    import time
    print(f"{target:22} {os.path.basename(path):36} {'ok' if not bad else 'FAILED'}  "
          f"{time.monotonic() - t0:5.1f} s", flush=True)
    for b in bad:
        print(f"  {b}", file=sys.stderr)


def build_all(out: str, python: str, targets: list[str], abi3: bool = False) -> int:
    """Builds and checks PACKAGES for each target (universal2: joined from
    the two macOS builds, made first where they are not among targets);
    prints a row each. The number of failures. abi3: the pyext extension
    alone (godlpack's own module is version-specific), against the stable
    ABI, with the headers of abi3_python(target) (python is not used)."""
    import time
    failed = 0
    packages = [p for p in PACKAGES if p[1] != "./module"] if abi3 else PACKAGES
    thin_targets = [zigcc.foreign(t) for t in targets if t != UNIVERSAL2]
    fat = UNIVERSAL2 in targets
    for t in UNIVERSAL2_SLICES.values() if fat else ():
        if t not in thin_targets:
            thin_targets.append(t)
    built: dict[tuple[str, str], str] = {}
    pythons = {t: abi3_python(t) if abi3 else python for t in [*thin_targets, UNIVERSAL2]}
    if abi3 and fat:  # universal2's slices: one CPython's headers (macOS arm64 starts at 3.13)
        pythons.update({t: pythons[UNIVERSAL2] for t in UNIVERSAL2_SLICES.values()})
    for target in thin_targets:
        for name, package in packages:
            t0 = time.monotonic()
            try:
                path = build(target, pythons[target], name, os.path.join(out, target), package, abi3=abi3)
                bad = problems(path, target, pythons[target], name, abi3)
                built[target, name] = path
            except (RuntimeError, subprocess.CalledProcessError) as e:
                path, bad = package, [str(e)]
            failed += bool(bad)
            _row(target, path, bad, t0)
    for name, package in packages if fat else ():
        t0 = time.monotonic()
        thin = [built.get((t, name)) for t in UNIVERSAL2_SLICES.values()]
        if None in thin:
            path, bad = package, ["a macOS build failed: no universal2 file"]
        else:
            path = os.path.join(out, UNIVERSAL2, name + ext_suffix(UNIVERSAL2, pythons[UNIVERSAL2], abi3))
            path = universal2(thin[0], thin[1], path)
            bad = problems(path, UNIVERSAL2, pythons[UNIVERSAL2], name, abi3)
        failed += bool(bad)
        _row(UNIVERSAL2, path, bad, t0)
    return failed


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="cross.py", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    for cmd in ("build", "check"):
        s = sub.add_parser(cmd)
        s.add_argument("-t", "--target", required=True)
        s.add_argument("-p", "--python", required=True, help="3.X")
        s.add_argument("-n", "--name", required=True, help="the module's name (PyInit_NAME)")
        s.add_argument("--abi3", action="store_true", help="a stable-ABI extension (limited API of 3.12; "
                       "Windows: python3.dll), -p naming the CPython whose headers and libraries it uses")
        if cmd == "build":
            s.add_argument("-o", "--out", required=True)
            s.add_argument("package")
        else:
            s.add_argument("file")
    s = sub.add_parser("all")
    s.add_argument("-o", "--out", default="build/cross")
    s.add_argument("-p", "--python", default="3.13")
    s.add_argument("-t", "--target", action="append",
                   help="default: every Windows and macOS target, and universal2 where the CPython has both")
    s.add_argument("--abi3", action="store_true", help="the pyext extension alone, against the stable ABI "
                   "(each target's oldest headers from 3.12 on)")
    a = p.parse_args(argv)
    if a.cmd == "all":
        targets = a.target or list(zigcc.FOREIGN) + ([UNIVERSAL2] if a.python in universal2_pythons() else [])
        return 1 if build_all(a.out, a.python, targets, a.abi3) else 0
    if a.cmd == "build":
        print(build(a.target, a.python, a.name, a.out, a.package, abi3=a.abi3))
        return 0
    bad = problems(a.file, a.target, a.python, a.name, a.abi3)
    for b in bad:
        print(f"{a.file}: {b}", file=sys.stderr)
    if not bad:
        print(f"{os.path.basename(a.file)}: ok for {a.target if a.target == UNIVERSAL2 else zigcc.foreign(a.target)}, "
          f"CPython {a.python}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
