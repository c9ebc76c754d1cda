"""Builds godlpack._godlpack from the Go package ./module with the one
recipe in tools/godlpack_build.py (also used by `make ext`), and ships inside
the package the public C headers (godlpack.get_include()), the Go source of
godlpack's module for extensions written in Go (godlpack/go:
godlpack.get_go_source()) and the build backend `python -m godlpack new`
copies into their projects (godlpack/_build)."""
from __future__ import annotations

import atexit
import glob
import os
import shutil
import subprocess
import sys
import tempfile

from setuptools import Extension, setup
from setuptools.command.build_py import build_py

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "tools"))
from godlpack_build import BuildGoExt, GoExtension  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


MODULE = "github.com/godlpack/godlpack"

# Adapter packages an extension may import besides pyext (docs/gonum.md): each
# imports pyext and a third-party library, which the extension's own go.mod
# adds (go get). Listed, not asked of go list, which would need that library.
ADAPTERS = ["pyext/gonum"]
# The generator every build of an extension with //pyext: directives runs
# (go run github.com/godlpack/godlpack/pyext/pyextgen): the standard library only.
GENERATORS = ["pyext/pyextgen"]


def go_packages() -> list[str]:
    """The directories of this module's Go packages that an extension links
    (go list -deps ./pyext): what godlpack.get_go_source() must ship."""
    try:
        out = subprocess.run(["go", "list", "-deps", "-f", "{{.ImportPath}}", "./pyext"], cwd=HERE,
                             capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        raise SystemExit(f"godlpack needs Go (the version go.mod names) on PATH to build: go list failed: {e}")
    pkgs = [p for p in out.split() if p == MODULE or p.startswith(MODULE + "/")]
    return [os.path.relpath(p[len(MODULE):].lstrip("/") or ".") for p in pkgs] + ADAPTERS + GENERATORS


def go_source_files() -> list[str]:
    """godlpack's Go module as extensions build it, relative to HERE: the
    packages' sources and headers, not their tests."""
    files = ["go.mod", "go.sum", "LICENSE"]
    for pkg in go_packages():
        for pattern in ("*.go", "*.c", "*.h", "*.s"):
            for path in sorted(glob.glob(os.path.join(HERE, pkg, pattern))):
                if not path.endswith("_test.go"):
                    files.append(os.path.relpath(path, HERE))
    files += [os.path.relpath(h, HERE) for h in sorted(glob.glob(os.path.join(HERE, "include", "godlpack", "*.h")))]
    return files


class BuildPyWithHeaders(build_py):
    def run(self) -> None:
        super().run()
        pkg = os.path.join(self.build_lib, "godlpack")
        dest = os.path.join(pkg, "include", "godlpack")
        os.makedirs(dest, exist_ok=True)
        for h in glob.glob(os.path.join(HERE, "include", "godlpack", "*.h")):
            shutil.copy(h, dest)
        for rel in go_source_files():
            out = os.path.join(pkg, "go", rel)
            os.makedirs(os.path.dirname(out), exist_ok=True)
            shutil.copy(os.path.join(HERE, rel), out)
        os.makedirs(os.path.join(pkg, "_build"), exist_ok=True)
        # the backend, its zig targets (release wheels; cross, fatmacho: Windows/macOS wheels of projects)
        for tool in ("godlpack_build.py", "zigcc.py", "crossdeps.py", "cross.py", "fatmacho.py"):
            shutil.copy(os.path.join(HERE, "tools", tool), os.path.join(pkg, "_build"))


# Build folders go to a temporary directory, not the source tree (pip install .
# leaves nothing behind); GODLPACK_BUILD_DIR keeps them somewhere chosen.
_SCRATCH = os.environ.get("GODLPACK_BUILD_DIR")
if not _SCRATCH:
    _SCRATCH = tempfile.mkdtemp(prefix="godlpack-build-")
    atexit.register(shutil.rmtree, _SCRATCH, ignore_errors=True)

setup(
    options={"build": {"build_base": os.path.join(_SCRATCH, "build")},
             "egg_info": {"egg_base": _SCRATCH}},
    ext_modules=[
        GoExtension("godlpack._godlpack", "./module"),
        # The conformance checker's counting probes (test scaffolding, plain C).
        Extension("godlpack._probe", sources=["python/godlpack/_probe.c"], include_dirs=["include"],
                  extra_compile_args=["-pthread"]),
    ],
    cmdclass={"build_ext": BuildGoExt, "build_py": BuildPyWithHeaders},
)
