"""ftmod (Module.FreeThreaded) under many threads: its converted arguments
come from pyext's shared pool of argument states, pushed and popped by every
call. On a free-threaded CPython these calls run without the GIL."""
import os
import subprocess
import sys
import sysconfig

import ftmod
import numpy as np
from threads import in_threads


def test_the_import_leaves_the_gil_as_it_was():
    # ftmod declares Py_MOD_GIL_NOT_USED: a free-threaded CPython keeps the GIL
    # off. In a fresh interpreter, ftmod imported first: the GIL's state read
    # next is what ftmod's import left (NumPy, imported here, may re-enable it).
    code = ("import sys; sys.path.insert(0, %r); import ftmod\n"
            "print(sys._is_gil_enabled() if hasattr(sys, '_is_gil_enabled') else True)") % os.path.dirname(ftmod.__file__)
    r = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip() == str(not sysconfig.get_config_var("Py_GIL_DISABLED")), r.stdout


def test_dot_converts_both_arguments():
    x, y = np.arange(5, dtype=np.float32), np.arange(10.0)[::2]  # a dtype and a stride to convert
    assert ftmod.dot(x, y) == float(np.dot(x.astype(np.float64), y))


def test_eight_threads_share_the_argument_pool():
    # Each thread's operands are its own: a state handed to two calls at once
    # (a pool pop or push torn by a race) would mix one thread's data into another's result.
    def work(k):
        x = np.full(64 + k, k + 1, dtype=np.float32)  # converted: float32 to float64
        y = np.arange(2.0 * (64 + k))[::2]  # converted: strided
        want = float((k + 1) * y.sum())
        for _ in range(3000):
            got = ftmod.dot(x, y)
            assert got == want, (k, got, want)

    in_threads(work, 8)
