"""Stable-ABI (abi3) builds for the cross targets: one manylinux2014 wheel per
architecture through zig (the build backend with a target and abi3, then
tools/zigcc.py's auditwheel repair; this machine's architecture, run on 3.12
and 3.13), tools/cross.py's abi3 checks
(Windows: python3.dll and what it exports; macOS: only the limited API) on
binaries made to pass and to fail them, the names and tags, the CLI's
--abi3, and the Wine harness's python3.dll.

Real cross builds run elsewhere, outside make test's budget: `make cross`
builds and checks opmod against the stable ABI for macOS (arm64, x86_64,
universal2; tools/cross.py all --abi3), and `make wine-test` builds opmod and
a `godlpack new` project's wheel (`godlpack wheels --abi3 --target
win_amd64`) for Windows and runs their tests under Wine (its abi3 step).
"""
from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import zipfile

import pytest
from harness import child_env
from test_abi3 import EXERCISE, _limited_names, _pythons, _setuptools_only

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))
if os.path.isdir(os.path.join(ROOT, ".crosscache")):  # make cross's cache; else crossdeps' own (~/.cache)
    os.environ.setdefault("GODLPACK_CROSS_CACHE", os.path.join(ROOT, ".crosscache"))
import cross  # noqa: E402
import godlpack_build  # noqa: E402
import zigcc  # noqa: E402

needs_zig = pytest.mark.skipif(importlib.util.find_spec("ziglang") is None, reason="ziglang is not installed")
LLVM_NM = next((t for t in ("llvm-nm", "llvm-nm-14") if shutil.which(t)), None)
needs_llvm = pytest.mark.skipif(LLVM_NM is None, reason="the checks need llvm-objdump and llvm-nm: make cross-deps")
WIN, MAC_ARM = "x86_64-windows-gnu", "aarch64-macos.12.0"


def test_the_stable_abi_is_3_12s_in_every_tool():
    assert (zigcc.ABI3_TAG, zigcc.ABI3_LIMITED_API) == (godlpack_build.ABI3_TAG, godlpack_build.ABI3_LIMITED_API)


@pytest.mark.parametrize("target, suffix, tag", [
    ("win_amd64", ".pyd", "cp312-abi3-win_amd64"),
    ("macosx_12_0_arm64", ".abi3.so", "cp312-abi3-macosx_12_0_arm64"),
    ("macosx_12_0_x86_64", ".abi3.so", "cp312-abi3-macosx_12_0_x86_64"),
    (cross.UNIVERSAL2, ".abi3.so", "cp312-abi3-macosx_12_0_universal2"),
])
def test_an_abi3_module_and_wheel_are_named_for_every_cpython(target, suffix, tag):
    python = cross.abi3_python(target)
    assert tuple(map(int, python.split("."))) >= (3, 12)
    assert cross.ext_suffix(target, python, abi3=True) == suffix
    assert cross.wheel_tag(target, python, abi3=True) == tag
    # the oldest the target has from 3.12 on: macOS arm64 (and so universal2) starts at 3.13
    assert python == ("3.13" if target in ("macosx_12_0_arm64", cross.UNIVERSAL2) else "3.12")


@needs_zig
def test_abi3_compiles_the_limited_api_and_windows_links_python3_dll():
    win = zigcc.cross_go_env(WIN, "3.12", {}, abi3=True)
    assert f"-DPy_LIMITED_API={zigcc.ABI3_LIMITED_API}" in win["CGO_CFLAGS"].split()
    assert "-lpython3" in win["CGO_LDFLAGS"].split() and "-lpython312" not in win["CGO_LDFLAGS"].split()
    assert "-lpython312" in zigcc.cross_go_env(WIN, "3.12", {})["CGO_LDFLAGS"].split()
    assert "Py_LIMITED_API" not in zigcc.cross_go_env(WIN, "3.12", {})["CGO_CFLAGS"]
    with pytest.raises(ValueError, match=r"needs CPython >= 3\.12 headers, not 3\.11"):
        zigcc.cross_go_env(WIN, "3.11", {}, abi3=True)


def _zig_dll(tmp_path, target: str, src: str, out: str, *flags: str) -> str:
    c = tmp_path / (out + ".c")
    c.write_text(src)
    path = str(tmp_path / out)
    subprocess.run(zigcc.cc(target) + ["-shared", "-O1", "-o", path, str(c), *flags], check=True, cwd=tmp_path,
                   capture_output=True)
    return path


WIN_SRC = """
__declspec(dllimport) void* PyLong_FromLong(long);
__declspec(dllimport) int %s(void);
__declspec(dllexport) void* PyInit_tiny(void) { return %s() ? PyLong_FromLong(1) : 0; }
"""


@needs_zig
@needs_llvm
def test_the_windows_abi3_check_wants_python3_dll_and_only_what_it_exports(tmp_path):
    # An import library of a python3.dll that claims PyGILState_Check, which the real one does not export.
    (tmp_path / "python3.def").write_text("LIBRARY python3.dll\nEXPORTS\nPyLong_FromLong\nPyGILState_Check\n"
                                          "PyObject_GetAttrString\n")
    subprocess.run([zigcc.zig(), "dlltool", "-m", "i386:x86-64", "-d", str(tmp_path / "python3.def"), "-l",
                    str(tmp_path / "libpython3.a")], check=True)
    link = [f"-L{tmp_path}", "-lpython3"]
    good = _zig_dll(tmp_path, WIN, WIN_SRC % ("PyObject_GetAttrString", "(long)PyObject_GetAttrString"),
                    "good.pyd", *link)
    assert cross.problems(good, WIN, "3.12", "tiny", abi3=True) == []
    assert "does not import python312.dll" in cross.problems(good, WIN, "3.12", "tiny")
    bad = _zig_dll(tmp_path, WIN, WIN_SRC % ("PyGILState_Check", "PyGILState_Check"), "bad.pyd", *link)
    assert cross.problems(bad, WIN, "3.12", "tiny", abi3=True) == [
        "imports PyGILState_Check from python3.dll, which does not export it"]
    # A version-specific build: python312.dll is no stable-ABI import.
    specific = _zig_dll(tmp_path, WIN, WIN_SRC % ("PyGILState_Check", "PyGILState_Check"), "specific.pyd",
                        f"-L{zigcc._crossdeps().import_lib_dir(zigcc.zig(), '3.12')}", "-lpython312")
    assert cross.problems(specific, WIN, "3.12", "tiny") == []
    assert cross.problems(specific, WIN, "3.12", "tiny", abi3=True) == [
        "imports from python312.dll, not part of Windows' KERNEL32 or UCRT", "does not import python3.dll"]


MAC_SRC = """
void* PyLong_FromLong(long);
void* %s(void*);
void* PyInit_tiny(void) { return %s(PyLong_FromLong(1)); }
"""


@needs_zig
@needs_llvm
def test_the_macos_abi3_check_wants_only_the_limited_api(tmp_path):
    flags = ("-Wl,-undefined,dynamic_lookup",)
    good = _zig_dll(tmp_path, MAC_ARM, MAC_SRC % ("PyObject_Repr", "PyObject_Repr"), "good.so", *flags)
    bad = _zig_dll(tmp_path, MAC_ARM, MAC_SRC % ("PyClassMethod_New", "PyClassMethod_New"), "bad.so", *flags)
    limited = "which is outside the limited API (stable ABI) of 3.12"
    assert not [b for b in cross.problems(good, MAC_ARM, "3.13", "tiny", abi3=True) if limited in b]
    # exported by libpython3.13.dylib, so the version-specific check takes it; the abi3 one does not
    assert not [b for b in cross.problems(bad, MAC_ARM, "3.13", "tiny") if "PyClassMethod_New" in b]
    assert [b for b in cross.problems(bad, MAC_ARM, "3.13", "tiny", abi3=True) if limited in b] == [
        f"binds _PyClassMethod_New, {limited}"]


@needs_zig
@needs_llvm
def test_the_wine_harness_makes_python3_dll_as_cpython_does(tmp_path):
    """The jar's Windows CPython has no python3.dll: make wine-test's abi3
    step makes one that forwards each name of the jar's libs/python3.lib to
    python313.dll (data as data), as CPython's own python3.dll does."""
    import wine_test

    d = zigcc._crossdeps()
    home = tmp_path / "home"
    (home / "libs").mkdir(parents=True)
    shutil.copy(d.stable_abi_lib(d.full_version("windows-x86_64", wine_test.MINOR)), home / "libs" / "python3.lib")
    dll = wine_test.stable_abi_dll(str(home))
    assert sorted(os.listdir(home)) == ["libs", "python3.dll"]
    text = subprocess.run([cross.llvm("llvm-objdump"), "-p", dll], capture_output=True, text=True, check=True).stdout
    forwarded = dict(re.findall(r"^\s+\d+\s+(\S+) \(forwarded to (\S+)\)$", text, re.M))
    assert set(forwarded) == cross.stable_abi_exports(wine_test.MINOR)
    assert forwarded["PyLong_FromLong"] == "python313.PyLong_FromLong"
    assert forwarded["PyExc_TypeError"] == "python313.PyExc_TypeError"
    assert "PyGILState_Check" not in forwarded and "DLL name: python3.dll" in text


@needs_zig
def test_one_abi3_manylinux_wheel_per_architecture_through_zig(tmp_path):
    """The backend with a target and abi3 (run by CPython 3.12), for this
    machine's architecture (CI's; make wheels-style zig build, glibc 2.17):
    one cp312-abi3-linux_<arch> wheel holding NAME.abi3.so, stripped,
    binding only the limited API, which runs on 3.12 and 3.13; auditwheel
    repair (zigcc's repair_wheel, as `godlpack wheels --abi3` runs it)
    makes it manylinux2014_<arch>."""
    from godlpack import scaffold

    arch = os.uname().machine
    if arch not in zigcc.ARCHS:
        pytest.skip(f"no manylinux2014 zig target for {arch}")
    pys = _pythons("3.12", "3.13")
    project = tmp_path / "abikern"
    scaffold.new("abikern", str(project))
    only = _setuptools_only(tmp_path)
    import ziglang

    os.symlink(os.path.dirname(ziglang.__file__), os.path.join(only, "ziglang"))  # zig, for 3.12 too
    build = ("import sys; sys.path[:0] = [sys.argv[1], '_build']; import godlpack_build as b; "
             "print(b.build_wheel(sys.argv[2], {'target': sys.argv[3], 'abi3': 'true'}))")
    env = dict(os.environ, GOFLAGS="-buildvcs=false")
    env.pop("PYTHONPATH", None)
    r = subprocess.run([pys["3.12"], "-c", build, only, str(tmp_path / "dist"), arch], cwd=project, env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    raw = tmp_path / "dist" / r.stdout.strip().splitlines()[-1]
    assert raw.name == f"abikern-0.1.0-cp312-abi3-linux_{arch}.whl", raw.name
    lib = tmp_path / "lib"
    with zipfile.ZipFile(raw) as z:
        assert [n for n in z.namelist() if n.endswith(".so")] == ["abikern.abi3.so"], z.namelist()
        assert "class Stats:" in z.read("abikern.pyi").decode()
        so = z.read("abikern.abi3.so")
        z.extract("abikern.abi3.so", lib)
    assert b".symtab" not in so and b".debug_info" not in so  # stripped
    out = subprocess.run([LLVM_NM or "nm", "-D", "--undefined-only", str(lib / "abikern.abi3.so")],
                         capture_output=True, text=True, check=True).stdout
    imported = {line.split()[-1].split("@")[0] for line in out.splitlines() if re.search(r"\s_?Py", line)}
    outside = imported - _limited_names(pys["3.12"])
    assert imported and not outside, sorted(outside)
    code = f"import sys; sys.path.insert(0, {str(lib)!r})\n" + EXERCISE
    for version, py in pys.items():  # the one zig build, on each
        r = subprocess.run([py, "-I", "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0 and r.stdout.startswith(f"ok ({version.replace('.', ', ')})"), (r.stdout, r.stderr)

    if not importlib.util.find_spec("auditwheel"):
        pytest.skip("auditwheel is not installed (the dev extra)")
    fixed = zigcc.repair_wheel(str(raw), str(tmp_path / "wheelhouse"), arch, abi3=True)
    assert os.path.basename(fixed) == f"abikern-0.1.0-cp312-abi3-manylinux2014_{arch}.manylinux_2_17_{arch}.whl"
    # a version-specific wheel is refused where abi3 was asked for
    specific = tmp_path / f"abikern-0.1.0-cp312-cp312-linux_{arch}.whl"
    with zipfile.ZipFile(specific, "w") as z:
        z.writestr(f"abikern.cpython-312-{arch}-linux-gnu.so", so)
    with pytest.raises(RuntimeError, match=r"is no stable-ABI wheel: want the tag cp312-abi3 and only NAME\.abi3\.so"):
        zigcc.repair_wheel(str(specific), str(tmp_path / "wheelhouse"), arch, abi3=True)


def test_wheels_abi3_reaches_both_builders(tmp_path, monkeypatch):
    """`godlpack wheels --abi3` (or the project's abi3 = true) asks zigcc's
    build_wheels and foreign_wheels for stable-ABI wheels; without it the
    calls are as before."""
    from godlpack import cli

    zigcc_ = cli.backend("zigcc")
    calls = []
    monkeypatch.setattr(zigcc_, "build_wheels", lambda *a, **k: calls.append(("linux", a[2], k)) or [])
    monkeypatch.setattr(zigcc_, "foreign_wheels", lambda *a, **k: calls.append(("foreign", a[2], k)) or [])
    monkeypatch.setattr(cli.shutil, "which", lambda name: "/bin/" + name)
    monkeypatch.delenv("GODLPACK_ABI3", raising=False)
    assert cli.main(["wheels", str(tmp_path), "--abi3", "--arch", "aarch64", "--target", "win_amd64"]) == 0
    assert calls == [("foreign", ["win_amd64"], {"abi3": True}), ("linux", ["aarch64"], {"abi3": True})]
    calls.clear()
    assert cli.main(["wheels", str(tmp_path), "--arch", "aarch64"]) == 0
    assert calls == [("linux", ["aarch64"], {})]
    (tmp_path / "pyproject.toml").write_text("[tool.godlpack]\nabi3 = true\n")
    calls.clear()
    assert cli.main(["wheels", str(tmp_path), "--target", "macosx_12_0_arm64"]) == 0
    assert calls == [("foreign", ["macosx_12_0_arm64"], {"abi3": True})]


def test_wheels_abi3_on_an_older_python_is_one_sentence(tmp_path, monkeypatch, capsys):
    from godlpack import cli

    monkeypatch.setattr(cli.shutil, "which", lambda name: "/bin/" + name)
    monkeypatch.setattr(cli.backend("zigcc"), "_python_version", lambda: (3, 11))
    assert cli.main(["wheels", str(tmp_path), "--abi3", "--arch", "x86_64"]) == 1
    assert capsys.readouterr().err == ("godlpack wheels: a stable-ABI (abi3) build needs CPython >= 3.12 to build "
                                       "with, and this is 3.11: run it with python3.12 or newer (the wheels then "
                                       "serve every CPython from 3.12 on)\n")
