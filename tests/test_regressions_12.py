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
