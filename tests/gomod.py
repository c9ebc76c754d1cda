"""The test extensions under tests/ (classmod, arrmod, gonummod...): each is a Go
main package with a check_NAME.py of pytest tests beside it; and the runnable
examples of docs/ pages, built and doctested."""
from __future__ import annotations

import os
import subprocess
import sys
import sysconfig

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def build_and_check(tmp_path, name: str) -> str:
    """Builds tests/NAME as the extension NAME in tmp_path, then runs
    tests/NAME/check_NAME.py against it in a pytest of its own, with the
    extension alone on its path and no conftest (tests/conftest.py imports
    godlpack, which an extension must never need). Returns pytest's output,
    failing with it unless every test passed."""
    out = tmp_path / (name + sysconfig.get_config_var("EXT_SUFFIX"))
    build = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "godlpack_build.py"), str(out),
                            f"./tests/{name}"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stdout + build.stderr
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--noconftest",
                        "-W", "error::RuntimeWarning", os.path.join(ROOT, "tests", name, f"check_{name}.py")],
                       cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(tmp_path)), capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert " passed" in r.stdout and " failed" not in r.stdout, r.stdout
    return r.stdout


def mypy_good_and_bad(tmp_path, name: str, good: str, bad: str) -> str:
    """tests/NAME/NAME.pyi under mypy --strict: the code good type-checks,
    the code bad does not. Returns mypy's report of bad, to name its errors."""
    import shutil
    import textwrap

    shutil.copy(os.path.join(ROOT, "tests", name, f"{name}.pyi"), tmp_path / f"{name}.pyi")
    (tmp_path / "good.py").write_text(textwrap.dedent(good))
    (tmp_path / "bad.py").write_text(textwrap.dedent(bad))
    env = dict(os.environ, MYPYPATH=str(tmp_path))
    cmd = [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", os.devnull]
    r = subprocess.run(cmd + [str(tmp_path / "good.py")], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    r = subprocess.run(cmd + [str(tmp_path / "bad.py")], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 1, r.stdout + r.stderr
    return r.stdout


def doc_example(tmp_path, page: str, name: str) -> str:
    """docs/PAGE's first Go block, as written, built as the extension NAME
    (a module of its own, godlpack replaced by this tree), and the page's
    first Python block run by doctest against it. Returns doctest's report,
    failing unless every example held."""
    import re
    import shutil

    with open(os.path.join(ROOT, "docs", page), encoding="utf-8") as f:
        text = f.read()
    code = re.search(r"```go\n(.*?)```", text, re.S).group(1)
    session = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    project = tmp_path / name
    project.mkdir()
    (project / "main.go").write_text(code)
    with open(os.path.join(ROOT, "go.mod"), encoding="utf-8") as f:
        go = re.search(r"^go (\S+)", f.read(), re.M).group(1)
    (project / "go.mod").write_text(f"module {name}\n\ngo {go}\n\nrequire github.com/godlpack/godlpack v0.0.0\n\n"
                                    f"replace github.com/godlpack/godlpack => {ROOT}\n")
    shutil.copy(os.path.join(ROOT, "go.sum"), project / "go.sum")
    out = tmp_path / (name + sysconfig.get_config_var("EXT_SUFFIX"))
    env = dict(os.environ, GOPROXY="off", GOFLAGS="-mod=mod -buildvcs=false")
    r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "godlpack_build.py"), str(out), "."],
                       cwd=project, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    script = ("import doctest, sys\n"
              "t = doctest.DocTestParser().get_doctest(sys.stdin.read(), {}, %r, None, 0)\n"
              "r = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)\n"
              "r.run(t)\n"
              "print('attempted', r.tries, 'failed', r.failures)\n") % page
    r = subprocess.run([sys.executable, "-c", script], input=session, cwd=tmp_path,
                       env=dict(os.environ, PYTHONPATH=str(tmp_path)), capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip().endswith("failed 0"), r.stdout + r.stderr
    return r.stdout
