"""Builds the Go package in this folder as the extension module `vecmath`
(the backend puts its type stub vecmath.pyi next to it). Build folders go to a temporary
directory: `pip install .` leaves this folder as it was."""
import atexit
import os
import shutil
import sys
import tempfile

from setuptools import setup

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "tools"))
from godlpack_build import BuildGoExt, GoExtension  # noqa: E402


SCRATCH = tempfile.mkdtemp(prefix="vecmath-build-")
atexit.register(shutil.rmtree, SCRATCH, ignore_errors=True)

setup(
    options={"build": {"build_base": os.path.join(SCRATCH, "build")}, "egg_info": {"egg_base": SCRATCH}},
    ext_modules=[GoExtension("vecmath", ".")],
    cmdclass={"build_ext": BuildGoExt},
)
