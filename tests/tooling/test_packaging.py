"""What a new user meets first: the NumPy-only demo, its help, and the C headers
found from a source tree (editable installs import godlpack from pyext/)."""
from __future__ import annotations

import contextlib
import filecmp
import os
import subprocess
import sys

import godlpack
from harness import child_env

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


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
    """An editable install imports the package from python/godlpack, where no include/ is copied;
    an installed package ships include/ inside itself."""
    pkg = os.path.dirname(os.path.abspath(godlpack.__file__))
    if os.path.isdir(os.path.join(pkg, "include")):  # left by an in-place build: the fallback is unused
        assert godlpack.get_include() == os.path.join(pkg, "include")
        return
    assert os.path.samefile(godlpack.get_include(), os.path.join(ROOT, "include"))


# What setuptools writes into every sdist (metadata, not sources), and what a
# test run leaves in the tree it runs in (Hypothesis's example database, caches):
# in an unpacked sdist these are on disk without being the project's files.
SDIST_METADATA = ("PKG-INFO", "setup.cfg")
RUN_LEFTOVERS = (".hypothesis", ".pytest_cache", "__pycache__", ".venv", "build", "dist")


def _tree_files(root: str = ROOT) -> list[str]:
    """The project's own files: git's list in a checkout, and in an unpacked
    sdist (no .git) every file the sdist shipped, which is what is on disk
    less setuptools' metadata and what running the tests left there."""
    if os.path.isdir(os.path.join(root, ".git")) or os.path.isfile(os.path.join(root, ".git")):
        out = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True, timeout=60, check=True)
        return [f for f in out.stdout.splitlines() if os.path.exists(os.path.join(root, f))]
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in RUN_LEFTOVERS]
        for name in filenames:
            rel = os.path.relpath(os.path.join(dirpath, name), root)
            if rel not in SDIST_METADATA:
                found.append(rel)
    return found


def _left_out_by_manifest(root: str = ROOT) -> list[str]:
    """The project's files that no MANIFEST.in rule ships. Only repository
    plumbing, the committed benchmark results (measurements, not sources),
    built objects and symlinks (the sdist holds no links) are left out on
    purpose."""
    from setuptools.command.egg_info import FileList

    plumbing = (".gitignore", "MANIFEST.in")
    fl = FileList()
    fl.allfiles = _tree_files(root)
    with open(os.path.join(root, "MANIFEST.in")) as f, contextlib.chdir(root):  # recursive-include globs the cwd
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                fl.process_template_line(line)
    shipped = set(fl.files)
    return [f for f in fl.allfiles if f not in shipped and f not in plumbing and not f.endswith(".so")
            and "__pycache__" not in f and not f.endswith(".pyc") and not f.startswith("bench/results/")
            and not os.path.islink(os.path.join(root, f))]


def test_the_sdist_manifest_ships_every_tracked_file_the_tests_need():
    """MANIFEST.in decides what the sdist holds, and sdist-test runs the whole
    suite from it: a tracked file its rules miss (a test's .pyi, say) breaks
    that suite only in CI."""
    missing = _left_out_by_manifest()
    assert not missing, f"MANIFEST.in leaves these tracked files out of the sdist: {missing}"


def test_the_manifest_check_in_an_unpacked_sdist_after_a_test_run(tmp_path):
    """The same check where sdist-test runs it: no .git, setuptools' PKG-INFO
    and setup.cfg beside the sources, Hypothesis's database left by the run.
    Those are not the project's files (CI failed on them once); a source file
    the manifest misses still is."""
    root = tmp_path / "godlpack-0"
    for rel in ("MANIFEST.in", "go.mod", "tests/test_x.py", "python/godlpack/__init__.py"):
        dst = root / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        if rel == "MANIFEST.in":
            dst.write_text(open(os.path.join(ROOT, rel)).read())
        else:
            dst.write_text("")
    for rel in ("PKG-INFO", "setup.cfg", ".hypothesis/.gitignore", ".hypothesis/constants/0123"):
        dst = root / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_text("x")
    assert _left_out_by_manifest(str(root)) == []
    (root / "tests" / "notes.xyz").write_text("a file no rule ships")
    assert _left_out_by_manifest(str(root)) == ["tests/notes.xyz"]
