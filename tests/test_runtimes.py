"""One Go runtime per process: a second one, however it got there, is
reported (issue 11). Here a tiny Go c-shared library with no Python in it,
loaded by ctypes, holds the other runtime."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from conftest import child_env

TINY = """package main

import "C"

//export tiny_add
func tiny_add(a, b C.int) C.int { return a + b }

func main() {}
"""


@pytest.fixture(scope="module")
def tiny_lib(tmp_path_factory) -> str:
    go = shutil.which("go")
    assert go is not None, "make test needs the Go toolchain"
    d = tmp_path_factory.mktemp("tinygo")
    (d / "go.mod").write_text("module tiny\n\ngo 1.26\n")
    (d / "main.go").write_text(TINY)
    lib = d / "libtinygo.so"
    subprocess.run([go, "build", "-buildmode=c-shared", "-o", str(lib), "."], cwd=d, check=True,
                   capture_output=True, timeout=600, env=dict(os.environ, CGO_ENABLED="1", GOFLAGS="-buildvcs=false"))
    return str(lib)


def run(code: str) -> list[str]:
    r = subprocess.run([sys.executable, "-c", code], env=child_env(), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip().splitlines()


def test_a_go_library_loaded_by_ctypes_before_the_import_is_named(tiny_lib):
    out = run(f"""
import ctypes, warnings
lib = ctypes.CDLL({tiny_lib!r})
assert lib.tiny_add(2, 3) == 5
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    import godlpack
print(repr([str(x.message) for x in w if issubclass(x.category, RuntimeWarning)]))
print(repr(godlpack.go_runtimes()))
""")
    warned, runtimes = eval(out[0]), eval(out[1])  # noqa: S307  our own child's repr
    assert len(warned) == 1, warned
    assert "libtinygo.so" in warned[0] and "another Go runtime" in warned[0] and "SIGURG" in warned[0]
    others = [path for path, is_self in runtimes if not is_self]
    assert len(others) == 1 and others[0].endswith("libtinygo.so"), runtimes
    assert sum(is_self for _, is_self in runtimes) == 1, runtimes


def test_a_go_library_loaded_after_the_import_is_listed(tiny_lib):
    out = run(f"""
import ctypes, warnings
warnings.simplefilter("error", RuntimeWarning)
import godlpack
before = godlpack.go_runtimes()
ctypes.CDLL({tiny_lib!r})
print(repr(before))
print(repr(godlpack.go_runtimes()))
""")
    before, after = eval(out[0]), eval(out[1])  # noqa: S307  our own child's repr
    assert [s for _, s in before] == [True], before  # godlpack alone: no warning, no other
    assert sorted(s for _, s in after) == [False, True] and any(p.endswith("libtinygo.so") for p, _ in after), after


def test_without_another_go_library_nothing_is_reported():
    out = run("""
import warnings
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    import godlpack
print(len([x for x in w if issubclass(x.category, RuntimeWarning)]), len(godlpack.go_runtimes()))
""")
    assert out == ["0 1"], out
