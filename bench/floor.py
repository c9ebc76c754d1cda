"""Builds bench/floor.c (the bench's floor rows) into an importable module.

Compiled with the interpreter's own C compiler and flags into the bench's
output folder at bench time; not part of godlpack."""
from __future__ import annotations

import importlib.util
import os
import shlex
import subprocess
import sys
import sysconfig

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def build(out_dir: str):
    """Compiles floor.c when it is newer than the built module; returns the module."""
    src = os.path.join(HERE, "floor.c")
    so = os.path.join(out_dir, "_floor" + sysconfig.get_config_var("EXT_SUFFIX"))
    if not os.path.exists(so) or os.path.getmtime(so) < os.path.getmtime(src):
        os.makedirs(out_dir, exist_ok=True)
        cc = shlex.split(sysconfig.get_config_var("CC") or "cc")
        cmd = [*cc, "-O2", "-shared", "-fPIC", "-I" + sysconfig.get_paths()["include"],
               "-I" + os.path.join(ROOT, "include"), src, "-o", so + ".tmp"]
        subprocess.run(cmd, check=True)
        os.replace(so + ".tmp", so)
    spec = importlib.util.spec_from_file_location("_floor", so)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    sys.modules["_floor"] = mod
    return mod
