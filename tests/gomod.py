"""The test extensions under tests/ (classmod, arrmod, gonummod): each is a Go
main package with a check_NAME.py of pytest tests beside it."""
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
