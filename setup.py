"""Builds godlpack._godlpack from the Go package ./pyext/module with the one
recipe in tools/godlpack_build.py (also used by `make ext`), and ships the
public C headers inside the package (godlpack.get_include())."""
from __future__ import annotations

import atexit
import glob
import os
import shutil
import sys
import tempfile

from setuptools import Extension, setup
from setuptools.command.build_py import build_py

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "tools"))
from godlpack_build import BuildGoExt, GoExtension  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


class BuildPyWithHeaders(build_py):
    def run(self) -> None:
        super().run()
        dest = os.path.join(self.build_lib, "godlpack", "include", "godlpack")
        os.makedirs(dest, exist_ok=True)
        for h in glob.glob(os.path.join(HERE, "include", "godlpack", "*.h")):
            shutil.copy(h, dest)


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
        GoExtension("godlpack._godlpack", "./pyext/module"),
        # The conformance checker's counting probes (test scaffolding, plain C).
        Extension("godlpack._probe", sources=["pyext/godlpack/_probe.c"], include_dirs=["include"],
                  extra_compile_args=["-pthread"]),
    ],
    cmdclass={"build_ext": BuildGoExt, "build_py": BuildPyWithHeaders},
)
