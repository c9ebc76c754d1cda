"""Stable-ABI (abi3) builds: one wheel of a scaffolded project, built once by
CPython 3.12 through the build recipe (tools/godlpack_build.py, the PEP 517
backend), tagged cp312-abi3, whose NAME.abi3.so imports only stable-ABI
functions and works on 3.12 and 3.13 (tools/find_python.sh's), and on 3.14
and 3.15 where mk/debian-pythons.sh's root is made; the switch
([tool.godlpack] abi3, the config setting, `--abi3`) and the Pythons it
refuses. The test extensions' own checks against one abi3 build:
docs/install.md#abi3 (GODLPACK_TESTMODS, tests/support/gomod.py).

The 3.12 build runs the backend with no setuptools of its own: this venv's
(pure Python) is put on its path, alone.
"""
import glob
import importlib.util
import os
import re
import subprocess
import sys
import sysconfig
import zipfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import godlpack_build  # noqa: E402


def _python(version: str) -> str | None:
    r = subprocess.run(["bash", os.path.join(ROOT, "tools", "find_python.sh"), version], capture_output=True,
                       text=True)
    return r.stdout.strip() or None


def _pythons(*versions: str) -> dict[str, str]:
    found = {v: _python(v) for v in versions}
    missing = [v for v, p in found.items() if p is None]
    if missing:
        if os.environ.get("CI") == "true":
            pytest.fail(f"no CPython {', '.join(missing)} on this machine (tools/find_python.sh)")
        pytest.skip(f"no CPython {', '.join(missing)} on this machine (tools/find_python.sh)")
    return {v: p for v, p in found.items() if p}


def _setuptools_only(tmp_path) -> str:
    """A folder holding links to this venv's setuptools (and its vendored
    requirements), for an interpreter that has none."""
    import setuptools

    site = os.path.dirname(os.path.dirname(setuptools.__file__))
    folder = tmp_path / "setuptools-only"
    folder.mkdir()
    names = ["setuptools", "pkg_resources", "_distutils_hack"]  # and its metadata: its commands' entry points
    names += [os.path.basename(p) for p in glob.glob(os.path.join(site, "setuptools-*.dist-info"))]
    for name in names:
        if os.path.exists(os.path.join(site, name)):
            os.symlink(os.path.join(site, name), folder / name)
    return str(folder)


# Exercises the scaffold's module without NumPy: float64 buffers in, a
# Go-made array (the module's Tensor, a buffer) out, a class, an error. Its
# file must end in suffix; it prints "ok (3, X)" and then what extra says.
def exercise(suffix: str, extra: str = "") -> str:
    return f"""import array, sys
import abikern
assert abikern.__file__.endswith({suffix!r}), abikern.__file__
x = array.array("d", [1.0, 2.0, 3.0])
abikern.scale(x, 3.0)
assert list(x) == [3.0, 6.0, 9.0], x
y = abikern.add(x, array.array("d", [1.0, 1.0, 1.0]))
assert memoryview(y).tolist() == [4.0, 7.0, 10.0], y
s = abikern.Stats()
s.add(x)
assert (s.count, s.mean) == (3, 6.0), (s.count, s.mean)
try:
    abikern.add(x, array.array("d", [1.0]))
except ValueError as e:
    assert "differ in length" in str(e), e
else:
    raise AssertionError("no ValueError")
try:
    abikern.scale("no array")
except TypeError as e:
    assert "str" in str(e), e
else:
    raise AssertionError("no TypeError")
print("ok", sys.version_info[:2]{extra})
"""


EXERCISE = exercise(".abi3.so")


def _limited_names(py: str) -> set[str]:
    """Every Py* name Python.h declares under Py_LIMITED_API=3.12 (of py's headers)."""
    include = subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['include'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    r = subprocess.run(["cc", "-E", f"-DPy_LIMITED_API={godlpack_build.ABI3_LIMITED_API}", f"-I{include}", "-"],
                       input="#include <Python.h>\n", capture_output=True, text=True, check=True)
    # The stable ABI's own exported helpers that 3.12's macros name (PyArg_ParseTuple with PY_SSIZE_T_CLEAN).
    return set(re.findall(r"\b_?Py\w+", r.stdout)) | {"_PyArg_ParseTuple_SizeT", "_PyArg_ParseTupleAndKeywords_SizeT"}


def test_one_abi3_wheel_serves_3_12_and_3_13(tmp_path):
    from godlpack import scaffold

    pys = _pythons("3.12", "3.13")
    project = tmp_path / "abikern"
    scaffold.new("abikern", str(project))
    with open(project / "pyproject.toml", "a") as f:
        f.write("abi3 = true\n")  # [tool.godlpack] is the file's last table
    dist = tmp_path / "dist"
    build = ("import os, sys; sys.path[:0] = [sys.argv[1], '_build']; import godlpack_build as b; "
             "print(b.build_wheel(sys.argv[2]))")
    env = dict(os.environ, GOFLAGS="-buildvcs=false")
    env.pop("PYTHONPATH", None)
    r = subprocess.run([pys["3.12"], "-c", build, _setuptools_only(tmp_path), str(dist)], cwd=project, env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    wheel = dist / r.stdout.strip().splitlines()[-1]
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    assert wheel.name == f"abikern-0.1.0-cp312-abi3-{platform}.whl", wheel.name
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        assert "abikern.abi3.so" in names and "abikern.pyi" in names, names
        assert "Tag: cp312-abi3-" in z.read("abikern-0.1.0.dist-info/WHEEL").decode()
        z.extract("abikern.abi3.so", tmp_path / "lib")
    so = str(tmp_path / "lib" / "abikern.abi3.so")

    # Only stable-ABI functions: what abi3audit checks, against 3.12's own headers.
    nm = subprocess.run(["nm", "-D", "--undefined-only", so], capture_output=True, text=True, check=True).stdout
    imported = {line.split()[-1] for line in nm.splitlines() if re.search(r"\s_?Py", line)}
    assert imported and not imported - _limited_names(pys["3.12"]), sorted(imported - _limited_names(pys["3.12"]))

    code = f"import sys; sys.path.insert(0, {str(tmp_path / 'lib')!r})\n" + EXERCISE
    runs = {v: [py, "-I", "-c", code] for v, py in pys.items()}
    debian = os.path.join(ROOT, "mk", "debian-pythons.sh")  # 3.14, 3.15 where its root is made (make test-pythons)
    for v in ("3.14", "3.15"):
        if subprocess.run(["bash", debian, "has", v], capture_output=True).returncode == 0:
            runs[v] = ["bash", debian, "run", f"python{v}", "-I", "-c", code]
    for version, cmd in runs.items():  # the one build, on each
        r = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0 and r.stdout.startswith(f"ok ({version.replace('.', ', ')})"), (version, r.stdout,
                                                                                                  r.stderr)

    # The wheel checkers where this venv has them (auditwheel: the dev extra; abi3audit: not one).
    if importlib.util.find_spec("auditwheel"):
        r = subprocess.run([sys.executable, "-m", "auditwheel", "show", str(wheel)], capture_output=True, text=True,
                           timeout=120)
        assert r.returncode == 0 and "manylinux" in r.stdout, r.stdout + r.stderr
    if importlib.util.find_spec("abi3audit"):
        r = subprocess.run([sys.executable, "-m", "abi3audit", "--strict", str(wheel)], capture_output=True,
                           text=True, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr


def test_the_switch_is_the_config_setting_then_the_environment_then_pyproject(tmp_path, monkeypatch):
    monkeypatch.delenv("GODLPACK_ABI3", raising=False)
    assert not godlpack_build.abi3(str(tmp_path))  # no pyproject.toml
    (tmp_path / "pyproject.toml").write_text("[tool.godlpack]\nmodule = 'k'\nabi3 = true\n")
    assert godlpack_build.abi3(str(tmp_path))
    assert not godlpack_build.abi3(str(tmp_path), {"abi3": "false"})
    monkeypatch.setenv("GODLPACK_ABI3", "0")
    assert not godlpack_build.abi3(str(tmp_path))
    assert godlpack_build.abi3(str(tmp_path), {"abi3": "true"})
    (tmp_path / "pyproject.toml").write_text("[tool.godlpack]\nmodule = 'k'\n")
    monkeypatch.setenv("GODLPACK_ABI3", "1")
    assert godlpack_build.abi3(str(tmp_path))


def test_abi3_is_refused_before_3_12_and_on_a_free_threaded_python(monkeypatch):
    monkeypatch.setattr(godlpack_build, "_python_version", lambda: (3, 11))
    with pytest.raises(RuntimeError, match=r"^a stable-ABI \(abi3\) build needs CPython >= 3\.12 to build with, "
                                           r"and this is 3\.11: run the build with python3\.12"):
        godlpack_build.check_abi3()
    real = sysconfig.get_config_var
    monkeypatch.setattr(sysconfig, "get_config_var", lambda k: 1 if k == "Py_GIL_DISABLED" else real(k))
    with pytest.raises(RuntimeError, match=r"^a stable-ABI \(abi3\) build needs a CPython with the GIL, and this one "
                                           r".* is free-threaded.*abi3t = true"):
        godlpack_build.check_abi3()


def test_godlpack_build_abi3_on_an_older_python_is_one_sentence(tmp_path, monkeypatch, capsys):
    """The CLI's --abi3 reaches the backend (a config setting), whose
    refusal is printed alone, exit 1."""
    from godlpack import cli, scaffold

    project = tmp_path / "k"
    scaffold.new("k", str(project))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(godlpack_build, "_python_version", lambda: (3, 11))
    assert cli.main(["build", "--abi3", str(project), "-o", str(tmp_path / "dist")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("godlpack: a stable-ABI (abi3) build needs CPython >= 3.12") and "Traceback" not in err, err
    assert not glob.glob(str(tmp_path / "dist" / "*.whl"))
    assert cli.main(["develop", "--abi3", str(project)]) == 1
    assert capsys.readouterr().err.startswith("godlpack: a stable-ABI (abi3) build needs CPython >= 3.12")
    assert not glob.glob(str(project / "k*.so"))


def test_develop_abi3_builds_name_abi3_so_and_removes_the_other_kind(tmp_path, monkeypatch, capsys):
    """develop --abi3 (or the project's abi3 = true) builds NAME.abi3.so
    against the stable ABI and removes a NAME.cpython-*.so of an earlier
    develop, which Python would import first; a plain develop removes the
    .abi3.so in turn. The Go build itself is test_one_abi3_wheel's."""
    from godlpack import cli, scaffold

    project = tmp_path / "k"
    scaffold.new("k", str(project))
    specific, stable = project / ("k" + sysconfig.get_config_var("EXT_SUFFIX")), project / "k.abi3.so"
    calls = []

    def fake_build(out, proj, stable_abi=False):
        calls.append((os.path.basename(out), stable_abi))
        open(out, "w").close()
        return None

    monkeypatch.setattr(cli, "_build", fake_build)
    specific.write_text("")
    assert cli.main(["develop", "--abi3", str(project)]) == 0
    assert calls == [("k.abi3.so", True)] and stable.exists() and not specific.exists()
    assert cli.main(["develop", str(project)]) == 0
    assert calls[-1] == (specific.name, False) and specific.exists() and not stable.exists()
    with open(project / "pyproject.toml", "a") as f:
        f.write("abi3 = true\n")
    monkeypatch.delenv("GODLPACK_ABI3", raising=False)
    assert cli.main(["develop", str(project)]) == 0
    assert calls[-1] == ("k.abi3.so", True) and stable.exists() and not specific.exists()
    assert "built " in capsys.readouterr().out
