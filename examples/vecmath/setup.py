"""Builds the Go package in this folder as the extension module `vecmath`."""
import os
import sys

from setuptools import setup

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "tools"))
from godlpack_build import BuildGoExt, GoExtension  # noqa: E402

setup(ext_modules=[GoExtension("vecmath", ".")], cmdclass={"build_ext": BuildGoExt})
