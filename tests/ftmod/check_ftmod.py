"""ftmod (Module.FreeThreaded) under many threads: its converted arguments
come from pyext's shared pool of argument states, pushed and popped by every
call. Run by tests/test_free_threading.py in a process of its own, with ftmod
on PYTHONPATH; on a free-threaded CPython these calls run without the GIL."""
import sys
import sysconfig
import threading

import ftmod  # first: the GIL's state read next is what ftmod's import left (NumPy may re-enable it)

GIL_AFTER_IMPORT = sys._is_gil_enabled() if hasattr(sys, "_is_gil_enabled") else True

import numpy as np  # noqa: E402


def test_the_import_leaves_the_gil_as_it_was():
    # ftmod declares Py_MOD_GIL_NOT_USED: a free-threaded CPython keeps the GIL off.
    assert GIL_AFTER_IMPORT == (not sysconfig.get_config_var("Py_GIL_DISABLED"))


def test_dot_converts_both_arguments():
    x, y = np.arange(5, dtype=np.float32), np.arange(10.0)[::2]  # a dtype and a stride to convert
    assert ftmod.dot(x, y) == float(np.dot(x.astype(np.float64), y))


def test_eight_threads_share_the_argument_pool():
    # Each thread's operands are its own: a state handed to two calls at once
    # (a pool pop or push torn by a race) would mix one thread's data into another's result.
    errors = []
    barrier = threading.Barrier(8)

    def work(k):
        x = np.full(64 + k, k + 1, dtype=np.float32)  # converted: float32 to float64
        y = np.arange(2.0 * (64 + k))[::2]  # converted: strided
        want = float((k + 1) * y.sum())
        barrier.wait()
        for _ in range(3000):
            got = ftmod.dot(x, y)
            if got != want:
                errors.append((k, got, want))
                return

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
        assert not t.is_alive(), "a thread did not finish"
    assert errors == []
