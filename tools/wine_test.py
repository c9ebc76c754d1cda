"""godlpack's Windows build run here under Wine (make wine-test): the
Windows CPython of the jar the cross builds use, with NumPy, pytest,
hypothesis and psutil's win_amd64 wheels, imports the cross-built wheel
and runs

  core     the core test files (mk/wheels.sh's QEMU_TESTS);
  pyext    a pyext extension (tests/pyext/opmod) and its checks
           (tests/pyext/opmod/check_opmod.py);
  runtimes Go runtimes side by side in one Windows process: godlpack, opmod
           and two copies of tests/pyext/spinmod (spin_a, spin_b); in each
           spin module a GC while its own loop spins, and godlpack's GC
           while spin_a spins, each within GC_BOUND_MS;
  scaffold a project made by `python -m godlpack new` (this tree's godlpack),
           its module generated from its //pyext: directives (pyextgen, as
           tools/godlpack_build.py's generate), cross-built, checked, and its
           own tests (test_NAME.py) run;
  abi3     the same pyext extension built against the stable ABI with
           CPython 3.12's headers (opmod.pyd, linking python3.dll), checked
           against 3.12's and 3.13's python3.dll, and its checks run on 3.13;
           then the scaffold project's stable-ABI wheel (`godlpack wheels
           --abi3 --target win_amd64`), checked, and its own tests run on 3.13.
           The jar's CPython has no python3.dll: the harness makes one
           (stable_abi_dll), forwarding as CPython's own does.

    python tools/wine_test.py [--only core|pyext|runtimes|scaffold|abi3]... [--install-only]

Set-up, each step cached under $GODLPACK_CROSS_CACHE/wine and done only
when missing: Debian's wine and wine64 (apt-get), the Windows CPython,
the wheels (pip download --platform win_amd64), the Wine prefix with the
Wine-only shims of tools/wine_shims.py (never in a product); the Wine
prefix ($TMPDIR/godlpack-wine-X-prefix, with those shims) is made once, outside
the tree (it links to /). The
builds (build/wine) come from tools/crosswheel.py and tools/cross.py.
Failures that are Wine's or this harness's are skipped, and known Windows
bugs are strict xfails, each with its reason (MARKS).
"""
from __future__ import annotations

import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cross  # noqa: E402
import crossdeps  # noqa: E402
import crosswheel  # noqa: E402
import godlpack_build  # noqa: E402
import wine_shims  # noqa: E402
import zigcc  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MINOR = "3.13"
CLASSIFIER = "windows-x86_64"
DEPS = ["numpy", "pytest", "hypothesis", "psutil"]
CORE = ["test_api", "test_numpy", "test_export", "test_from_dlpack", "test_malformed", "test_probe",
        "test_threads", "test_deleter_errors"]
# tests/pyext/test_runtimes.py's bound is 50 ms; Wine's SuspendThread on a
# shared 2-core machine took up to 41 ms. A GC that waited for the loop takes
# the whole spin (about 1 s) and finds it ended: still 5 times over this.
GC_BOUND_MS = 200.0
SPIN = 1_000_000_000

# node id (path relative to tests/) -> ("skip" | "xfail", reason).
MARKS = {
    "runtime/test_export.py::test_dl_device_gpu_from_cpu_with_stand_in_driver":
        ("skip", "builds its stand-in CUDA driver with this machine's C compiler, which the Windows "
                 "harness has not"),
}

_PLUGIN = '''"""pytest plugin of tools/wine_test.py: its MARKS, by node id."""
import os

import pytest

MARKS = {marks!r}
TESTS = {tests!r}


# tests/support/gomod.py builds a test extension on its import: here the
# Windows ones are built already (tools/cross.py).
try:
    import gomod
except ImportError:
    gomod = None
if gomod is not None:
    gomod._built.update({prebuilt!r})


def pytest_collection_modifyitems(items):
    for item in items:
        rel = os.path.relpath(str(item.path), TESTS).replace(os.sep, "/")
        key = rel + "::" + item.originalname
        if key in MARKS:
            kind, reason = MARKS[key]
            item.add_marker(pytest.mark.skip(reason="Wine harness: " + reason) if kind == "skip"
                            else pytest.mark.xfail(reason=reason, strict=True))
'''


def log(msg: str) -> None:
    print(f"wine-test: {msg}", flush=True)


def wine_dir() -> str:
    return os.path.join(crossdeps.cache(), "wine")


def ensure_wine() -> str:
    """The wine command, installed from Debian when missing."""
    if not shutil.which("wine"):
        log("installing Debian's wine and wine64")
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
        subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", "wine", "wine64"],
                       check=True, env=env, stdout=subprocess.DEVNULL)
    wine = shutil.which("wine")
    if not wine:
        raise RuntimeError("wine is missing after apt-get install wine wine64")
    return wine


def _done(path: str) -> bool:
    return os.path.exists(os.path.join(path, ".done"))


def _mark_done(path: str) -> None:
    open(os.path.join(path, ".done"), "w").close()


def python_home() -> str:
    """The jar's Windows CPython, its site-packages holding the test
    dependencies (NumPy's patched for the complex shim) and the sitecustomize
    shim: the harness's own copy, never a product."""
    version = crossdeps.full_version(CLASSIFIER, MINOR)
    home = os.path.join(wine_dir(), f"python-{version}")
    if not _done(home):
        shutil.rmtree(home, ignore_errors=True)
        prefix = f"org/bytedeco/cpython/{CLASSIFIER}/"
        with zipfile.ZipFile(crossdeps.jar(CLASSIFIER, version)) as z:
            for m in z.infolist():
                if m.filename.startswith(prefix) and not m.filename.endswith("/"):
                    dest = os.path.join(home, m.filename[len(prefix):])
                    os.makedirs(os.path.dirname(dest), exist_ok=True)
                    with z.open(m) as src, open(dest, "wb") as out:
                        shutil.copyfileobj(src, out)
        wheels = os.path.join(wine_dir(), f"wheels-{MINOR}")
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check",
                        "--platform", "win_amd64", "--python-version", MINOR, "--only-binary=:all:",
                        "-d", wheels, *DEPS], check=True)
        site = os.path.join(home, "lib", "site-packages")
        for whl in sorted(glob.glob(os.path.join(wheels, "*.whl"))):
            with zipfile.ZipFile(whl) as z:
                z.extractall(site)  # a wheel is its site-packages tree; no script is needed
        patched = [p for p in glob.glob(os.path.join(site, "numpy", "**", "*.pyd"), recursive=True)
                   if wine_shims.patch_imports(p)]
        if not patched:
            raise RuntimeError("no NumPy extension imports the UCRT's math set: the complex shim is stale")
        with open(os.path.join(site, "sitecustomize.py"), "w") as f:
            f.write(wine_shims.SITECUSTOMIZE)
        _mark_done(home)
    return home


def _objdump() -> str:
    return cross.llvm("llvm-objdump")


def prefix(wine: str, home: str) -> str:
    """The Wine prefix, made once per checkout, with the shim DLLs (cached) in its system32."""
    ver = subprocess.run([wine, "--version"], capture_output=True, text=True, check=True).stdout.split()[0]
    # Not in the cache: about 700 MB that wineboot makes in seconds. Not in the
    # tree either: its dosdevices/z: links to /, and a walk of the tree (goimports
    # of gopy's build, tests/tooling/test_gopy.py) would walk the whole disk.
    pfx = os.path.join(tempfile.gettempdir(), f"godlpack-{ver}-prefix")  # wine-8.0
    if not _done(pfx):
        shutil.rmtree(pfx, ignore_errors=True)
        subprocess.run(["wineboot", "-i"], env=wine_env(pfx), check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        subprocess.run(["wineserver", "-w"], env=wine_env(pfx), check=True)
        shims = os.path.join(wine_dir(), "shims")
        forward = sorted({n for p in glob.glob(os.path.join(home, "lib", "site-packages", "numpy", "**", "*.pyd"),
                                               recursive=True)
                          for n in _imports_of_shim(p)})
        dlls = [wine_shims.build_prng(shims), wine_shims.build_complex(shims, forward)]
        system32 = os.path.join(pfx, "drive_c", "windows", "system32")
        for d in dlls:
            shutil.copy(d, system32)
        _mark_done(pfx)
    return pfx


def _imports_of_shim(path: str) -> list[str]:
    # NumPy's pyds are patched already: their math imports name the shim.
    text = subprocess.run([_objdump(), "-p", path], capture_output=True, text=True, check=True).stdout
    out, inside = [], False
    for line in text.splitlines():
        if "DLL Name:" in line:
            inside = line.split()[-1].lower() == wine_shims.SHIM_NAME.decode()
        elif not line.strip():
            inside = False
        elif inside and len(line.split()) == 2 and line.split()[0].isdigit():
            out.append(line.split()[-1])
    return out


def wine_env(pfx: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "PYTHONPATH", "PYTHONHOME")}
    return dict(env, WINEPREFIX=pfx, WINEDEBUG="-all", WINEDLLOVERRIDES="mscoree,mshtml=", **extra)


def winpath(*paths: str) -> str:
    """Unix paths as one Windows PYTHONPATH (Wine's Z: is /)."""
    return ";".join("Z:" + os.path.abspath(p) for p in paths)


ABI3_HEADERS = "3.12"  # the abi3 step's build: the oldest stable ABI godlpack builds, run on MINOR


def stable_abi_dll(home: str) -> str:
    """home/python3.dll, which the jar's CPython lacks: as CPython's own
    (PC/python3dll.c), every name of the stable ABI forwarded to
    python3XY.dll, the names those of its import library, the jar's
    libs/python3.lib (a data export, one with no code thunk, as DATA).
    Built once with zig; harness-only, as the shims are."""
    dll = os.path.join(home, "python3.dll")
    if os.path.isfile(dll):
        return dll
    lib = os.path.join(home, "libs", "python3.lib")
    nm = subprocess.run([cross.llvm("llvm-nm"), lib], capture_output=True, text=True, check=True).stdout
    syms = {ln.split()[-1] for ln in nm.splitlines() if len(ln.split()) >= 2}
    names = sorted(n[len("__imp_"):] for n in syms if n.startswith("__imp_"))
    if len(names) < 500:
        raise RuntimeError(f"{lib} names {len(names)} exports: not the stable ABI's import library")
    target = MINOR.replace(".", "")
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "python3.def"), "w") as f:
            f.write("LIBRARY python3.dll\nEXPORTS\n")
            f.writelines(f"{n} = python{target}.{n}{'' if n in syms else ' DATA'}\n" for n in names)
        with open(os.path.join(tmp, "empty.c"), "w") as f:
            f.write("/* python3.dll has no code: forwarders only */\n")
        r = subprocess.run(zigcc.cc("x86_64-windows-gnu") + ["-shared", "-o", "python3.dll", "empty.c", "python3.def"],
                           cwd=tmp, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"zig cc python3.dll failed:\n{r.stderr}")
        shutil.copy(os.path.join(tmp, "python3.dll"), dll + ".part")  # alone: zig's .lib and .pdb stay in tmp
    os.replace(dll + ".part", dll)
    return dll


def build_abi3(out: str) -> str:
    """opmod against the stable ABI (ABI3_HEADERS' headers, python3.dll) in
    out, checked against the python3.dll of ABI3_HEADERS and of MINOR; its path."""
    target = "x86_64-windows-gnu"
    path = cross.build(target, ABI3_HEADERS, "opmod", out, "./tests/pyext/opmod", cwd=ROOT, abi3=True)
    for python in (ABI3_HEADERS, MINOR):
        bad = cross.problems(path, target, python, "opmod", abi3=True)
        if bad:
            raise RuntimeError(f"{os.path.basename(path)} against CPython {python}'s python3.dll: " + "; ".join(bad))
    return path


def build_abi3_scaffold(out: str) -> tuple[str, str]:
    """A `python -m godlpack new` project's stable-ABI win_amd64 wheel, as
    `godlpack wheels --abi3 --target win_amd64` makes it (tools/zigcc.py's
    foreign_wheels: ABI3_HEADERS' headers, checked), its NAME.pyd checked
    against MINOR's python3.dll too, unpacked: (the project, the unpacked wheel)."""
    out = os.path.abspath(out)
    project = scaffold_project(os.path.join(out, SCAFFOLD))
    (whl,) = zigcc.foreign_wheels(project, os.path.join(out, "wheel"), ["win_amd64"], abi3=True)
    if not os.path.basename(whl).endswith("-cp312-abi3-win_amd64.whl"):
        raise RuntimeError(f"{whl}: not a cp312-abi3-win_amd64 wheel")
    site = os.path.join(out, "site")
    shutil.rmtree(site, ignore_errors=True)
    with zipfile.ZipFile(whl) as z:
        z.extractall(site)
    pyd = os.path.join(site, SCAFFOLD + ".pyd")
    bad = cross.problems(pyd, "x86_64-windows-gnu", MINOR, SCAFFOLD, abi3=True)
    if bad:
        raise RuntimeError(f"{os.path.basename(pyd)} against CPython {MINOR}'s python3.dll: " + "; ".join(bad))
    return project, site


def build(out: str) -> dict[str, str]:
    """godlpack's win_amd64 wheel unpacked (out/site), opmod and spin_a/spin_b
    (out/ext): each checked by tools/cross.py first."""
    target = "x86_64-windows-gnu"
    site, ext = os.path.join(out, "site"), os.path.join(out, "ext")
    shutil.rmtree(out, ignore_errors=True)
    (whl,) = crosswheel.build_wheels(os.path.join(out, "wheel"), ["win_amd64"], [MINOR])
    with zipfile.ZipFile(whl) as z:
        z.extractall(site)
    for name, pkg in (("opmod", "./tests/pyext/opmod"), ("spin_a", "./tests/pyext/spinmod")):
        path = cross.build(target, MINOR, name, ext, pkg, cwd=ROOT)
        bad = cross.problems(path, target, MINOR, name)
        if bad:
            raise RuntimeError(f"{os.path.basename(path)}: " + "; ".join(bad))
    spin_a = glob.glob(os.path.join(ext, "spin_a.*.pyd"))[0]
    shutil.copy(spin_a, spin_a.replace("spin_a", "spin_b"))  # a copy: its own DLL, its own Go runtime
    return {"site": site, "ext": ext}


SCAFFOLD = "winscaf"  # the scaffold step's project and module name


def scaffold_project(dest: str) -> str:
    """`python -m godlpack new SCAFFOLD dest` with this tree's godlpack, then
    its pyext_gen.go from the //pyext: directives; returns dest."""
    shutil.rmtree(dest, ignore_errors=True)
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    r = subprocess.run([sys.executable, "-m", "godlpack", "new", SCAFFOLD, dest], env=env,
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"python -m godlpack new {SCAFFOLD} failed: {(r.stdout + r.stderr).strip()}")
    go, genv = godlpack_build._go()
    godlpack_build.generate(go, dict(genv, GOFLAGS="-buildvcs=false"), ".", dest)
    if not os.path.isfile(os.path.join(dest, "pyext_gen.go")):
        raise RuntimeError(f"{dest}: the build's generate step wrote no pyext_gen.go")
    return dest


def build_scaffold(dest: str, ext: str) -> str:
    """The scaffold project's module cross-built for Windows into ext and
    checked (tools/cross.py); its path."""
    target = "x86_64-windows-gnu"
    path = cross.build(target, MINOR, SCAFFOLD, ext, ".", cwd=dest)
    bad = cross.problems(path, target, MINOR, SCAFFOLD)
    if bad:
        raise RuntimeError(f"{os.path.basename(path)}: " + "; ".join(bad))
    return path


def run_python(wine: str, home: str, pfx: str, args: list[str], pythonpath: str, timeout: int,
               cwd: str) -> tuple[int, str]:
    # Wine 8's python.exe dies when its stdout is a file: a pipe it is.
    r = subprocess.run([wine, os.path.join(home, "python.exe"), *args], cwd=cwd, timeout=timeout,
                       env=wine_env(pfx, PYTHONPATH=pythonpath), stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True, errors="replace")
    return r.returncode, r.stdout


def _pytest(wine: str, home: str, pfx: str, paths: list[str], tests: list[str], extra: list[str],
            name: str, prebuilt: dict[str, str] | None = None) -> bool:
    # tests: paths under tests/, or absolute ones (the scaffold's project)
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "pytest.ini"), "w") as f:
            f.write("[pytest]\n")
        with open(os.path.join(tmp, "wine_marks.py"), "w") as f:
            f.write(_PLUGIN.format(marks=MARKS, tests="Z:" + os.path.join(ROOT, "tests"),
                                  prebuilt={k: "Z:" + v for k, v in (prebuilt or {}).items()}))
        t0 = time.monotonic()
        rc, text = run_python(wine, home, pfx, ["-m", "pytest", "-q", "-rsxX", "-p", "no:cacheprovider",
                                                "-p", "wine_marks", "-c", "pytest.ini", "--rootdir", tmp,
                                                *extra, *["Z:" + os.path.join(ROOT, "tests", t) for t in tests]],
                              winpath(tmp, *paths), 900, tmp)
    lines = text.rstrip().splitlines()
    keep = [ln for ln in lines if ln.startswith(("FAILED", "ERROR", "SKIPPED", "XFAIL", "XPASS"))]
    for ln in keep:
        print("  " + ln)
    log(f"{name}: {lines[-1].strip('= ') if lines else 'no output'}  ({time.monotonic() - t0:.1f} s)")
    if rc != 0 and not keep:
        print(text[-4000:])
    return rc == 0


RUNTIMES = r"""
import json, sys, threading, time
import godlpack, opmod, spin_a, spin_b
from godlpack import _godlpack
bound, n = float(sys.argv[1]), int(sys.argv[2])
out = {"gc_ms": {}, "still_spinning": {}}
assert opmod.countdown and list(opmod.countdown(3)) == [3, 2, 1]
for name, m in (("spin_a", spin_a), ("spin_b", spin_b)):
    t = threading.Thread(target=m.spin, args=(n,))
    t.start()
    while not m.is_spinning():
        time.sleep(0.001)
    time.sleep(0.02)
    out["gc_ms"][name] = m.gc_ms()
    out["still_spinning"][name] = m.is_spinning()
    if name == "spin_a":  # godlpack's runtime collects (two runtime.GC) while spin_a's loop runs
        t0 = time.perf_counter()
        _godlpack._go_stats()
        out["gc_ms"]["godlpack"] = (time.perf_counter() - t0) * 1e3 / 3  # two GCs and ReadMemStats: three stops
        out["opmod_while_spinning"] = list(opmod.countdown(2))
        out["still_spinning"]["godlpack"] = m.is_spinning()
    t.join(120)
    assert not t.is_alive(), name + ": spin did not end"
out["runtimes"] = [list(r) for r in godlpack.go_runtimes()]
print(json.dumps(out))
bad = [k for k, v in out["gc_ms"].items() if v >= bound] + [k for k, v in out["still_spinning"].items() if not v]
if len(out["runtimes"]) != 4 or out["opmod_while_spinning"] != [2, 1]:
    bad.append("runtimes")
sys.exit("FAILED: " + ", ".join(bad) if bad else 0)
"""


def check_runtimes(wine: str, home: str, pfx: str, built: dict[str, str]) -> bool:
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        rc, text = run_python(wine, home, pfx, ["-c", RUNTIMES, str(GC_BOUND_MS), str(SPIN)],
                              winpath(built["site"], built["ext"]), 300, tmp)
    print("  " + text.strip().replace("\n", "\n  "))
    log(f"runtimes: {'passed' if rc == 0 else 'FAILED'}: godlpack, opmod, spin_a, spin_b in one process, "
        f"GC bound {GC_BOUND_MS:.0f} ms  ({time.monotonic() - t0:.1f} s)")
    return rc == 0


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="wine_test.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--only", action="append", choices=["core", "pyext", "runtimes", "scaffold", "abi3"])
    p.add_argument("-o", "--out", default=os.path.join(ROOT, "build", "wine"))
    p.add_argument("--install-only", action="store_true",
                   help="install Debian's wine where missing, and exit (CI: before its lanes, one apt at a time)")
    a = p.parse_args(argv)
    steps = a.only or ["core", "pyext", "runtimes", "scaffold", "abi3"]
    t0 = time.monotonic()
    wine = ensure_wine()
    if a.install_only:
        return 0
    home = python_home()
    pfx = prefix(wine, home)
    log(f"set-up {time.monotonic() - t0:.1f} s ({wine_dir()})")
    t1 = time.monotonic()
    built = {}
    if set(steps) - {"scaffold"}:
        built = build(a.out)
        log(f"cross-built godlpack's win_amd64 wheel, opmod, spinmod  ({time.monotonic() - t1:.1f} s)")
    support = os.path.join(ROOT, "tests", "support")
    ok = True
    if "core" in steps:
        ok &= _pytest(wine, home, pfx, [built["site"], support], [f"runtime/{t}.py" for t in CORE], [], "core")
    if "pyext" in steps:
        ok &= _pytest(wine, home, pfx, [built["site"], built["ext"], support, os.path.join(ROOT, "tests", "pyext")],
                      ["pyext/opmod/check_opmod.py"], ["-o", "python_files=check_*.py"], "pyext (opmod)",
                      {"opmod": glob.glob(os.path.join(built["ext"], "opmod.*.pyd"))[0]})
    if "runtimes" in steps:
        ok &= check_runtimes(wine, home, pfx, built)
    if "scaffold" in steps:
        t1 = time.monotonic()
        project = scaffold_project(os.path.join(a.out, "scaffold", SCAFFOLD))
        ext = os.path.dirname(build_scaffold(project, os.path.join(a.out, "scaffold", "ext")))
        log(f"scaffold: python -m godlpack new {SCAFFOLD}, generated, cross-built, checked  "
            f"({time.monotonic() - t1:.1f} s)")
        ok &= _pytest(wine, home, pfx, [ext], [os.path.join(project, f"test_{SCAFFOLD}.py")], [],
                      f"scaffold (test_{SCAFFOLD}.py)")
    if "abi3" in steps:
        t1 = time.monotonic()
        stable_abi_dll(home)
        pyd = build_abi3(os.path.join(a.out, "abi3"))
        log(f"abi3: opmod.pyd built with CPython {ABI3_HEADERS}'s headers against python3.dll, checked  "
            f"({time.monotonic() - t1:.1f} s)")
        paths = [built["site"], os.path.dirname(pyd), support, os.path.join(ROOT, "tests", "pyext")]
        ok &= _pytest(wine, home, pfx, paths,
                      ["pyext/opmod/check_opmod.py"], ["-o", "python_files=check_*.py"],
                      f"abi3 (opmod.pyd on CPython {MINOR})", {"opmod": pyd})
        t1 = time.monotonic()
        project, site = build_abi3_scaffold(os.path.join(a.out, "abi3", "scaffold"))
        log(f"abi3: the scaffold's cp312-abi3-win_amd64 wheel (godlpack wheels --abi3), checked  "
            f"({time.monotonic() - t1:.1f} s)")
        ok &= _pytest(wine, home, pfx, [site], [os.path.join(project, f"test_{SCAFFOLD}.py")], [],
                      f"abi3 scaffold ({SCAFFOLD}.pyd, test_{SCAFFOLD}.py on CPython {MINOR})")
    log(f"{'passed' if ok else 'FAILED'} in {time.monotonic() - t0:.1f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
