"""Operators (NotImplemented, reflected, in place), slices and the buffer
protocol of pyext classes: tests/opmod, built and checked in a process of
its own, and its stub under mypy."""
from gomod import build_and_check, mypy_good_and_bad


def test_operators_slices_and_buffers_in_a_go_extension(tmp_path):
    out = build_and_check(tmp_path, "opmod")
    assert "skipped" not in out, out


GOOD = """
    import numpy as np
    import opmod

    a = opmod.Arr.of(np.arange(3.0))
    b: opmod.Arr = a + a
    c: opmod.Arr = 2.0 * a - 1.0
    d: float = a @ b
    e: opmod.Arr = a[1:]
    f: float = a[0]
    a += b
    a *= 3
    a[::2] = np.zeros(2)
    del a[0]
    m = memoryview(opmod.Mat(2, 2))
    n: opmod.Arr = -a
"""

BAD = """
    import opmod

    a = opmod.Arr(3)
    s: str = a[0]
    t: float = a[1:]
    u = a + 1.0
"""


def test_the_stub_types_operators_and_slices(tmp_path):
    bad = mypy_good_and_bad(tmp_path, "opmod", GOOD, BAD)
    for line in (5, 6, 7):
        assert f"bad.py:{line}: error" in bad, bad


def test_the_docs_example_builds_and_its_session_holds(tmp_path):
    """docs/operators.md's Go block, as written, built as a module of its own
    (godlpack replaced by this tree), and its Python session run by doctest."""
    import doctest
    import os
    import re
    import shutil
    import subprocess
    import sys
    import sysconfig

    from gomod import ROOT

    with open(os.path.join(ROOT, "docs", "operators.md"), encoding="utf-8") as f:
        text = f.read()
    code = re.search(r"```go\n(.*?)```", text, re.S).group(1)
    session = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    project = tmp_path / "vecops"
    project.mkdir()
    (project / "main.go").write_text(code)
    with open(os.path.join(ROOT, "go.mod"), encoding="utf-8") as f:
        go = re.search(r"^go (\S+)", f.read(), re.M).group(1)
    (project / "go.mod").write_text(f"module vecops\n\ngo {go}\n\nrequire github.com/godlpack/godlpack v0.0.0\n\n"
                                    f"replace github.com/godlpack/godlpack => {ROOT}\n")
    shutil.copy(os.path.join(ROOT, "go.sum"), project / "go.sum")
    out = tmp_path / ("vecops" + sysconfig.get_config_var("EXT_SUFFIX"))
    env = dict(os.environ, GOPROXY="off", GOFLAGS="-mod=mod -buildvcs=false")
    r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "godlpack_build.py"), str(out), "."],
                       cwd=project, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    script = ("import doctest, sys\n"
              "t = doctest.DocTestParser().get_doctest(sys.stdin.read(), {}, 'operators.md', None, 0)\n"
              "r = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)\n"
              "r.run(t)\n"
              "print('attempted', r.tries, 'failed', r.failures)\n")
    r = subprocess.run([sys.executable, "-c", script], input=session, cwd=tmp_path,
                       env=dict(os.environ, PYTHONPATH=str(tmp_path)), capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip().endswith("failed 0"), r.stdout + r.stderr
    assert int(r.stdout.split()[-3]) >= 9, r.stdout
