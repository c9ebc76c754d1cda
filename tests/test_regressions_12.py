"""Regression tests for issue 12 (items 2, 3, 10, 12 and pieces of 13): each
failed before its fix."""
from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import godlpack
import ctypes_producer as cp

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# --- item 2: a foreign deleter that runs Python code keeps the pending error ----

class PythonDeleterProducer(cp.CtypesProducer):
    """A producer whose deleter runs Python code that raises and catches an
    exception (as any Python-level deleter may), which clears whatever
    exception the caller had pending unless the caller saved it."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.deleted = 0

        def deleter(ptr):
            try:
                raise KeyError("inside the deleter")
            except KeyError:
                pass
            self.deleted += 1

        self._deleter = cp.DELETER(deleter)

    def make(self, versioned: bool = True):
        m, rec = super().make(versioned)
        m.deleter = ctypes.cast(self._deleter, ctypes.c_void_p).value
        return m, rec


def test_failed_copy_keeps_its_exception():
    # A broadcast view of 2**62 elements: the producer (legacy) cannot copy,
    # godlpack's copy fails with MemoryError, and then drops the producer's
    # tensor, whose deleter must not swallow the MemoryError.
    p = PythonDeleterProducer(np.zeros(1, np.float32), shape=[2**62], strides=[0], versioned=False,
                              legacy_signature=True)
    with pytest.raises(MemoryError):
        godlpack.from_dlpack(p, copy=True)
    assert p.deleted == 1


def test_tensor_dealloc_keeps_a_pending_exception():
    # The interpreter drops the half-built list's items while ZeroDivisionError
    # is pending: the Tensor's dealloc runs the deleter then.
    p = PythonDeleterProducer(np.arange(4, dtype=np.float32))

    def build():
        return [godlpack.from_dlpack(p), 1 // 0]

    with pytest.raises(ZeroDivisionError):
        build()
    assert p.deleted == 1


# --- item 10: a deep chain of imports is released without deep recursion ----

def test_deep_chain_releases_iteratively():
    # Each link: godlpack owns NumPy's export of an array that is a view of
    # godlpack's export of the previous link. Dropping the head used to recurse
    # through every link's deleter and overflow the C stack (segfault).
    code = textwrap.dedent("""
        import numpy as np, godlpack
        from godlpack import _godlpack
        base = _godlpack._live()
        g = godlpack.from_dlpack(np.arange(4, dtype=np.float64))
        for _ in range(200_000):
            g = godlpack.from_dlpack(np.from_dlpack(g))
        assert g.tolist() == [0.0, 1.0, 2.0, 3.0]
        del g
        assert _godlpack._live() == base, (_godlpack._live(), base)
        print("released")
    """)
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "pyext"))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0 and "released" in r.stdout, (r.returncode, r.stdout, r.stderr[-2000:])
