"""`python -m godlpack new NAME`, then `cd NAME && pip install . && pytest`,
as a new user runs them, in a temporary folder with a fresh venv.

The choices that keep it fast and honest:
- `new` runs with this tree's godlpack (the test's interpreter, PYTHONPATH
  holds pyext/): the project's go.mod then points at this tree's Go source
  (godlpack.get_go_source()), as an installed godlpack points at its copy.
- The fresh venv has no godlpack at all: `pip install .` runs with pip's
  build isolation (setuptools from PyPI or pip's cache, the project's own
  copy of the backend in _build/), and the project's tests import only the
  new module. NumPy and pytest are this venv's, made visible through a .pth
  to a folder of links to exactly those distributions and their
  requirements, not to the site-packages godlpack may be installed in (CI
  installs it): checked by importing godlpack in the venv, which must fail.
- Go's build and module caches are the user's (GOCACHE, GOMODCACHE): the
  build compiles little that CI has not compiled already.
"""
import importlib.metadata as md
import os
import re
import subprocess
import sys
import zipfile

import pytest
from harness import child_env

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _requires(name, seen):
    """name and its requirements (markers evaluated here), recursively."""
    from packaging.requirements import Requirement

    key = name.lower().replace("_", "-")
    if key in seen:
        return
    seen.add(key)
    for r in md.requires(name) or []:
        req = Requirement(r)
        if req.marker is None or req.marker.evaluate({"extra": ""}):
            _requires(req.name, seen)


def _shim(folder, names):
    """A folder of links to the top-level files of names' distributions."""
    os.makedirs(folder)
    dists = set()
    for n in names:
        _requires(n, dists)
    for d in dists:
        dist = md.distribution(d)
        tops = {f.parts[0] for f in dist.files or [] if f.parts[0] not in ("..", "bin")}
        for top in tops:
            src = dist.locate_file(top)
            dst = os.path.join(folder, top)
            if os.path.exists(src) and not os.path.exists(dst):
                os.symlink(src, dst)
    return folder


def _run(cmd, cwd, env, timeout=600):
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, f"{cmd}\n{r.stdout}\n{r.stderr}"
    return r


def _new_env():
    # The godlpack under test, where it was imported from: pyext/ in the source
    # tree, site-packages for an installed wheel (make wheels runs this suite
    # against one, and the tree's pyext/ holds no built extension then).
    env = child_env(PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("PYTHONNOUSERSITE", None)
    return env


def _fresh_venv(tmp_path):
    """A venv with no godlpack, NumPy and pytest visible through the shim:
    (its python, the environment to run it in, its site-packages)."""
    env = _new_env()
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], tmp_path, env, timeout=300)
    py = str(venv / "bin" / "python")
    site = _run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], tmp_path, env).stdout.strip()
    shim = _shim(str(tmp_path / "shim"), ["numpy", "pytest"])
    with open(os.path.join(site, "shim.pth"), "w") as f:
        f.write(shim + "\n")
    venv_env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    venv_env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", PATH=f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}")
    r = subprocess.run([py, "-c", "import godlpack"], env=venv_env, capture_output=True, text=True)
    assert r.returncode != 0 and "No module named 'godlpack'" in r.stderr  # the build cannot lean on it
    return py, venv_env, site


def test_new_project_builds_and_passes_its_tests_in_a_fresh_venv(tmp_path):
    env = _new_env()
    r = _run([sys.executable, "-m", "godlpack", "new", "mykern"], tmp_path, env)
    assert "pip install '.[test]' && pytest" in r.stdout
    project = tmp_path / "mykern"
    with open(project / "go.mod") as f:
        gomod = f.read()
    import godlpack

    assert f"replace github.com/godlpack/godlpack => {godlpack.get_go_source()}\n" in gomod
    before = sorted(p.relative_to(project).as_posix() for p in project.rglob("*"))
    py, venv_env, site = _fresh_venv(tmp_path)

    # The two commands, as `new` prints them (pytest: the [test] extra, which the shim satisfies).
    _run([py, "-m", "pip", "install", ".[test]"], project, venv_env)
    r = _run([py, "-m", "pytest", "-q", "-p", "no:cacheprovider"], project, venv_env)
    assert re.search(r"\b5 passed\b", r.stdout) and "failed" not in r.stdout, r.stdout

    # The source tree is as `new` wrote it (no build/, no *.egg-info), but for the module's
    # definition the build wrote from the //pyext: directives.
    after = sorted(p.relative_to(project).as_posix() for p in project.rglob("*") if "__pycache__" not in p.parts)
    assert after == sorted(before + ["pyext_gen.go"])
    assert (project / "pyext_gen.go").read_text().startswith("// Code generated by pyextgen")
    # Installed: the extension and its stub, no test file.
    record = md.Distribution.at(next((p for p in os.scandir(site) if p.name.startswith("mykern-")
                                      and p.name.endswith(".dist-info"))).path).files
    names = {f.as_posix() for f in record}
    assert "mykern.pyi" in names and any(n.startswith("mykern.") and n.endswith(".so") for n in names)
    assert {"mykern-stubs/__init__.pyi", "mykern-stubs/py.typed"} <= names  # PEP 561: what mypy reads
    assert not any("test_" in n or n.startswith(("_build", "setup")) for n in names), names

    # Moved, its go.mod naming a venv that is gone: pip's isolated build (whose own Python cannot
    # import godlpack) builds against the godlpack of the venv pip runs in, now given one.
    import shutil

    moved = tmp_path / "elsewhere" / "mykern"
    shutil.copytree(project, moved, ignore=shutil.ignore_patterns("__pycache__"))
    gone = "/home/someone/.venv/lib/python3.12/site-packages/godlpack/go"
    (moved / "go.mod").write_text(re.sub(r"^replace github.com/godlpack/godlpack => .*$",
                                         f"replace github.com/godlpack/godlpack => {gone}", gomod, flags=re.M))
    with open(os.path.join(site, "godlpack_tree.pth"), "w") as f:
        f.write(os.path.dirname(os.path.dirname(godlpack.__file__)) + "\n")
    _run([py, "-m", "pip", "install", "--force-reinstall", "--no-deps", "."], moved, venv_env)
    r = _run([py, "-c", "import numpy as np, mykern; x = np.ones(2); mykern.scale(x); print(x.tolist())"], tmp_path,
             venv_env)
    assert r.stdout.strip() == "[2.0, 2.0]", r.stdout
    assert gone in (moved / "go.mod").read_text()  # no edit


GOOD = """\
import numpy as np
import mykern

x = np.ones(3)
mykern.scale(x, 2.0)
s = mykern.Stats()
s.add(x)
n: int = s.count
t: int = mykern.triple(4)
"""


def test_the_build_writes_the_stub_of_what_it_built_and_mypy_strict_passes(tmp_path):
    """No stub is kept in a project: the build writes mykern.pyi from the
    library it just built (pyext's gdlpyStubs, loaded in a child Python), so
    after an edit of main.go the stub has the new function and
    mypy --strict passes on a script using it; a wrong type fails."""
    import sysconfig

    from godlpack import scaffold

    project = tmp_path / "mykern"
    scaffold.new("mykern", str(project))
    assert not list(project.glob("*.pyi")) and not list(project.glob("*_test.go"))
    main = (project / "main.go").read_text()
    main += "\n// Three times n.\n//\n//pyext:function\nfunc Triple(n int) int { return 3 * n }\n"
    (project / "main.go").write_text(main)
    out = tmp_path / "lib" / ("mykern" + sysconfig.get_config_var("EXT_SUFFIX"))
    _run([sys.executable, os.path.join(ROOT, "tools", "godlpack_build.py"), str(out), "."], project,
         dict(os.environ, GOFLAGS="-buildvcs=false"))
    stub = (tmp_path / "lib" / "mykern.pyi").read_text()
    assert "def triple(n: int) -> int:" in stub and "class Stats:" in stub
    pytest.importorskip("mypy")
    (tmp_path / "good.py").write_text(GOOD)
    (tmp_path / "bad.py").write_text(GOOD.replace("triple(4)", 'triple("4")'))
    env = dict(os.environ, MYPYPATH=str(tmp_path / "lib"))
    cmd = [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", os.devnull]
    _run(cmd + ["good.py"], tmp_path, env)
    r = subprocess.run(cmd + ["bad.py"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 1 and 'bad.py:9: error: Argument 1 to "triple" has incompatible type "str"' in r.stdout, r


def test_a_plain_go_build_without_pythons_headers_says_what_to_do(tmp_path):
    from godlpack import scaffold

    project = tmp_path / "mykern"
    scaffold.new("mykern", str(project))
    env = dict(os.environ, GOFLAGS="-buildvcs=false")
    env.pop("CGO_CFLAGS", None)
    r = subprocess.run(["go", "build", "-buildmode=c-shared", "-o", str(tmp_path / "x.so"), "."], cwd=project,
                       env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode != 0 and "pip install ." in r.stderr and "CGO_CFLAGS" in r.stderr


def test_new_refuses_bad_names_and_non_empty_folders(tmp_path):
    from godlpack import scaffold

    for bad in ("My-Kern", "1x", "class", ""):
        with pytest.raises(ValueError, match="not a module name"):
            scaffold.project_files(bad)
    (tmp_path / "k").mkdir()
    (tmp_path / "k" / "x").write_text("")
    with pytest.raises(FileExistsError):
        scaffold.new("k", str(tmp_path / "k"))
    files = scaffold.project_files("k")
    assert '"numpy"' in files["pyproject.toml"] and 'backend-path = ["_build"]' in files["pyproject.toml"]
    assert "godlpack " + __import__("godlpack").__version__ in files["_build/godlpack_build.py"]
    # The zig targets (release wheels, README) come along with the backend.
    assert "def normalize(" in files["_build/zigcc.py"] and "import zigcc" in files["_build/godlpack_build.py"]
    # zigcc's Windows/macOS targets import crossdeps from beside it.
    assert ("import crossdeps" not in files["_build/zigcc.py"]) or "_build/crossdeps.py" in files
    assert "//pyext:module k\n" in files["main.go"] and "github.com/stretchr/testify" in files["go.sum"]


@pytest.mark.parametrize("name", ["numpy", "torch", "json", "os", "sys", "asyncio", "godlpack", "pytest"])
def test_new_refuses_a_name_that_shadows_a_well_known_module(tmp_path, name):
    from godlpack import scaffold

    with pytest.raises(ValueError, match=f"^{name!r} would shadow "):
        scaffold.project_files(name)
    r = subprocess.run([sys.executable, "-m", "godlpack", "new", name], cwd=tmp_path, env=child_env(),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stderr == "", r
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"godlpack new: {name!r} would shadow "), r.stdout
    assert lines[0].endswith(f"choose another name (e.g. {name}_go).")
    assert not (tmp_path / name).exists()


def test_every_stdlib_module_name_is_refused_and_a_fresh_name_is_not():
    from godlpack import scaffold

    for name in sorted(sys.stdlib_module_names):
        if scaffold._NAME.match(name):
            with pytest.raises(ValueError, match="would shadow"):
                scaffold.project_files(name)
    assert "//pyext:module numpy_go\n" in scaffold.project_files("numpy_go")["main.go"]


def test_get_go_source_holds_the_module():
    import godlpack

    src = godlpack.get_go_source()
    with open(os.path.join(src, "go.mod")) as f:
        assert f.readline().strip() == "module github.com/godlpack/godlpack"
    for pkg in ("core", "capsule", "producer", "consumer", "pyext"):
        assert any(n.endswith(".go") for n in os.listdir(os.path.join(src, pkg))), pkg
    assert os.path.isfile(os.path.join(src, "include", "godlpack", "godlpack.h"))


def test_the_wheel_ships_the_go_source_and_backend(tmp_path):
    """setup.py's file list for godlpack/go: the packages extensions build,
    their headers, go.mod/go.sum, and no tests."""
    with open(os.path.join(ROOT, "setup.py")) as f:
        text = f.read()
    # Only the list and its function: running setup() is pip's job.
    ns = {"__file__": os.path.join(ROOT, "setup.py"), "__name__": "not_main"}
    exec(compile(text.split("class BuildPyWithHeaders")[0].replace("from godlpack_build import", "# "),
                 "setup.py", "exec"), ns)
    files = ns["go_source_files"]()
    assert {"go.mod", "go.sum", "pyext/call.go", "pyext/ext.c", "internal/cpython/exchange/import.c",
            "internal/cpython/base/base.h", "capsule/need_python.h", "include/godlpack/dlpack.h", "core/validate.c",
            "tensor.go"} <= set(files)
    assert not any(f.startswith("module/") for f in files)  # godlpack's own module: not for extensions
    assert not any(f.endswith("_test.go") or f.startswith(("examples", "tests", "internal/gen", "internal/testkit")) for f in files)
    assert all(f.startswith("internal/cpython/") for f in files if f.startswith("internal/"))  # the runtime only


def test_vecmath_wheel_holds_the_module_and_its_stub_only(tmp_path):
    """examples/vecmath's wheel: vecmath.so and vecmath.pyi (and the same
    stub as the PEP 561 package vecmath-stubs), no test file or
    tools, and the build leaves the source folder clean."""
    example = os.path.join(ROOT, "examples", "vecmath")
    before = sorted(os.listdir(example))
    env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1")
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(tmp_path), "."],
         example, env)
    (whl,) = [p for p in os.listdir(tmp_path) if p.endswith(".whl")]
    names = [n for n in zipfile.ZipFile(tmp_path / whl).namelist() if ".dist-info/" not in n]
    so = [n for n in names if n.startswith("vecmath.") and n.endswith(".so")]
    stubs = ["vecmath.pyi", "vecmath-stubs/__init__.pyi", "vecmath-stubs/py.typed"]
    assert len(so) == 1 and sorted(names) == sorted(so + stubs), names
    assert sorted(os.listdir(example)) == before


# Three Go extensions from three projects in one venv, godlpack not installed:
# each module's result is Go memory of its own runtime, and the others take it
# zero-copy (the same address through NumPy before and after an in-place call).
THREE = r"""
import warnings
warnings.simplefilter("error", RuntimeWarning)  # no warning for any mix of them
import alpha, beta, vecmath
import numpy as np
r = alpha.add(np.ones(4), np.arange(4.0))      # alpha's Go memory
view = np.from_dlpack(r)
beta.scale(r, 3.0)                             # beta writes alpha's memory in place
s = vecmath.add(r, r)                          # vecmath reads it, returns its own
alpha.scale(s, 0.5)                            # alpha writes vecmath's memory in place
print(view.tolist(), np.from_dlpack(r).ctypes.data == view.ctypes.data, np.from_dlpack(s).tolist())
rows = beta.go_runtimes()
print(sorted(p.rsplit("/", 1)[-1].split(".")[0] for p, *_ in rows), all(c for *_, c in rows))
st = alpha.Stats(); st.add(np.from_dlpack(s)); print(st.count, st.mean)
"""


def test_two_scaffolded_projects_and_vecmath_in_one_venv(tmp_path):
    """The real second package: two independently made projects and
    examples/vecmath, each `pip install`ed into one fresh venv, imported
    together (three Go runtimes, all chained, no warning) with tensors made
    by one consumed zero-copy by another."""
    env = _new_env()
    py, venv_env, _ = _fresh_venv(tmp_path)
    for name in ("alpha", "beta"):
        _run([sys.executable, "-m", "godlpack", "new", name], tmp_path, env)
        _run([py, "-m", "pip", "install", "."], tmp_path / name, venv_env)
    _run([py, "-m", "pip", "install", "."], os.path.join(ROOT, "examples", "vecmath"), venv_env)
    r = _run([py, "-c", THREE], tmp_path, venv_env, timeout=300)
    values, names, stats = r.stdout.strip().splitlines()
    assert values == "[3.0, 6.0, 9.0, 12.0] True [3.0, 6.0, 9.0, 12.0]", r.stdout
    assert names == "['alpha', 'beta', 'vecmath'] True", r.stdout
    assert stats == "4 7.5", r.stdout
