"""What a new user meets first: the NumPy-only demo, its help, and the C headers
found from a source tree (editable installs import godlpack from pyext/)."""
from __future__ import annotations

import filecmp
import os
import subprocess
import sys

import godlpack
from conftest import child_env

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _godlpack(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "godlpack", *args], cwd=ROOT, env=child_env(), capture_output=True,
                          text=True, timeout=120)


def test_demo_with_numpy_alone_counts_every_deleter():
    r = _godlpack("demo", "--no-peers")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "PyTorch step skipped" in r.stdout and "JAX step skipped" in r.stdout
    assert "godlpack.arange(12" in r.stdout and "v.copy()" in r.stdout  # Go makes and computes
    assert "'used_dltensor_versioned'" in r.stdout
    assert "[live now: 0 owners, 0 exports]" in r.stdout
    assert "Every deleter ran exactly once" in r.stdout


def test_demo_help_exits_0():
    r = _godlpack("demo", "--help")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("usage: python -m godlpack demo")


def test_get_include_points_at_real_headers():
    inc = godlpack.get_include()
    src = os.path.join(ROOT, "include", "godlpack")
    for name in sorted(os.listdir(src)):
        assert filecmp.cmp(os.path.join(inc, "godlpack", name), os.path.join(src, name), shallow=False), name


def test_get_include_from_a_source_tree_is_the_source_include():
    """An editable install imports the package from pyext/godlpack, where no include/ is copied;
    an installed package ships include/ inside itself."""
    pkg = os.path.dirname(os.path.abspath(godlpack.__file__))
    if os.path.isdir(os.path.join(pkg, "include")):  # left by an in-place build: the fallback is unused
        assert godlpack.get_include() == os.path.join(pkg, "include")
        return
    assert os.path.samefile(godlpack.get_include(), os.path.join(ROOT, "include"))
