"""PyTorch <-> godlpack in both directions (CPU), plus CUDA tests that skip
only when there is no GPU."""
from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys

import numpy as np
import pytest

import godlpack
from harness import back_to, child_env, cupy_gpu, live, torch_cuda
from ctypes_producer import CtypesProducer, capsule_name

torch = pytest.importorskip("torch", reason="optional peer torch not installed")

TORCH_DTYPES = {
    "bool": torch.bool,
    "int8": torch.int8,
    "int16": torch.int16,
    "int32": torch.int32,
    "int64": torch.int64,
    "uint8": torch.uint8,
    "uint16": torch.uint16,
    "uint32": torch.uint32,
    "uint64": torch.uint64,
    "float16": torch.float16,
    "float32": torch.float32,
    "float64": torch.float64,
    "bfloat16": torch.bfloat16,
    "complex64": torch.complex64,
    "complex128": torch.complex128,
}


def sample(dt, shape=(3, 4)):
    n = int(np.prod(shape))
    if dt == torch.bool:
        return (torch.arange(n) % 2 == 0).reshape(shape)
    if dt.is_complex:
        return torch.complex(torch.arange(n, dtype=torch.float64), -torch.arange(n, dtype=torch.float64)).to(dt).reshape(shape)
    if dt in (torch.uint16, torch.uint32, torch.uint64):
        return torch.arange(n, dtype=torch.int64).to(dt).reshape(shape)  # arithmetic is limited for these
    return (torch.arange(n, dtype=torch.float64) * 1.5 - 3).to(dt).reshape(shape)


def as_list(x):
    if x.dtype in (torch.bfloat16, torch.float16):
        return x.float().tolist()
    return x.tolist()


@pytest.mark.parametrize("name", list(TORCH_DTYPES))
def test_torch_to_godlpack_to_torch_every_dtype(name):
    dt = TORCH_DTYPES[name]
    x = sample(dt)
    g = godlpack.from_dlpack(x)
    assert g.dtype == name
    assert g.shape == tuple(x.shape) and g.strides == tuple(x.stride())
    assert g.data_ptr == x.data_ptr()
    assert g.itemsize == x.element_size()
    assert g.tolist() == as_list(x)
    y = torch.from_dlpack(g)
    assert y.dtype == dt
    assert y.data_ptr() == x.data_ptr()
    assert torch.equal(y, x)


@pytest.mark.parametrize("name", list(TORCH_DTYPES))
def test_godlpack_created_to_torch_every_dtype(name):
    dt = TORCH_DTYPES[name]
    g = godlpack.full((2, 5), 1, name)
    y = torch.from_dlpack(g)
    assert y.dtype == dt
    assert y.data_ptr() == g.data_ptr
    assert torch.equal(y, torch.ones((2, 5), dtype=dt))
    if name not in ("bool", "uint16", "uint32", "uint64"):
        a = godlpack.arange(0, 6, dtype=name)
        assert as_list(torch.from_dlpack(a)) == as_list(torch.arange(6).to(dt))


def test_bfloat16_round_trip_values():
    x = torch.tensor([1.0, -2.5, 3.140625, 1e30, -0.0], dtype=torch.bfloat16)
    g = godlpack.from_dlpack(x)
    assert g.dtype == "bfloat16" and g.itemsize == 2 and g.nbytes == 10
    assert g.tolist() == x.float().tolist()
    y = torch.from_dlpack(g)
    assert y.dtype == torch.bfloat16 and y.data_ptr() == x.data_ptr()
    assert torch.equal(y, x)
    c = g.copy()
    assert torch.equal(torch.from_dlpack(c), x)


def test_writes_are_shared():
    x = torch.zeros(4, 3)
    g = godlpack.from_dlpack(x)
    y = torch.from_dlpack(g)
    y[1, 1] = 5
    assert x[1, 1].item() == 5
    n = np.from_dlpack(g)
    n[2, 2] = 9
    assert x[2, 2].item() == 9


@pytest.mark.parametrize(
    "make",
    [
        lambda x: x.T,
        lambda x: x[:, ::2],
        lambda x: x[1:, 1::3],
        lambda x: x.unsqueeze(1).expand(4, 3, 6),  # zero stride
        lambda x: x[:0],
        lambda x: x[2, 3],  # 0-d view
        lambda x: x.permute(1, 0)[::2],
    ],
    ids=["T", "step", "slice", "expand", "empty", "0d", "permute-step"],
)
def test_torch_layouts_round_trip(make):
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    x = make(base)
    g = godlpack.from_dlpack(x)
    assert g.shape == tuple(x.shape)
    if x.numel():
        assert g.strides == tuple(x.stride())
        assert g.data_ptr == x.data_ptr()
    assert g.tolist() == x.tolist()
    assert g.is_contiguous == (x.is_contiguous() or x.numel() == 0)
    y = torch.from_dlpack(g)
    assert torch.equal(y, x)
    if x.numel():
        assert y.data_ptr() == x.data_ptr()
    np.testing.assert_array_equal(np.from_dlpack(g), x.numpy())


def test_numpy_noncontiguous_through_godlpack_into_torch():
    a = np.arange(60, dtype=np.int32).reshape(3, 4, 5).transpose(2, 0, 1)[:, 1:, ::2]
    g = godlpack.from_dlpack(a)
    y = torch.from_dlpack(g)
    assert y.data_ptr() == a.ctypes.data
    assert tuple(y.stride()) == g.strides
    assert y.tolist() == a.tolist()


NEGATIVE_STRIDES_CHILD = """
import numpy as np, torch, godlpack
from harness import back_to, live
a = np.arange(12, dtype=np.float32).reshape(3, 4)[::-1]
g = godlpack.from_dlpack(a)
assert g.strides == (-4, 1), g.strides
base = live()
try:
    torch.from_dlpack(g)
except (RuntimeError, BufferError, ValueError) as e:
    print("refused with", type(e).__name__)
else:
    raise SystemExit("torch imported negative strides")
assert back_to(base), "a refused import leaked"
y = torch.from_dlpack(g.copy())  # a copy is compact and goes through
assert y.tolist() == a.tolist()
"""


def torch_version() -> tuple[int, int]:
    return tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])  # type: ignore[return-value]


def test_torch_rejects_negative_strides():
    """PyTorch has no negative strides and refuses them on import (its own
    limitation); godlpack itself carries them, and nothing may leak. In a child
    process: PyTorch before 2.15 (2.11 seen) aborts the process instead."""
    r = subprocess.run([sys.executable, "-c", NEGATIVE_STRIDES_CHILD], capture_output=True, text=True, timeout=300,
                       env=child_env(os.path.dirname(__file__)))
    if r.returncode == -signal.SIGABRT and torch_version() < (2, 15):
        pytest.xfail(f"torch {torch.__version__} aborts the process on negative strides (its known bug: "
                     "'Storage size calculation overflowed', thrown as c10::Error; 2.15 raises RuntimeError)")
    assert r.returncode == 0, (r.returncode, (r.stderr or r.stdout)[-1500:])
    assert r.stdout.startswith("refused with"), r.stdout


def test_zero_d_and_32_d():
    x = torch.tensor(3.5, dtype=torch.float64)
    g = godlpack.from_dlpack(x)
    assert g.ndim == 0 and g.shape == () and g.tolist() == 3.5
    assert torch.from_dlpack(g).item() == 3.5
    shape = [1] * 29 + [2, 3, 2]
    x = torch.arange(12, dtype=torch.int64).reshape(shape)
    g = godlpack.from_dlpack(x)
    assert g.ndim == 32 and g.data_ptr == x.data_ptr()
    y = torch.from_dlpack(g)
    assert list(y.shape) == shape and y.data_ptr() == x.data_ptr() and torch.equal(y, x)


def test_size1_odd_strides_go_into_torch():
    base = np.arange(6, dtype=np.float64)
    p = CtypesProducer(base, shape=[2, 1, 3], strides=[3, 12345, 1])
    g = godlpack.from_dlpack(p)
    assert g.is_contiguous
    y = torch.from_dlpack(g)
    assert y.data_ptr() == base.ctypes.data
    assert y.tolist() == [[[0.0, 1.0, 2.0]], [[3.0, 4.0, 5.0]]]
    assert y.is_contiguous()
    del g, y
    gc.collect()
    assert p.deleter_calls == 1


def test_torch_holds_ctypes_producer_until_freed():
    a = np.arange(8, dtype=np.float32)
    p = CtypesProducer(a)
    g = godlpack.from_dlpack(p)
    y = torch.from_dlpack(g)
    del g
    gc.collect()
    assert p.deleter_calls == 0
    assert y.tolist() == a.tolist()
    del y
    gc.collect()
    assert p.deleter_calls == 1


def test_torch_raw_capsules_both_kinds():
    g = godlpack.arange(5, dtype="int32")
    for mv, name in (((1, 3), "dltensor_versioned"), (None, "dltensor")):
        cap = g.__dlpack__(max_version=mv)
        y = torch.from_dlpack(cap)
        assert capsule_name(cap) == "used_" + name
        assert y.data_ptr() == g.data_ptr and y.tolist() == [0, 1, 2, 3, 4]
    cap = torch.arange(3).__dlpack__()
    t = godlpack.from_dlpack(cap)
    assert capsule_name(cap) == "used_dltensor"
    assert t.tolist() == [0, 1, 2]


def test_torch_dlpack_keywords():
    x = torch.arange(6.0)
    g = godlpack.from_dlpack(x, device=(1, 0))
    assert g.data_ptr == x.data_ptr()
    c = godlpack.from_dlpack(x, copy=True)
    assert c.is_copied and c.data_ptr != x.data_ptr()
    assert c.tolist() == x.tolist()
    z = godlpack.from_dlpack(x, copy=False)
    assert z.data_ptr == x.data_ptr() and not z.is_copied


# --- CUDA: skipped only when there is no GPU -----------------------------------------------


@pytest.mark.skipif(not torch_cuda(), reason="no CUDA GPU")
def test_torch_cuda_zero_copy_both_ways():
    x = torch.arange(12, dtype=torch.float32, device="cuda").reshape(3, 4)
    g = godlpack.from_dlpack(x)
    assert g.device == (2, x.device.index or 0)
    assert str(g.device).startswith("cuda:")
    assert g.data_ptr == x.data_ptr()
    assert g.strides == (4, 1)
    with pytest.raises(BufferError):
        memoryview(g)  # device memory has no buffer protocol
    y = torch.from_dlpack(g)
    assert y.device == x.device
    assert y.data_ptr() == x.data_ptr()
    assert torch.equal(y, x)
    y[0, 0] = 42
    torch.cuda.synchronize()
    assert x[0, 0].item() == 42
    t = godlpack.from_dlpack(x.T)
    assert t.strides == (1, 4)
    assert torch.equal(torch.from_dlpack(t), x.T)
    del g, y, t
    gc.collect()
    torch.cuda.synchronize()


@pytest.mark.skipif(not torch_cuda(), reason="no CUDA GPU")
def test_torch_cuda_freed_in_other_thread():
    import threading

    base = live()
    x = torch.ones(1000, device="cuda")
    ys = [torch.from_dlpack(godlpack.from_dlpack(x)) for _ in range(10)]
    assert live() != base
    th = threading.Thread(target=ys.clear)
    th.start()
    th.join()
    del x
    gc.collect()
    torch.cuda.synchronize()
    assert back_to(base)


@pytest.mark.skipif(not cupy_gpu(), reason="cupy or a CUDA GPU missing")
def test_cupy_zero_copy_both_ways():
    import cupy

    x = cupy.arange(12, dtype=cupy.float64).reshape(3, 4)
    g = godlpack.from_dlpack(x)
    assert g.device == (2, x.device.id)
    assert g.data_ptr == x.data.ptr
    y = cupy.from_dlpack(g)
    assert y.data.ptr == x.data.ptr
    assert y.device.id == x.device.id
    assert bool((y == x).all())
    z = godlpack.from_dlpack(x[:, ::2])
    assert z.strides == (4, 2)
    assert bool((cupy.from_dlpack(z) == x[:, ::2]).all())
    if torch_cuda():
        w = torch.from_dlpack(g)
        assert w.data_ptr() == x.data.ptr and w.device.type == "cuda"
