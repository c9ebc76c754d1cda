"""Pickling CUDA tensors against the stand-in driver (run by
tests/runtime/test_fakecuda.py, one process per case): a CUDA tensor pickles through
a host copy and unpickles onto the same CUDA device; copy.copy stays on the
device; without a driver, unpickling raises BufferError saying why."""
from __future__ import annotations

import copy
import gc
import os
import pickle
import subprocess
import sys

import numpy as np

import godlpack
from ctypes_producer import READ_ONLY, CtypesProducer
from fakecuda.driver import FakeCuda
from godlpack import _godlpack

CPU, CUDA = 1, 2
drv = FakeCuda()


def on_gpu(array, **kw):
    drv.register(array)
    return godlpack.from_dlpack(CtypesProducer(array, device=(CUDA, 0), **kw))


def host(t):
    return godlpack.from_dlpack(t.__dlpack__(max_version=(1, 3), dl_device=(CPU, 0))).tolist()


def dropped():
    gc.collect()
    _godlpack._cuda_trim()
    assert _godlpack._live() == (0, 0), _godlpack._live()
    drv.balanced()


def case_a_cuda_tensor_pickles_through_the_host_and_unpickles_on_cuda():
    a = np.arange(12.0).reshape(3, 4)
    t = on_gpu(a)
    for protocol in (2, 5):
        _godlpack._cuda_trim()  # no kept device block: unpickling allocates
        drv.reset()
        bufs = []
        s = pickle.dumps(t, protocol=protocol, buffer_callback=bufs.append if protocol == 5 else None)
        assert drv.count("cuMemcpyDtoHAsync_v2") == 1, drv.log()  # one host copy
        u = pickle.loads(s, buffers=bufs)
        assert u.device == (CUDA, 0) and u.shape == (3, 4) and u.dtype == "float64" and not u.readonly
        assert drv.count("cuMemAlloc_v2") == 1, drv.log()  # back on the device
        assert host(u) == a.tolist()
        del u, s, bufs
    del t
    dropped()


def case_a_strided_read_only_cuda_view_pickles_its_contents():
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    v = a[:, ::2]
    drv.register(a)
    t = godlpack.from_dlpack(CtypesProducer(v, device=(CUDA, 0), flags=READ_ONLY))
    assert t.readonly
    u = pickle.loads(pickle.dumps(t, protocol=5))
    assert u.device == (CUDA, 0) and u.readonly and u.is_contiguous
    assert host(u) == v.tolist()
    del t, u
    dropped()


def case_copy_of_a_cuda_tensor_stays_on_the_device():
    a = np.arange(5.0)
    t = on_gpu(a)
    for fn in (copy.copy, copy.deepcopy):
        u = fn(t)
        assert u.device == (CUDA, 0) and u.data_ptr != t.data_ptr and not u.is_copied
        assert host(u) == a.tolist()
        del u
    del t
    dropped()


def case_without_a_driver_unpickling_a_cuda_tensor_says_why():
    t = on_gpu(np.arange(3.0))
    s = pickle.dumps(t, protocol=4)
    del t
    code = ("import pickle, sys\n"
            "try:\n"
            "    pickle.loads(sys.stdin.buffer.read())\n"
            "except BufferError as e:\n"
            "    print(e)\n")
    env = dict(os.environ, GODLPACK_LIBCUDA="/nonexistent/libcuda.so.1")
    r = subprocess.run([sys.executable, "-c", code], input=s, env=env, capture_output=True, timeout=60)
    out = r.stdout.decode()
    assert r.returncode == 0 and out.startswith("cannot unpickle a CUDA tensor here"), (out, r.stderr)
    assert "could not be loaded" in out, out
    dropped()
