"""GPU tensors: device bookkeeping, stream rules, host/device copies.

The first part needs no GPU: CUDA-typed tensors from the ctypes producer are
carried and re-exported without ever being dereferenced, the stream rules are
enforced, and without a driver GPU work fails with a clear error. The second
part runs on machines with a GPU (PyTorch CUDA or CuPy) and skips elsewhere.
"""
from __future__ import annotations

import gc
import os
import subprocess
import sys

import numpy as np
import pytest

import godlpack
from ctypes_producer import CtypesProducer, read_legacy, read_versioned
from harness import SUPPORT
from godlpack import _godlpack

CUDA, CUDA_HOST, ROCM, ROCM_HOST, CUDA_MANAGED = 2, 3, 10, 11, 13
DRIVER, DRIVER_WHY = _godlpack.cuda_status()


def fake_gpu(device=(CUDA, 0)):
    """A godlpack tensor claiming GPU memory (the host buffer is never read)."""
    p = CtypesProducer(np.arange(6.0).reshape(2, 3), device=device)
    return p, godlpack.from_dlpack(p)


def test_driver_is_loaded_lazily_and_reports_why_not():
    env = dict(os.environ, GODLPACK_LIBCUDA="/nonexistent/libcuda.so.1")
    code = ("import godlpack, numpy as np\n"
            "ok, why = godlpack._godlpack.cuda_status()\n"
            "t = godlpack.arange(3)\n"  # CPU work never needs the driver
            "print(ok, '/nonexistent/libcuda.so.1' in why, t.tolist())\n"
            "try:\n    t.__dlpack__(dl_device=(2, 0))\nexcept BufferError as e:\n    print('CUDA driver' in str(e))\n")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["False", "True", "[0,", "1,", "2]", "True"]


@pytest.mark.parametrize("device", [(CUDA, 0), (CUDA, 3), (ROCM, 1), (CUDA_MANAGED, 0), (CUDA_HOST, 0)])
def test_gpu_tensors_are_carried_without_copying(device):
    p, t = fake_gpu(device)
    assert t.__dlpack_device__() == device and t.device == device
    assert t.data_ptr == p.array.ctypes.data
    cap = t.__dlpack__(max_version=(1, 3), stream=-1)
    m = read_versioned(cap)
    assert (m.dl_tensor.device.device_type, m.dl_tensor.device.device_id) == device
    assert m.dl_tensor.data == p.array.ctypes.data and m.flags == 0
    del cap, t
    gc.collect()
    assert p.deleter_calls == 1


def test_device_memory_is_never_dereferenced():
    p, t = fake_gpu()
    with pytest.raises(BufferError, match="CPU-accessible"):
        t.tolist()
    with pytest.raises(BufferError):
        memoryview(t)
    with pytest.raises(BufferError, match="copy=False"):
        t.__dlpack__(max_version=(1, 3), dl_device=(1, 0), copy=False)
    with pytest.raises(BufferError, match="cannot move"):
        t.__dlpack__(max_version=(1, 3), dl_device=(ROCM, 0))


def test_host_visible_memory_is_handed_to_cpu_consumers_as_is():
    p, t = fake_gpu((CUDA_MANAGED, 0))
    a = np.from_dlpack(godlpack.from_dlpack(t, device=(1, 0)))
    assert a.ctypes.data == p.array.ctypes.data and a.tolist() == p.array.tolist()
    assert godlpack.is_cpu_accessible((CUDA_MANAGED, 0)) and not godlpack.is_cpu_accessible((CUDA, 0))


@pytest.mark.parametrize("stream,err", [(0, BufferError), (-2, BufferError), ("s", TypeError), (1.5, TypeError),
                                        (True, TypeError)])
def test_export_stream_argument_rules(stream, err):
    _, t = fake_gpu()
    with pytest.raises(err):
        t.__dlpack__(max_version=(1, 3), stream=stream)


def assert_exports(cap, t, device):
    """cap is a legacy capsule sharing t's memory on device."""
    m = read_legacy(cap).dl_tensor
    assert m.data == t.data_ptr and (m.device.device_type, m.device.device_id) == device
    assert [m.shape[i] for i in range(m.ndim)] == list(t.shape)


def test_export_streams_that_need_no_synchronisation_work_without_a_driver():
    _, t = fake_gpu()  # imported on the legacy default stream (1)
    for s in (None, 1, -1):
        assert_exports(t.__dlpack__(stream=s), t, (CUDA, 0))


@pytest.mark.skipif(not DRIVER, reason="no CUDA driver (tests/runtime/test_fakecuda.py covers this with a stand-in)")
def test_export_to_another_stream_synchronises():
    _, t = fake_gpu()
    assert_exports(t.__dlpack__(stream=2), t, (CUDA, 0))  # event record + wait, data untouched


@pytest.mark.skipif(DRIVER, reason="a CUDA driver is loaded")
def test_export_to_another_stream_without_a_driver_says_why_not():
    _, t = fake_gpu()
    with pytest.raises(BufferError, match="CUDA driver"):
        t.__dlpack__(stream=2)


def test_rocm_streams_cannot_be_synchronised():
    _, t = fake_gpu((ROCM, 0))
    with pytest.raises(BufferError, match="ROCm"):
        t.__dlpack__(stream=2)
    assert_exports(t.__dlpack__(stream=-1), t, (ROCM, 0))


def test_cpu_tensors_refuse_gpu_streams():
    t = godlpack.arange(3)
    for s in (1, 2, 12345):
        with pytest.raises(BufferError, match="None or -1"):
            t.__dlpack__(stream=s)
    assert_exports(t.__dlpack__(stream=-1), t, (1, 0))


def test_copies_stay_on_their_device_or_are_refused():
    """copy=True never turns GPU-side host memory into a CPU tensor: without a
    driver CUDAHost/CUDAManaged copies are refused, ROCmHost ones always."""
    code = ("import godlpack, numpy as np, sys\n"
            "sys.path.insert(0, %r)\n"
            "from ctypes_producer import CtypesProducer\n"
            "for dev in [(3, 0), (13, 0)]:\n"
            "    t = godlpack.from_dlpack(CtypesProducer(np.arange(3.0), device=dev))\n"
            "    for f in (lambda: godlpack.from_dlpack(t, copy=True), lambda: t.__dlpack__(copy=True)):\n"
            "        try:\n            f()\n        except BufferError as e:\n            print('CUDA driver' in str(e))\n"
            "    print(godlpack.from_dlpack(t, device=(1, 0), copy=True).device == (1, 0))\n") % SUPPORT
    env = dict(os.environ, GODLPACK_LIBCUDA="/nonexistent/libcuda.so.1")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["True"] * 6
    _, t = fake_gpu((ROCM_HOST, 0))
    for f in (lambda: godlpack.from_dlpack(t, copy=True), lambda: t.__dlpack__(max_version=(1, 3), copy=True)):
        with pytest.raises(BufferError, match="ROCm host memory"):
            f()
    c = godlpack.from_dlpack(t, device=(1, 0), copy=True)
    assert c.device == (1, 0) and c.is_copied and c.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


def test_from_dlpack_passes_the_stream_to_gpu_producers_only():
    gpu = CtypesProducer(np.arange(3.0), device=(CUDA, 0))
    t = godlpack.from_dlpack(gpu, stream=5)
    assert gpu.calls[-1].get("stream") == 5 and t.device == (CUDA, 0)
    cpu = CtypesProducer(np.arange(3.0))
    godlpack.from_dlpack(cpu, stream=5)
    assert cpu.calls[-1]["stream"] is None  # a CPU producer is given None, never S
    with pytest.raises(ValueError, match="stream=0"):
        godlpack.from_dlpack(gpu, stream=0)
    with pytest.raises(TypeError):
        godlpack.from_dlpack(gpu, stream="x")


# --- with a GPU ------------------------------------------------------------------

def _torch_cuda():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU")
    return torch


def _cupy():
    cupy = pytest.importorskip("cupy")
    try:
        if cupy.cuda.runtime.getDeviceCount() == 0:
            pytest.skip("no CUDA GPU")
    except Exception:  # noqa: BLE001 - CuPy raises its own error without a driver
        pytest.skip("no CUDA GPU")
    return cupy


def test_torch_cuda_round_trip_zero_copy():
    torch = _torch_cuda()
    x = torch.arange(12, dtype=torch.float32, device="cuda").reshape(3, 4)
    t = godlpack.from_dlpack(x)
    assert t.device == (CUDA, x.device.index or 0) and t.data_ptr == x.data_ptr()
    y = torch.from_dlpack(t)
    assert y.data_ptr() == x.data_ptr() and torch.equal(y, x)
    y.add_(1)
    torch.cuda.synchronize()
    assert torch.equal(x, torch.arange(1, 13, dtype=torch.float32, device="cuda").reshape(3, 4))


def test_torch_cuda_streams():
    torch = _torch_cuda()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        x = torch.ones(1 << 20, device="cuda") * 3
    t = godlpack.from_dlpack(x, stream=s.cuda_stream)
    y = torch.from_dlpack(t)  # torch asks for its current stream: godlpack makes it wait on s
    assert float(y.sum()) == 3 * (1 << 20)


def test_cuda_copies_to_and_from_host():
    torch = _torch_cuda()
    x = torch.arange(6, dtype=torch.float64, device="cuda").reshape(2, 3).t()  # strided
    t = godlpack.from_dlpack(x)
    host = godlpack.from_dlpack(t, device=(1, 0))
    assert host.device == (1, 0) and host.is_copied and host.tolist() == x.cpu().tolist()
    back = torch.from_dlpack(godlpack.arange(5).__dlpack__(max_version=(1, 3), dl_device=(CUDA, 0)))
    assert back.is_cuda and back.cpu().tolist() == [0, 1, 2, 3, 4]
    dev_copy = godlpack.from_dlpack(t, copy=True)
    assert dev_copy.device == t.device and dev_copy.data_ptr != t.data_ptr
    assert torch.equal(torch.from_dlpack(dev_copy), x)


def test_cupy_round_trip_zero_copy():
    cupy = _cupy()
    a = cupy.arange(10, dtype=cupy.float32)
    t = godlpack.from_dlpack(a)
    assert t.device[0] == CUDA and t.data_ptr == a.data.ptr
    b = cupy.from_dlpack(t)
    assert b.data.ptr == a.data.ptr and bool((b == a).all())
    del a, b, t
    gc.collect()
    assert _godlpack._live() == (0, 0)


def test_rocm_memory_is_never_copied_by_the_cuda_driver():
    _, t = fake_gpu((ROCM, 0))
    with pytest.raises(BufferError, match="cannot move"):
        t.__dlpack__(max_version=(1, 3), dl_device=(1, 0))
    with pytest.raises(BufferError, match="only between CUDA and host"):
        t.__dlpack__(max_version=(1, 3), stream=-1, copy=True)


def test_stream_minus_one_means_no_synchronisation_later_either():
    gpu = CtypesProducer(np.arange(3.0), device=(CUDA, 0))
    t = godlpack.from_dlpack(gpu, stream=-1)  # taken without synchronising
    cap = t.__dlpack__(max_version=(1, 3), stream=5)  # nothing to wait for, no driver call
    assert read_versioned(cap).dl_tensor.data == gpu.array.ctypes.data
    assert godlpack.from_dlpack(t, stream=7).device == (CUDA, 0)


def test_sub_byte_tensors_are_not_copied_across_devices():
    p = CtypesProducer(np.zeros(8, np.uint8), dtype=(17, 4, 1), shape=[16], strides=[1], device=(CUDA, 0))
    t = godlpack.from_dlpack(p)
    with pytest.raises(BufferError, match="sub-byte"):
        t.__dlpack__(max_version=(1, 3), dl_device=(1, 0))
