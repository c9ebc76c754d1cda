"""Windows and macOS builds of Go extensions from this Linux machine, and
their static checks (make cross; tests/tooling/test_platforms.py).

    python tools/cross.py build -t TARGET -p 3.13 -n NAME -o DIR GOPKG
    python tools/cross.py check -t TARGET -p 3.13 -n NAME FILE
    python tools/cross.py all [-o DIR] [-p 3.13] [-t TARGET]...

all (make cross): godlpack's own module (./module) and a pyext extension
(tests/pyext/opmod) for each target, built and checked, with the seconds
each took.

build: `go build -buildmode=c-shared` with tools/zigcc.py's cross_go_env,
writing DIR/NAME<suffix>. check: what the binary needs from the machine it
loads on, against the target's real libpython (from the jar):
- macOS: it loads only libSystem (plus the CoreFoundation and libresolv that
  Go's runtime asks for and every Mac has, no symbol taken from them); every
  other undefined symbol is looked up in the process and is one that
  libpython3.X.dylib exports; the minimum macOS is the target's; arm64 is
  signed (LC_CODE_SIGNATURE); it exports _PyInit_NAME.
- Windows: it imports only python3XY.dll (only names that DLL exports),
  KERNEL32.dll and the UCRT (api-ms-win-crt-*); it exports PyInit_NAME.
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
import zigcc  # noqa: E402

MACOS_LOADS = {"/usr/lib/libSystem.B.dylib", "/usr/lib/libresolv.9.dylib",
               "/System/Library/Frameworks/CoreFoundation.framework/Versions/A/CoreFoundation"}


def llvm(tool: str) -> str:
    for name in (tool, f"{tool}-14", f"{tool}-15", f"{tool}-16"):
        if shutil.which(name):
            return name
    raise RuntimeError(f"{tool} is missing: `make cross-deps` installs Debian's llvm")


def _out(*cmd: str) -> str:
    return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout


def build(target: str, python: str, name: str, out: str, package: str, cwd: str = ".") -> str:
    """Builds Go package (a main package exporting PyInit_NAME) for target and
    CPython python; returns the file written."""
    env = zigcc.cross_go_env(target, python, dict(os.environ))
    os.makedirs(out, exist_ok=True)
    path = os.path.join(os.path.abspath(out), name + zigcc.foreign_ext_suffix(target, python))
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


def macos_problems(path: str, target: str, python: str, name: str) -> list[str]:
    """What is wrong with a macOS extension, as sentences ([] when nothing)."""
    bad = []
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


def windows_problems(path: str, target: str, python: str, name: str) -> list[str]:
    bad = []
    dll = f"python{python.replace('.', '')}.dll"
    imports = _pe_imports(_out(llvm("llvm-objdump"), "-p", path))
    exports = _pe_exports(_out(llvm("llvm-objdump"), "-p", zigcc.foreign_libpython(target, python)))
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


def problems(path: str, target: str, python: str, name: str) -> list[str]:
    target = zigcc.foreign(target)
    check = windows_problems if zigcc.FOREIGN[target][0] == "windows" else macos_problems
    return check(path, target, python, name)


# What `all` builds: (module name, Go package).
PACKAGES = [("_godlpack", "./module"), ("opmod", "./tests/pyext/opmod")]


def build_all(out: str, python: str, targets: list[str]) -> int:
    """Builds and checks PACKAGES for each target; prints a row each. The
    number of failures."""
    import time
    failed = 0
    for target in targets:
        for name, package in PACKAGES:
            t0 = time.monotonic()
            try:
                path = build(target, python, name, os.path.join(out, zigcc.foreign(target)), package)
                bad = problems(path, target, python, name)
            except (RuntimeError, subprocess.CalledProcessError) as e:
                path, bad = package, [str(e)]
            failed += bool(bad)
            print(f"{zigcc.foreign(target):20} {os.path.basename(path):36} {'ok' if not bad else 'FAILED'}  "
                  f"{time.monotonic() - t0:5.1f} s", flush=True)
            for b in bad:
                print(f"  {b}", file=sys.stderr)
    return failed


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="cross.py", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    for cmd in ("build", "check"):
        s = sub.add_parser(cmd)
        s.add_argument("-t", "--target", required=True)
        s.add_argument("-p", "--python", required=True, help="3.X")
        s.add_argument("-n", "--name", required=True, help="the module's name (PyInit_NAME)")
        if cmd == "build":
            s.add_argument("-o", "--out", required=True)
            s.add_argument("package")
        else:
            s.add_argument("file")
    s = sub.add_parser("all")
    s.add_argument("-o", "--out", default="build/cross")
    s.add_argument("-p", "--python", default="3.13")
    s.add_argument("-t", "--target", action="append", help="default: every Windows and macOS target")
    a = p.parse_args(argv)
    if a.cmd == "all":
        return 1 if build_all(a.out, a.python, a.target or list(zigcc.FOREIGN)) else 0
    if a.cmd == "build":
        print(build(a.target, a.python, a.name, a.out, a.package))
        return 0
    bad = problems(a.file, a.target, a.python, a.name)
    for b in bad:
        print(f"{a.file}: {b}", file=sys.stderr)
    if not bad:
        print(f"{os.path.basename(a.file)}: ok for {zigcc.foreign(a.target)}, CPython {a.python}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
