"""The short version of `make soak`: mixed exchanges with NumPy and PyTorch
must leave no live owners or exports behind, leave the inputs' reference counts
as they were, and grow neither traced Python memory nor RSS beyond a small
bound (bench/soak.py asserts and prints the figures). Every count is of what
godlpack owns, so the verdict is deterministic; the Go heap's object count
(which varied by thousands with GC timing) is printed only."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("torch", reason="optional peer torch not installed (bench/soak.py exchanges with PyTorch)")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_short_soak_has_bounded_growth():
    r = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "soak.py"), "-n", "80000"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "no leak" in r.stdout
    assert "80,000 exchanges" in r.stdout
