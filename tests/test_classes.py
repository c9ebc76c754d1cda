"""Class features of Go extensions (pyext.Class: weak references, repr and
str, static and class methods, comparison and hashing, the sequence and
iterator protocols, context managers, calls, custom exceptions) and the
typed wrappers of every arity: builds the test extension tests/classmod and
runs its tests (tests/classmod/check_classmod.py) in a process of its own,
as the extension brings its own Go runtime. (Named check_*, so that a run of
tests/ does not collect it in this process.)"""
import os
import subprocess
import sys
import sysconfig

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLASSMOD = os.path.join(ROOT, "tests", "classmod")


def test_class_features_in_a_go_extension(tmp_path):
    out = tmp_path / ("classmod" + sysconfig.get_config_var("EXT_SUFFIX"))
    build = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "godlpack_build.py"), str(out),
                            "./tests/classmod"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stdout + build.stderr
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    # --noconftest: tests/conftest.py imports godlpack (a second Go runtime).
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--noconftest",
                        "-W", "error::RuntimeWarning", os.path.join(CLASSMOD, "check_classmod.py")], cwd=tmp_path,
                       env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert " passed" in r.stdout and " failed" not in r.stdout and "skipped" not in r.stdout, r.stdout
