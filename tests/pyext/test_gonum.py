"""gonum's matrices and vectors in Go extensions (pyext/gonum, registered
through pyext.RegisterArrayType): the test extension tests/pyext/gonummod,
whose checks (tests/pyext/gonummod/check_gonummod.py: values, zero-copy
parameters and results, strided results, refusals, conversions, NumPy and
PyTorch), collected by this run; and its stub under mypy."""
import os
import subprocess
import sys
import sysconfig
import textwrap

import pytest
from gomod import mypy_good_and_bad, stands_alone
from gomod import stub as gomod_stub

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GONUMMOD = os.path.join(ROOT, "tests", "pyext", "gonummod")


def test_gonummod_imports_without_godlpack():
    stands_alone("gonummod")


def test_the_stub_types_gonum_parameters_as_arrays():
    """gonummod.pyi (pyext.Module.Stub, written by the build): gonum
    parameters take DLPack and buffer objects (N-d views, as NDArray),
    converted ones ArrayLike, gonum results Tensor."""
    stub = gomod_stub("gonummod")
    assert "def matvec(m: SupportsDLPack | Buffer, x: SupportsDLPack | Buffer, /) -> Tensor:" in stub
    assert "def matvec_conv(m: ArrayLike, x: ArrayLike, /) -> Tensor:" in stub
    assert "def eye(n: int, /) -> tuple[Tensor, int]:" in stub
    assert "    def add(self, m: ArrayLike, /) -> float:" in stub
    assert "from numpy.typing import ArrayLike" in stub


GOOD = """
    import numpy as np
    import gonummod

    m = np.eye(3)
    t: float = gonummod.trace(m) + gonummod.norm(np.ones(3))
    y: gonummod.Tensor = gonummod.matvec(m, np.ones(3))
    z = gonummod.matvec_conv([[1, 2], [3, 4]], [1.0, 2.0])
    e, address = gonummod.eye(2)
    a: int = address
    print(t, y.shape, z.dtype, e, a, gonummod.Acc().add([[1.0]]))
"""

BAD = """
    import gonummod

    gonummod.trace([[1.0, 0.0], [0.0, 1.0]])
    s: float = gonummod.matvec_conv([[1.0]], [1.0])
"""


def test_the_stub_under_mypy(tmp_path):
    pytest.importorskip("mypy")
    bad = mypy_good_and_bad(tmp_path, "gonummod", GOOD, BAD)
    assert 'Argument 1 to "trace" has incompatible type "list[list[float]]"' in bad, bad
    assert 'Incompatible types in assignment (expression has type "Tensor", variable has type "float")' in bad, bad


@pytest.mark.one_python
def test_the_docs_example_builds_in_a_new_project(tmp_path):
    """docs/gonum.md's example, as written there: a project from `godlpack
    new`, the Go code of its first go block added to main.go, `go get
    gonum.org/v1/gonum` (from the module cache: the version godlpack's go.mod
    names, which building tests/pyext/gonummod fetched), built and called."""
    import re

    from godlpack import scaffold

    with open(os.path.join(ROOT, "docs", "gonum.md"), encoding="utf-8") as f:
        code = re.search(r"```go\n(.*?)```", f.read(), re.S).group(1)
    imports = re.search(r"^import \(\n(.*?)^\)\n", code, re.S | re.M).group(1)
    funcs = code[code.index("\n// x with a @ x = b"):]
    project = tmp_path / "gkern"
    scaffold.new("gkern", str(project))
    main = (project / "main.go").read_text()
    main = main.replace('\t"github.com/godlpack/godlpack/pyext"\n', imports, 1)
    main += funcs
    (project / "main.go").write_text(main)
    with open(os.path.join(ROOT, "go.mod"), encoding="utf-8") as f:
        version = re.search(r"gonum\.org/v1/gonum (v\S+)", f.read()).group(1)
    env = dict(os.environ, GOPROXY="off", GOFLAGS="-buildvcs=false")
    r = subprocess.run(["go", "get", f"gonum.org/v1/gonum@{version}"], cwd=project, env=env, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    out = tmp_path / ("gkern" + sysconfig.get_config_var("EXT_SUFFIX"))
    r = subprocess.run([sys.executable, os.path.join("_build", "godlpack_build.py"), str(out), "."], cwd=project,
                       env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    script = textwrap.dedent("""
        import numpy as np, gkern
        a, b = np.array([[3.0, 1.0], [1.0, 2.0]]), np.array([9.0, 8.0])
        print(np.from_dlpack(gkern.solve(a, b)).tolist())
        for bad in (a.T, np.zeros((2, 2))):
            try:
                gkern.solve(bad, b)
            except (BufferError, ValueError) as e:
                print(type(e).__name__, e)
    """)
    r = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(tmp_path)),
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "[2.0, 3.0]"
    assert lines[1].startswith("BufferError solve() argument 'a': want C-contiguous, got strides (1, 2)")
    assert lines[2] == "ValueError solve: matrix singular or near-singular with condition number +Inf"
