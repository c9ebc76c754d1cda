"""The test extensions under tests/pyext/ (classmod, arrmod, gonummod...): each
is a Go main package with a check_NAME.py of pytest tests beside it, built
once per run when first imported; and the runnable examples of docs/ pages,
built and doctested."""
from __future__ import annotations

import importlib.abc
import importlib.util
import os
import subprocess
import sys
import sysconfig

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


EXTENSIONS = os.path.join(ROOT, "tests", "pyext")
SUFFIX = sysconfig.get_config_var("EXT_SUFFIX")
# A folder of test extensions built before, used as they are, not rebuilt:
# the stable-ABI tests build NAME.abi3.so once with one Python and run its
# check_NAME.py with others (tests/tooling/test_abi3.py).
PREBUILT = "GODLPACK_TESTMODS"
_built: dict[str, str] = {}
_folder: list[str] = []


def folder() -> str:
    """The one temporary folder the test extensions are built into (removed
    at exit); $GODLPACK_TESTMODS where set (built())."""
    if os.environ.get(PREBUILT):
        return os.environ[PREBUILT]
    if not _folder:
        import atexit
        import shutil
        import tempfile

        _folder.append(tempfile.mkdtemp(prefix="godlpack-testmods-"))
        atexit.register(shutil.rmtree, _folder[0], True)
    return _folder[0]


def extension_names() -> list[str]:
    """The test extensions: the Go main packages under tests/pyext/."""
    return sorted(d for d in os.listdir(EXTENSIONS) if os.path.isfile(os.path.join(EXTENSIONS, d, "main.go")))


# make asan / make ubsan (mk/sanitize.mk) set these: the sanitizer's flags,
# which the test extensions are built with too, so that their C (and, under
# -asan, their Go) is checked as godlpack's own module is.
SANITIZER_FLAGS = {"CGO_CFLAGS": "GODLPACK_SAN_CFLAGS", "CGO_LDFLAGS": "GODLPACK_SAN_LDFLAGS",
                   "GOFLAGS": "GODLPACK_SAN_GOFLAGS"}


def build_env(**extra: str) -> dict[str, str]:
    """The environment a test extension is built in: this one, plus the
    sanitizer's flags where make asan/ubsan set them (added to extra's
    GOFLAGS). The sanitizer's runtime stays preloaded: the build loads the
    instrumented library in a child Python to write its stub."""
    env = dict(os.environ, **extra)
    for var, src in SANITIZER_FLAGS.items():
        if os.environ.get(src):
            base = env.get(var, "-buildvcs=false" if var == "GOFLAGS" else "")
            env[var] = f"{base} {os.environ[src]}".strip()
    return env




def built(name: str) -> str:
    """The file of tests/pyext/NAME built as the extension NAME into folder(),
    once per process, with its stub NAME.pyi beside it (written by the build
    from the library: stub()); a build failure fails the caller with the
    compiler's output. With $GODLPACK_TESTMODS, that folder's NAME.abi3.so
    or NAME.abi3t.so (else NAME with this Python's suffix), built before."""
    if os.environ.get(PREBUILT):
        for suffix in (".abi3.so", ".abi3t.so", SUFFIX):
            path = os.path.join(folder(), name + suffix)
            if os.path.exists(path):
                return path
        raise ImportError(f"${PREBUILT} ({os.environ[PREBUILT]}) has no build of {name}", name=name)
    if name not in _built:
        out = os.path.join(folder(), name + SUFFIX)
        r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "godlpack_build.py"), out,
                            f"./tests/pyext/{name}"], cwd=ROOT, env=build_env(), capture_output=True, text=True,
                           timeout=600)
        if r.returncode != 0:
            raise ImportError(f"building tests/pyext/{name} failed:\n{r.stdout}{r.stderr}", name=name)
        _built[name] = out
    return _built[name]


def stub(name: str) -> str:
    """The stub the build wrote for tests/pyext/NAME (pyext.Module.Stub of
    that very build, tools/godlpack_build.py)."""
    path = os.path.join(os.path.dirname(built(name)), name + ".pyi")
    with open(path, encoding="utf-8") as f:
        return f.read()


class ExtensionFinder(importlib.abc.MetaPathFinder):
    """`import NAME` of a test extension builds it (once) and loads it, so
    each tests/pyext/NAME/check_NAME.py is collected by the outer pytest
    run, its tests items of that run. First on sys.meta_path: the folder
    tests/pyext/NAME on sys.path would otherwise be found as a namespace
    package NAME."""

    def __init__(self) -> None:
        self.names = set(extension_names())

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in self.names:
            return None
        return importlib.util.spec_from_file_location(fullname, built(fullname))


def stands_alone(name: str) -> None:
    """The test extension NAME imports in a fresh interpreter with only its
    own folder on the path, and imports no godlpack module: an extension
    needs nothing of godlpack's at run time."""
    where = os.path.dirname(built(name))
    code = f"import sys, {name}; print(sorted(m for m in sys.modules if m.startswith('godlpack')))"
    r = subprocess.run([sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {where!r}); {code}"],
                       cwd=where, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip() == "[]", r.stdout


def install_finder() -> None:
    """Installs the finder, and puts folder() on sys.path and on the
    PYTHONPATH of child interpreters (a check may start one, or a spawned
    pool, that imports its extension, built by then)."""
    if not any(isinstance(f, ExtensionFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, ExtensionFinder())
        sys.path.append(folder())
        paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        os.environ["PYTHONPATH"] = os.pathsep.join([*paths, folder()])


def mypy_good_and_bad(tmp_path, name: str, good: str, bad: str) -> str:
    """The stub the build wrote for tests/pyext/NAME under mypy --strict: the
    code good type-checks, the code bad does not. Returns mypy's report of
    bad, to name its errors."""
    import textwrap

    (tmp_path / f"{name}.pyi").write_text(stub(name))
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
    env = build_env(GOPROXY="off", GOFLAGS="-mod=mod -buildvcs=false")
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
