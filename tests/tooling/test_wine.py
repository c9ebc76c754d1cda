"""The Wine harness's own parts (tools/wine_shims.py, tools/wine_test.py's
marks), built here with zig and read with llvm-objdump; no Wine needed.
`make wine-test` runs the Windows build under Wine with them."""
from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys

import pytest

# zig (PyPI's ziglang) builds every binary these checks read: in make test's
# venv; the NumPy-only suites of make test-pythons lack it, as for test_zigcc.py.
pytestmark = pytest.mark.skipif(importlib.util.find_spec("ziglang") is None, reason="ziglang is not installed")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))
if os.path.isdir(os.path.join(ROOT, ".crosscache")):  # make cross's cache (zig's cache in it)
    os.environ.setdefault("GODLPACK_CROSS_CACHE", os.path.join(ROOT, ".crosscache"))
    os.environ.setdefault("ZIG_GLOBAL_CACHE_DIR", os.path.join(ROOT, ".crosscache", "zig"))


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, "tools", f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


shims = _load("wine_shims")
OBJDUMP = next((t for t in ("llvm-objdump", "llvm-objdump-14") if shutil.which(t)), None)
needs_llvm = pytest.mark.skipif(OBJDUMP is None, reason="needs Debian's llvm: make cross-deps")


def _pe(path: str) -> str:
    return subprocess.run([OBJDUMP, "-p", path], capture_output=True, text=True, check=True).stdout


@needs_llvm
def test_prng_shim_exports_process_prng_over_bcrypt(tmp_path):
    text = _pe(shims.build_prng(str(tmp_path)))
    assert re.search(r"^\s+\d+\s+0x[0-9a-f]+\s+ProcessPrng$", text, re.M), text
    assert "DLL Name: bcrypt.dll" in text


@needs_llvm
def test_complex_shim_implements_complex_names_and_forwards_the_rest(tmp_path):
    path = shims.build_complex(str(tmp_path), ["sin", "crealf", "cexp"])
    text = _pe(path)
    assert os.path.basename(path).encode() == shims.SHIM_NAME
    for own in ("cexp", "crealf", "cpowl", "ctanhf", "cabsl"):
        assert re.search(rf"^\s+\d+\s+0x[0-9a-f]+\s+{own}$", text, re.M), own
    assert "sin (forwarded to ucrtbase.sin)" in text
    assert "crealf (forwarded" not in text
    # its own math imports must not lead back to Wine's complex stubs
    complex_names = {n + s for n in shims.COMPLEX for s in ("", "f", "l")}
    assert not complex_names & set(shims.math_imports(path, OBJDUMP))


def test_patch_imports_renames_only_the_math_set(tmp_path):
    data = b"MZ..KERNEL32.dll\0" + shims.MATH_SET + b"\0api-ms-win-crt-heap-l1-1-0.dll\0"
    pyd = tmp_path / "a.pyd"
    pyd.write_bytes(data)
    assert shims.patch_imports(str(pyd))
    assert pyd.read_bytes() == data.replace(shims.MATH_SET, shims.SHIM_NAME)
    assert len(pyd.read_bytes()) == len(data)
    assert not shims.patch_imports(str(pyd))  # nothing left to patch


def test_every_mark_names_a_test_that_exists():
    marks = _load("wine_test").MARKS
    for key, (kind, reason) in marks.items():
        path, name = key.split("::")
        with open(os.path.join(ROOT, "tests", path), encoding="utf-8") as f:
            assert re.search(rf"^def {name}\(", f.read(), re.M), f"{key}: no such test, the mark is stale"
        assert kind in ("skip", "xfail") and reason


def test_scaffold_step_makes_the_project_as_its_build_would(tmp_path):
    # the project make wine-test cross-builds: this tree's godlpack wrote it,
    # and the build's generate step (pyextgen) wrote its module's pyext_gen.go
    wine_test = _load("wine_test")
    name = wine_test.SCAFFOLD
    dest = wine_test.scaffold_project(str(tmp_path / "p"))
    with open(os.path.join(dest, "go.mod"), encoding="utf-8") as f:
        assert re.search(r"^replace github.com/godlpack/godlpack => (\S+)$", f.read(), re.M).group(1) == ROOT
    with open(os.path.join(dest, "pyext_gen.go"), encoding="utf-8") as f:
        gen = f.read()
    assert f'"{name}"' in gen and "scale" in gen
    with open(os.path.join(dest, f"test_{name}.py"), encoding="utf-8") as f:
        assert f"import {name}\n" in f.read()
