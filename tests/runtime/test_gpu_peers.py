"""Real GPU: stream hand-offs and device moves between godlpack and PyTorch,
CuPy and JAX (`make gpu-test`; every test skips, saying why, without a CUDA
driver or without the peer and its GPU).

The stream cases are made deterministic: a kernel delayed by about SLEEP_MS
writes known values on a non-blocking stream s1, godlpack takes the tensor
while that kernel is still pending, and a consumer reads it on another stream
s2. Without the right event hand-off the read runs before the write and sees
the fill value (-1). Every wait on the GPU polls with a deadline (TIMEOUT_S).
"""
from __future__ import annotations

import ctypes
import os
import time

# JAX would take 75% of the GPU's memory at its first use; PyTorch and CuPy share it here.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import godlpack  # noqa: E402

CPU, CUDA = 1, 2
DRIVER, DRIVER_WHY = godlpack.cuda_status()
if not DRIVER:
    pytest.skip(f"no CUDA driver: {DRIVER_WHY}", allow_module_level=True)
SLEEP_MS = 100  # how long the delayed write waits on the GPU
TIMEOUT_S = 30  # the longest any test waits for the GPU
FILL = -1


def poll(done, what: str) -> None:
    """Waits until done() is true, failing after TIMEOUT_S."""
    deadline = time.monotonic() + TIMEOUT_S
    while not done():
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: GPU work not finished after {TIMEOUT_S} s")
        time.sleep(0.001)


# --- PyTorch -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no CUDA GPU")
    return torch


def torch_wait(torch, stream, what: str) -> None:
    ev = torch.cuda.Event()
    ev.record(stream)
    poll(ev.query, what)


@pytest.fixture(scope="module")
def cycles(torch) -> int:
    """GPU clock cycles that torch.cuda._sleep spends in about SLEEP_MS (measured)."""
    s = torch.cuda.Stream()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    probe = 10**7
    with torch.cuda.stream(s):
        start.record()
        torch.cuda._sleep(probe)
        end.record()
    poll(end.query, "calibrating torch.cuda._sleep")
    ms = max(start.elapsed_time(end), 1e-3)
    return int(min(max(probe * SLEEP_MS / ms, 10**7), 10**11))


def dev(torch) -> tuple[int, int]:
    return (CUDA, torch.cuda.current_device())


def prepared(torch, n: int = 1 << 18):
    """x on the GPU filled with FILL, and want: the values to write into it
    later (both complete on the device before this returns)."""
    x = torch.full((n // 256, 256), FILL, dtype=torch.float32, device="cuda")
    want = torch.arange(n, dtype=torch.float32, device="cuda").reshape(x.shape)
    torch_wait(torch, torch.cuda.current_stream(), "preparing the tensors")
    return x, want


def delayed_write(torch, x, want, cycles) -> None:
    """On torch's current stream: sleep about SLEEP_MS, then x <- want."""
    torch.cuda._sleep(cycles)
    x.copy_(want)
    assert not torch.cuda.current_stream().query(), "the delayed write finished at once: the test proves nothing"


def assert_read(torch, got, want, how: str) -> None:
    got, want = got.cpu(), want.cpu()
    stale = int((got == FILL).sum())
    assert torch.equal(got, want), (f"{how}: wrong data ({stale} of {got.numel()} elements still {FILL}, i.e. "
                                    f"read before the write on the producer's stream; first {got.flatten()[:4].tolist()})")


def test_torch_import_waits_for_torchs_current_stream(torch, cycles):
    """from_dlpack(x) without a stream: the data is ready on torch's current
    stream (s1); torch.from_dlpack under s2 must wait for it."""
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
    x, want = prepared(torch)
    with torch.cuda.stream(s1):
        delayed_write(torch, x, want, cycles)
        t = godlpack.from_dlpack(x)
    assert t.device == dev(torch) and t.data_ptr == x.data_ptr(), "not a zero-copy view of the torch tensor"
    with torch.cuda.stream(s2):
        y = torch.from_dlpack(t)
        got = y.clone()
    torch_wait(torch, s2, "reading on s2")
    torch_wait(torch, s1, "s1")  # so that a failure leaves no write pending into freed memory
    assert y.data_ptr() == x.data_ptr(), "torch.from_dlpack(godlpack tensor) copied"
    assert_read(torch, got, want, "godlpack.from_dlpack(x) on s1, torch.from_dlpack under s2")


def test_torch_import_with_a_stream_then_read_on_a_third(torch, cycles):
    """from_dlpack(x, stream=s2): torch makes s2 wait for s1; reading under s3
    must wait for s2."""
    s1, s2, s3 = torch.cuda.Stream(), torch.cuda.Stream(), torch.cuda.Stream()
    x, want = prepared(torch)
    with torch.cuda.stream(s1):
        delayed_write(torch, x, want, cycles)
        t = godlpack.from_dlpack(x, stream=s2.cuda_stream)
    with torch.cuda.stream(s3):
        got = torch.from_dlpack(t).clone()
    torch_wait(torch, s3, "reading on s3")
    torch_wait(torch, s1, "s1")
    assert_read(torch, got, want, "godlpack.from_dlpack(x, stream=s2) under s1, torch.from_dlpack under s3")


def test_torch_export_on_the_default_stream_waits(torch, cycles):
    """Imported under s1, exported to torch's default stream (stream=1)."""
    s1 = torch.cuda.Stream()
    x, want = prepared(torch)
    with torch.cuda.stream(s1):
        delayed_write(torch, x, want, cycles)
        t = godlpack.from_dlpack(x)
    got = torch.from_dlpack(t).clone()  # the default stream
    torch_wait(torch, torch.cuda.current_stream(), "reading on the default stream")
    torch_wait(torch, s1, "s1")
    assert_read(torch, got, want, "imported under s1, torch.from_dlpack on the default stream")


def test_copy_to_host_waits_for_the_tensors_stream(torch, cycles):
    """device=(kDLCPU, 0) of CUDA data: the copy must follow the write on s1,
    from a godlpack tensor and straight from the torch tensor."""
    s1 = torch.cuda.Stream()
    x, want = prepared(torch)
    with torch.cuda.stream(s1):
        delayed_write(torch, x, want, cycles)
        t = godlpack.from_dlpack(x)
    host = godlpack.from_dlpack(t, device=(CPU, 0))
    torch_wait(torch, s1, "s1")
    assert host.device == (CPU, 0) and host.is_copied, f"device={host.device} is_copied={host.is_copied}"
    assert_read(torch, torch.from_dlpack(host), want, "godlpack.from_dlpack(CUDA tensor, device=CPU)")
    x2, want2 = prepared(torch)
    with torch.cuda.stream(s1):
        delayed_write(torch, x2, want2, cycles)
        host2 = godlpack.from_dlpack(x2, device=(CPU, 0))
    torch_wait(torch, s1, "s1")
    assert host2.device == (CPU, 0), host2.device
    assert_read(torch, torch.from_dlpack(host2), want2, "godlpack.from_dlpack(torch CUDA tensor, device=CPU)")


def test_exchange_table_reports_a_stream_the_data_is_ready_on(torch, cycles):
    """A consumer of godlpack's C exchange table takes the tensor through it
    (managed_tensor_from_py_object_no_sync) and works on
    current_work_stream(kDLCUDA, id): reading there must see the write made
    on torch's current stream (s1, non-blocking: the legacy default stream
    would not wait for it)."""
    from godlpack import _probe
    get_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
        ("PyCapsule_GetPointer", ctypes.pythonapi))
    table = get_pointer(godlpack.Tensor.__dlpack_c_exchange_api__, b"dlpack_exchange_api")
    # DLPackExchangeAPI: header (version 8 B, prev_api 8 B), then 5 function pointers; the last one.
    fn_addr = ctypes.c_void_p.from_address(table + 16 + 4 * 8).value
    assert fn_addr, "current_work_stream is NULL"
    current_work_stream = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_int32, ctypes.c_int32,
                                            ctypes.POINTER(ctypes.c_void_p))(fn_addr)
    s1 = torch.cuda.Stream()
    x, want = prepared(torch)
    with torch.cuda.stream(s1):
        delayed_write(torch, x, want, cycles)
        t = godlpack.from_dlpack(x)
        taken = _probe.exchange_export(godlpack.Tensor.__dlpack_c_exchange_api__, t)  # the table's export
        out = ctypes.c_void_p(12345)
        assert current_work_stream(CUDA, dev(torch)[1], ctypes.byref(out)) == 0
        handle = out.value or 0
        work = torch.cuda.ExternalStream(handle) if handle not in (0, 1) else torch.cuda.default_stream()
        with torch.cuda.stream(work):
            got = x.clone()  # what the consumer's kernel reads through t's data pointer
        torch_wait(torch, work, "reading on the reported stream")
    torch_wait(torch, s1, "s1")
    assert t.data_ptr == x.data_ptr()
    del taken
    assert_read(torch, got, want, f"read on current_work_stream()={handle:#x} (s1={s1.cuda_stream:#x})")


def test_host_to_device_when_the_producer_cannot(torch):
    """NumPy cannot export to CUDA: godlpack copies (copy=None/True), and
    refuses with copy=False."""
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    s2 = torch.cuda.Stream()
    for src in (a, a.T, a[:, ::2]):
        t = godlpack.from_dlpack(src, device=dev(torch))
        assert t.device == dev(torch) and t.is_copied, f"device={t.device} is_copied={t.is_copied}"
        with torch.cuda.stream(s2):
            got = torch.from_dlpack(t).clone()
        torch_wait(torch, s2, "reading the host-to-device copy")
        assert got.is_cuda and torch.equal(got.cpu(), torch.from_numpy(np.ascontiguousarray(src))), \
            f"host-to-device copy of {src.shape} strides {src.strides}: {got.cpu().tolist()}"
    assert godlpack.from_dlpack(a, device=dev(torch), copy=True).device == dev(torch)
    with pytest.raises(BufferError):
        godlpack.from_dlpack(a, device=dev(torch), copy=False)
    with pytest.raises(BufferError):
        godlpack.from_dlpack(godlpack.from_dlpack(torch.ones(3, device="cuda")), device=(CPU, 0), copy=False)


DTYPES = ["float32", "float64", "float16", "bfloat16", "int8", "uint8", "int32", "int64", "bool", "complex64"]
LAYOUTS = {
    "contiguous": lambda v: v,
    "transposed": lambda v: v.t(),
    "sliced": lambda v: v[1:, ::2],
    "column": lambda v: v[:, 1],
    "empty": lambda v: v[:0],
    "0-d": lambda v: v[1, 2],
}


def sample(torch, dtype: str):
    base = torch.arange(48).reshape(8, 6)
    if dtype == "bool":
        return base % 3 == 0
    if dtype == "complex64":
        return torch.complex(base.float(), -base.float() / 2)
    return (base - 20).to(getattr(torch, dtype))


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("dtype", DTYPES)
def test_layouts_and_dtypes_round_trip_and_move(torch, dtype, layout):
    """Zero-copy to and from torch, copy=True on the device, to the host and back."""
    v = LAYOUTS[layout](sample(torch, dtype).cuda())
    where = f"{dtype} {layout} shape {tuple(v.shape)} strides {v.stride()}"
    t = godlpack.from_dlpack(v)
    assert t.shape == tuple(v.shape) and t.device == dev(torch), f"{where}: godlpack sees {t.shape} on {t.device}"
    y = torch.from_dlpack(t)
    assert y.dtype == v.dtype and torch.equal(y, v), f"{where}: torch.from_dlpack(godlpack tensor) differs"
    if v.numel():
        assert t.data_ptr == v.data_ptr() and y.data_ptr() == v.data_ptr(), f"{where}: not zero-copy"
    c = godlpack.from_dlpack(t, copy=True)
    assert c.device == t.device and c.is_copied, f"{where}: copy=True gave {c.device}, is_copied={c.is_copied}"
    assert torch.equal(torch.from_dlpack(c), v), f"{where}: copy=True on the device differs"
    host = godlpack.from_dlpack(t, device=(CPU, 0))
    assert host.device == (CPU, 0) and host.shape == t.shape, f"{where}: to host gave {host.shape} on {host.device}"
    assert torch.equal(torch.from_dlpack(host), v.cpu()), f"{where}: copy to the host differs"
    back = godlpack.from_dlpack(host, device=dev(torch))
    assert back.device == dev(torch), f"{where}: back to the GPU gave {back.device}"
    assert torch.equal(torch.from_dlpack(back), v), f"{where}: host-to-device copy differs"
    torch_wait(torch, torch.cuda.current_stream(), where)


def test_torch_float4_passes_through(torch):
    if not hasattr(torch, "float4_e2m1fn_x2"):
        pytest.skip(f"PyTorch {torch.__version__} has no float4_e2m1fn_x2")
    raw = ((torch.arange(32) * 7) % 256).to(torch.uint8).reshape(4, 8).cuda()
    x = raw.view(torch.float4_e2m1fn_x2)
    t = godlpack.from_dlpack(x)
    assert t.shape == (4, 8) and t.data_ptr == x.data_ptr(), f"godlpack sees {t.shape} at {t.data_ptr:#x}"
    y = torch.from_dlpack(t)
    assert y.dtype == torch.float4_e2m1fn_x2 and y.shape == x.shape, f"torch got {y.dtype} {tuple(y.shape)}"
    assert torch.equal(y.view(torch.uint8), raw), "float4_e2m1fn_x2 bytes changed on the way"


def test_tvm_ffi_consumes_godlpack_cuda_tensors(torch):
    tvm_ffi = pytest.importorskip("tvm_ffi")
    v = torch.arange(12, dtype=torch.float32, device="cuda").reshape(3, 4)
    t = godlpack.from_dlpack(v)
    a = tvm_ffi.from_dlpack(t)
    ptr = a.data_ptr() if callable(a.data_ptr) else a.data_ptr
    assert ptr == v.data_ptr() and tuple(a.shape) == (3, 4), f"tvm-ffi sees {tuple(a.shape)} at {ptr:#x}"
    y = torch.from_dlpack(a)
    assert y.data_ptr() == v.data_ptr() and torch.equal(y, v), "godlpack -> tvm-ffi -> torch differs"


# --- CuPy --------------------------------------------------------------------------------

SLOW_FILL = r"""
extern "C" __global__ void slow_fill(float* out, long long n, float base, long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) { }
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        out[i] = base + (float)i;
}
"""


@pytest.fixture(scope="module")
def cupy():
    cupy = pytest.importorskip("cupy")
    try:
        if cupy.cuda.runtime.getDeviceCount() == 0:
            pytest.skip("CuPy sees no CUDA GPU")
    except Exception as e:  # noqa: BLE001 - CuPy raises its own error without a driver
        pytest.skip(f"CuPy sees no CUDA GPU ({e})")
    return cupy


def cupy_wait(cupy, stream, what: str) -> None:
    ev = cupy.cuda.Event()
    ev.record(stream)
    poll(lambda: ev.done, what)


@pytest.fixture(scope="module")
def slow_fill(cupy):
    """slow_fill(a, base): on CuPy's current stream, spin about SLEEP_MS, then a[i] = base + i."""
    kernel = cupy.RawKernel(SLOW_FILL, "slow_fill")
    s = cupy.cuda.Stream(non_blocking=True)
    scratch = cupy.empty(1, dtype=cupy.float32)
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    probe = 10**7
    with s:
        start.record()
        kernel((1,), (1,), (scratch, np.int64(1), np.float32(0), np.int64(probe)))
        end.record()
    poll(lambda: end.done, "calibrating the slow CuPy kernel")
    ms = max(cupy.cuda.get_elapsed_time(start, end), 1e-3)
    cycles = int(min(max(probe * SLEEP_MS / ms, 10**7), 10**11))

    def run(a, base: float) -> None:
        kernel((64,), (256,), (a, np.int64(a.size), np.float32(base), np.int64(cycles)))
        assert not cupy.cuda.get_current_stream().done, "the slow kernel finished at once: the test proves nothing"

    return run


def cupy_prepared(cupy, n: int = 1 << 18):
    a = cupy.full(n, FILL, dtype=cupy.float32)
    cupy_wait(cupy, cupy.cuda.get_current_stream(), "preparing the array")
    return a


def assert_cupy_read(cupy, got, base: float, how: str) -> None:
    got = cupy.asnumpy(got)
    want = base + np.arange(got.size, dtype=np.float32)
    stale = int((got == FILL).sum())
    assert np.array_equal(got, want), f"{how}: wrong data ({stale} of {got.size} elements still {FILL})"


def test_cupy_non_blocking_streams(cupy, slow_fill):
    s1, s2 = cupy.cuda.Stream(non_blocking=True), cupy.cuda.Stream(non_blocking=True)
    a = cupy_prepared(cupy)
    with s1:
        slow_fill(a, 3.0)
        t = godlpack.from_dlpack(a)
    assert t.data_ptr == a.data.ptr, "not a zero-copy view of the CuPy array"
    with s2:
        got = cupy.from_dlpack(t).copy()
    cupy_wait(cupy, s2, "reading on s2")
    cupy_wait(cupy, s1, "s1")  # so that a failure leaves no write pending into freed memory
    assert_cupy_read(cupy, got, 3.0, "godlpack.from_dlpack(a) under s1, cupy.from_dlpack under s2")


def test_cupy_import_with_a_stream(cupy, slow_fill):
    s1, s2, s3 = (cupy.cuda.Stream(non_blocking=True) for _ in range(3))
    a = cupy_prepared(cupy)
    with s1:
        slow_fill(a, 7.0)
        t = godlpack.from_dlpack(a, stream=s2.ptr)
    with s3:
        got = cupy.from_dlpack(t).copy()
    cupy_wait(cupy, s3, "reading on s3")
    cupy_wait(cupy, s1, "s1")
    assert_cupy_read(cupy, got, 7.0, "godlpack.from_dlpack(a, stream=s2) under s1, cupy.from_dlpack under s3")


def test_cupy_copies_to_host_after_the_write(cupy, slow_fill):
    s1 = cupy.cuda.Stream(non_blocking=True)
    a = cupy_prepared(cupy)
    with s1:
        slow_fill(a, 11.0)
        t = godlpack.from_dlpack(a)
    host = godlpack.from_dlpack(t, device=(CPU, 0))
    cupy_wait(cupy, s1, "s1")
    assert host.device == (CPU, 0), host.device
    assert_cupy_read(cupy, np.asarray(host), 11.0, "godlpack.from_dlpack(CuPy data, device=CPU)")


def test_torch_to_cupy_across_streams(torch, cycles, cupy):
    s1 = torch.cuda.Stream()
    s2 = cupy.cuda.Stream(non_blocking=True)
    x, want = prepared(torch)
    with torch.cuda.stream(s1):
        delayed_write(torch, x, want, cycles)
        t = godlpack.from_dlpack(x)
    with s2:
        got = cupy.from_dlpack(t).copy()
    cupy_wait(cupy, s2, "reading on the CuPy stream")
    torch_wait(torch, s1, "s1")
    assert_read(torch, torch.from_dlpack(got), want, "torch (s1) -> godlpack -> cupy.from_dlpack under s2")


# --- JAX -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def jax():
    jax = pytest.importorskip("jax")
    try:
        gpus = jax.devices("gpu")
    except RuntimeError as e:
        pytest.skip(f"JAX has no GPU backend ({e})")
    if not gpus:
        pytest.skip("JAX sees no GPU")
    return jax


def jax_wait(x) -> None:
    if hasattr(x, "is_ready"):
        poll(x.is_ready, "JAX computation")
    x.block_until_ready()


def jax_slow(jax, n: int = 2048):
    """A JAX GPU array still being computed when this returns (a chain of matmuls)."""
    import jax.numpy as jnp

    a = jax.device_put(np.eye(n, dtype=np.float32) * 0.5 + 0.25 / n, jax.devices("gpu")[0])
    jax_wait(a)
    y = a
    for _ in range(32):
        y = jnp.tanh(y @ a)
    return y


def test_jax_to_godlpack_to_torch(jax, torch):
    """JAX's buffer, taken while still being computed, read under another torch stream."""
    y = jax_slow(jax)
    t = godlpack.from_dlpack(y)
    s2 = torch.cuda.Stream()
    with torch.cuda.stream(s2):
        got = torch.from_dlpack(t).clone()
    torch_wait(torch, s2, "reading JAX's data on s2")
    jax_wait(y)
    want = torch.from_numpy(np.asarray(y))
    assert torch.equal(got.cpu(), want), "JAX -> godlpack -> torch under s2 read stale data"


def test_torch_to_godlpack_to_jax(jax, torch, cycles):
    import jax.numpy as jnp

    s1 = torch.cuda.Stream()
    x, want = prepared(torch)
    with torch.cuda.stream(s1):
        delayed_write(torch, x, want, cycles)
        t = godlpack.from_dlpack(x)
    z = jnp.from_dlpack(t)
    jax_wait(z)
    got = np.asarray(z)
    assert_read(torch, torch.from_numpy(got.copy()), want, "torch (s1) -> godlpack -> jnp.from_dlpack")
    torch_wait(torch, s1, "s1")


def test_jax_round_trip(jax):
    import jax.numpy as jnp

    y = jax_slow(jax, 512)
    z = jnp.from_dlpack(godlpack.from_dlpack(y))
    jax_wait(z)
    jax_wait(y)
    assert np.array_equal(np.asarray(z), np.asarray(y)), "JAX -> godlpack -> JAX differs"


# --- Go extensions -------------------------------------------------------------------------

def test_go_extension_takes_cuda_tensors_and_typed_slices_refuse_them(torch):
    """A Go extension (examples/vecmath, built for this machine's Python by
    make gpu-bundle): a godlpack.Tensor parameter sees a torch CUDA tensor's
    device and address without reading it; a typed slice refuses it, leaving
    it untouched."""
    vecmath = pytest.importorskip("vecmath", reason="vecmath is not installed (make gpu-bundle builds it)")
    x = torch.arange(6, dtype=torch.float32, device="cuda").reshape(2, 3)
    assert vecmath.describe(x) == "float32 [2 3]"
    assert vecmath.where(x) == f"cuda:{x.device.index} {x.data_ptr():#x}"
    with pytest.raises(BufferError, match=r"scale\(\) argument 1 is on device type 2; a typed slice takes CPU-accessible"):
        vecmath.scale(x, 2.0)
    assert torch.equal(x.cpu(), torch.arange(6, dtype=torch.float32).reshape(2, 3))
    # Through godlpack and back: the same memory.
    t = godlpack.from_dlpack(x)
    assert vecmath.where(t) == vecmath.where(x)
    assert torch.from_dlpack(t).data_ptr() == x.data_ptr()
