"""The stub of a Go extension (examples/vecmath's vecmath.pyi, written by
pyext.Module.Stub) as a user meets it: its wheel installed in a fresh venv,
then `mypy --strict` on a script that calls functions with keyword
arguments and uses a class, its methods and properties (passes), and on one
with type errors (fails, naming each). And the definition-time check of
pyext.Args defaults, as an extension's user meets it: an ImportError."""
import os
import subprocess
import sys
import textwrap

import pytest

from test_scaffold import _shim

pytest.importorskip("mypy")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

GOOD = """
    import numpy as np
    import vecmath

    x = np.linspace(-1.0, 2.0, 8)
    changed: int = vecmath.clip(x, lo=0.0, hi=1.0) + vecmath.clip(x) + vecmath.clip(x=x, hi=2.0)
    ix = vecmath.Index(3, name="points")
    n: int = ix.add(np.arange(6.0))
    best: int = ix.nearest(np.zeros(3), max_dist=10.0)
    d: vecmath.Tensor = ix.distances(np.zeros(3))
    ix.name = "renamed"
    label: str = ix.name
    c = vecmath.Counter(start=2)
    total: int = c.incr(by=3) + c.merge(vecmath.Counter()) + c.value + ix.size
    print(changed, n, best, d.shape, label, total)
"""

BAD = """
    import numpy as np
    import vecmath

    ix = vecmath.Index(3)
    ix.size = 4
    vecmath.clip(np.zeros(3), lo="low")
    s: str = ix.nearest(np.zeros(3))
    vecmath.Counter().merge(3)
    vecmath.clip(np.zeros(3), high=1.0)
"""


def test_mypy_strict_reads_the_installed_stub(tmp_path):
    env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1")
    wheels = tmp_path / "wheels"
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w",
                        str(wheels), "."], cwd=os.path.join(ROOT, "examples", "vecmath"), env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300)
    py = str(venv / "bin" / "python")
    site = subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    with open(os.path.join(site, "shim.pth"), "w") as f:  # NumPy (its own stubs), not godlpack
        f.write(_shim(str(tmp_path / "shim"), ["numpy"]) + "\n")
    (whl,) = wheels.iterdir()
    r = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", site, str(whl)],
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr

    def mypy(name, text):
        script = tmp_path / name
        script.write_text(textwrap.dedent(text))
        return subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--python-executable",
                               py, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=600)

    good = mypy("good.py", GOOD)
    assert good.returncode == 0 and "Success" in good.stdout, good.stdout + good.stderr
    # The script also runs, against the installed extension.
    run = subprocess.run([py, str(tmp_path / "good.py")], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    bad = mypy("bad.py", BAD)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    for want in ('Property "size" defined in "Index" is read-only', 'Argument "lo" to "clip" has incompatible type "str"',
                 'variable has type "str"', 'Argument 1 to "merge" of "Counter" has incompatible type "int"',
                 'Unexpected keyword argument "high" for "clip"'):
        assert want in bad.stdout, bad.stdout


def test_a_bad_default_fails_the_build_and_the_import_naming_it(tmp_path):
    """pyext.Args checks defaults against the Go parameter types when the
    module is defined: the build, which loads what it built for its stub,
    fails with one line naming the function, the parameter and the default
    (a project of `godlpack new` with one directive's default changed), and
    so would the import (ImportError), of a library built anyway."""
    import sysconfig

    from godlpack import scaffold

    project = tmp_path / "badkw"
    scaffold.new("badkw", str(project))
    main = (project / "main.go").read_text()
    assert "//pyext:function (x, a=2.0) writes(x)" in main
    (project / "main.go").write_text(main.replace("(x, a=2.0)", "(x, a='two')"))
    out = tmp_path / ("badkw" + sysconfig.get_config_var("EXT_SUFFIX"))
    r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "godlpack_build.py"), str(out), "."],
                       cwd=project, capture_output=True, text=True, timeout=600)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stdout + r.stderr
    want = "badkw.scale: pyext.Args: default a='two': not a float literal"
    assert r.stderr.strip().splitlines()[-1] == (
        f"the module's definition fails, as its import would (ImportError): {want}"), r.stderr
    r = subprocess.run([sys.executable, "-c", "import badkw"], env=dict(os.environ, PYTHONPATH=str(tmp_path)),
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 1
    assert f"ImportError: {want}" in r.stderr, r.stderr
