"""tools/layers.py, the check that keeps the runtime's calls one way
(docs/architecture.md): clean on this tree, and failing on each kind of
breach planted in a copy of it."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "tools", "layers.py")


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, TOOL, *args], capture_output=True, text=True, timeout=120)


@pytest.fixture
def tree(tmp_path):
    """A copy of the layers' folders (C and Go sources) and docs/architecture.md, no .git."""
    def keep(d, names):
        return [n for n in names if n == "__pycache__" or n.endswith(".so")]
    for d in ("pyext", "internal/cpython", "module"):
        shutil.copytree(os.path.join(ROOT, d), tmp_path / d, ignore=keep)
    (tmp_path / "docs").mkdir()
    shutil.copy(os.path.join(ROOT, "docs", "architecture.md"), tmp_path / "docs")
    return tmp_path


def append(path, text: str) -> None:
    with open(path, "a", encoding="utf-8") as f:
        f.write(text)


def test_this_tree_has_no_circle_and_no_upward_call():
    r = run()
    assert r.returncode == 0, r.stdout + r.stderr
    assert "0 problems" in r.stdout


def test_the_copy_is_clean(tree):
    r = run("--root", str(tree), "--no-go")
    assert r.returncode == 0, r.stdout + r.stderr


def test_an_upward_call_fails(tree):
    # The driver layer making a Tensor: cuda may not use tensor.
    append(tree / "internal/cpython/cuda/cudamem.c",
           "\nvoid* gdl_probe_up(void) { return (void*)gdl_tensor_new; }\n")
    r = run("--root", str(tree), "--no-go")
    assert r.returncode == 1
    assert "internal/cpython/cuda may not use internal/cpython/tensor" in r.stdout


def test_a_circle_inside_a_layer_fails(tree):
    # tensor.c refers to tolist.c's gdl_tolist, and tolist.c calls back a new
    # function of tensor.c: allowed within the layer, but a circle.
    append(tree / "internal/cpython/tensor/tensor.c",
           "\nint gdl_probe_a(void) { return gdl_tolist != 0; }\n")
    append(tree / "internal/cpython/tensor/tolist.c",
           "\nint gdl_probe_b(void) { return gdl_probe_a(); }\n")
    r = run("--root", str(tree), "--no-go")
    assert r.returncode == 1
    assert "call circle:" in r.stdout and "tensor.c" in r.stdout and "tolist.c" in r.stdout


def test_a_hand_written_prototype_fails(tree):
    append(tree / "internal/cpython/exchange/pickle.c", "\nPyObject* gdl_godlpack_module(void);\n")
    r = run("--root", str(tree), "--no-go")
    assert r.returncode == 1
    assert "pickle.c declares gdl_godlpack_module itself" in r.stdout


def test_a_call_into_a_go_export_of_an_upper_package_fails(tree):
    # gdlEmpty is godlpack._godlpack's (module): no layer may call it.
    append(tree / "internal/cpython/tensor/array.c",
           "\nvoid* gdl_probe_go(void) { return (void*)gdlEmpty; }\n")
    r = run("--root", str(tree), "--no-go")
    assert r.returncode == 1
    assert "array.c -> module/create.go (gdlEmpty)" in r.stdout


def test_an_undeclared_folder_fails(tree):
    os.makedirs(tree / "internal/cpython/extra")
    (tree / "internal/cpython/extra/x.c").write_text("int gdl_x(void) { return 0; }\n")
    r = run("--root", str(tree), "--no-go")
    assert r.returncode != 0
    assert "internal/cpython/extra is not in docs/architecture.md's layers block" in r.stdout + r.stderr


@pytest.mark.skipif(shutil.which("go") is None, reason="needs the Go toolchain")
def test_go_imports_follow_the_layers(tmp_path):
    # A doc where exchange may not use tensor: exchange/cgo.go imports it.
    for d in ("pyext", "internal/cpython", "module"):
        shutil.copytree(os.path.join(ROOT, d), tmp_path / d,
                        ignore=lambda d, n: [x for x in n if x == "__pycache__" or x.endswith(".so")])
    for f in ("go.mod", "go.sum"):
        shutil.copy(os.path.join(ROOT, f), tmp_path)
    for d in ("core", "capsule", "producer", "consumer", "include"):
        shutil.copytree(os.path.join(ROOT, d), tmp_path / d)
    for f in os.listdir(ROOT):
        if f.endswith(".go") and not f.endswith("_test.go"):
            shutil.copy(os.path.join(ROOT, f), tmp_path)
    (tmp_path / "docs").mkdir()
    doc = open(os.path.join(ROOT, "docs", "architecture.md"), encoding="utf-8").read()
    doc = doc.replace("internal/cpython/exchange: internal/cpython/tensor internal/cpython/cuda",
                      "internal/cpython/exchange: internal/cpython/cuda")
    (tmp_path / "docs" / "architecture.md").write_text(doc)
    r = run("--root", str(tmp_path))
    assert r.returncode == 1
    assert "Go: internal/cpython/exchange imports internal/cpython/tensor" in r.stdout


def undefined_gdl_symbols(so: str) -> list[str]:
    out = subprocess.run(["nm", "-D", "--undefined-only", so], capture_output=True, text=True, check=True).stdout
    return [line.split()[-1] for line in out.splitlines() if line.split()[-1].lower().startswith("gdl")]


@pytest.mark.skipif(shutil.which("nm") is None, reason="needs binutils' nm")
def test_every_runtime_symbol_is_defined_in_the_module():
    # A c-shared library links with undefined symbols (CPython's are resolved
    # at load time), so a C function the layers call but nobody defines would
    # only fail at import: check the built module instead.
    import godlpack._godlpack as m
    assert undefined_gdl_symbols(m.__file__) == []


@pytest.mark.skipif(shutil.which("nm") is None or shutil.which("go") is None, reason="needs nm and Go")
def test_a_user_extension_links_the_runtime_but_not_godlpacks_module(tmp_path):
    import sysconfig
    so = tmp_path / "vecmath.so"
    env = dict(os.environ, CGO_ENABLED="1",
               CGO_CFLAGS=f"-I{sysconfig.get_paths()['include']} -O2", GOFLAGS="-buildvcs=false")
    r = subprocess.run(["go", "build", "-buildmode=c-shared", "-o", str(so), "."],
                       cwd=os.path.join(ROOT, "examples", "vecmath"), env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr
    assert undefined_gdl_symbols(str(so)) == []
    syms = subprocess.run(["nm", str(so)], capture_output=True, text=True, check=True).stdout.split()
    assert "gdl_from_dlpack" in syms and "gdl_tensor_new" in syms  # the runtime's layers
    for own in ("gdl_godlpack_module", "gdl_capi_capsule", "gdlEmpty", "gdlArange"):
        assert own not in syms, f"{own} (godlpack._godlpack's own) is linked into a user extension"


def test_per_os_files_may_define_the_same_name_but_files_built_together_may_not(tree):
    # cuda's dynlib_windows.c and dynlib_posix.c (//go:build !windows) both
    # define gdl_lib_open: never in one build. A darwin file defining it again
    # is built with dynlib_posix.c: a duplicate.
    r = run("--root", str(tree), "--no-go")
    assert r.returncode == 0 and "gdl_lib_open is defined in both" not in r.stdout, r.stdout
    (tree / "internal/cpython/cuda/dynlib_darwin.c").write_text(
        '#include "dynlib.h"\nvoid* gdl_lib_open(const char* p, char* e, size_t n) { return 0; }\n')
    r = run("--root", str(tree), "--no-go")
    assert r.returncode == 1
    assert "gdl_lib_open is defined in both internal/cpython/cuda/dynlib_darwin.c and " \
           "internal/cpython/cuda/dynlib_posix.c" in r.stdout or \
           "gdl_lib_open is defined in both internal/cpython/cuda/dynlib_posix.c and " \
           "internal/cpython/cuda/dynlib_darwin.c" in r.stdout, r.stdout
