"""The example Go extension (examples/vecmath) builds with godlpack's build
recipe and passes its own tests, in a process of its own: this one already
holds godlpack's Go runtime, and one runtime per process is the rule."""
import os
import subprocess
import sys
import sysconfig
from conftest import child_env

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "examples", "vecmath")


def test_vecmath_builds_and_passes_its_tests(tmp_path):
    out = tmp_path / ("vecmath" + sysconfig.get_config_var("EXT_SUFFIX"))
    build = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "godlpack_build.py"), str(out), "."],
                           cwd=EXAMPLE, capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stdout + build.stderr
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "error::RuntimeWarning",
                        os.path.join(EXAMPLE, "test_vecmath.py"), os.path.join(EXAMPLE, "test_classes.py")],
                       cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert " passed" in r.stdout and " failed" not in r.stdout, r.stdout


def test_vecmath_gpu_arguments_with_the_stand_in_driver(tmp_path):
    """vecmath's tests of arrays on a device, with a CUDA driver loaded (the
    stand-in, tests/fakecuda): the host synchronises only memory it reads."""
    from fakecuda import driver

    lib = driver.build(str(tmp_path))
    out = tmp_path / ("vecmath" + sysconfig.get_config_var("EXT_SUFFIX"))
    build = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "godlpack_build.py"), str(out), "."],
                           cwd=EXAMPLE, capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stdout + build.stderr
    env = dict(os.environ, PYTHONPATH=str(tmp_path), GODLPACK_LIBCUDA=lib)
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "error::RuntimeWarning",
                        "-k", "gpu or managed or host_waits", os.path.join(EXAMPLE, "test_vecmath.py")], cwd=tmp_path,
                       env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "5 passed" in r.stdout and "skipped" not in r.stdout, r.stdout


def test_a_second_go_runtime_is_reported(tmp_path):
    """godlpack imported after another Go extension warns, naming it."""
    out = tmp_path / ("vecmath" + sysconfig.get_config_var("EXT_SUFFIX"))
    subprocess.run([sys.executable, os.path.join(ROOT, "tools", "godlpack_build.py"), str(out), "."],
                   cwd=EXAMPLE, check=True, capture_output=True, timeout=600)
    code = ("import warnings, vecmath\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    import godlpack\n"
            "print([str(x.message) for x in w if issubclass(x.category, RuntimeWarning)])\n"
            "print(sorted(is_self for _, is_self in godlpack.go_runtimes()))\n")
    env = child_env(str(tmp_path))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    warned, selves = r.stdout.strip().splitlines()
    assert "another Go runtime" in warned and "vecmath" in warned and "SIGURG" in warned
    assert selves == "[False, True]"


def test_vecmath_go_tests_pass_and_its_stub_is_current():
    """examples/vecmath's own Go test: its .pyi matches pyext.Module.Stub()."""
    env = dict(os.environ, CGO_CFLAGS=f"-I{sysconfig.get_paths()['include']}", GOFLAGS="-buildvcs=false")
    r = subprocess.run(["go", "test", "-count=1", "./..."], cwd=EXAMPLE, env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "ok" in r.stdout
