"""The public C API (include/godlpack/godlpack.h, the godlpack._C_API table)
and the DLPack 1.3 C exchange API, used the way a third-party extension would:
tests/runtime/capi_probe.c is compiled here with setuptools against the headers under
godlpack.get_include() and nothing else from godlpack."""
from __future__ import annotations

import ctypes
import filecmp
import gc
import importlib.machinery
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import textwrap

import numpy as np
import pytest
try:
    import torch
except ImportError:  # optional peer: the tests that need it skip
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="optional peer torch not installed")

import godlpack
from harness import live, settle
from ctypes_producer import CtypesProducer, capsule_name, capsule_pointer

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PY_INCLUDE = sysconfig.get_paths()["include"]
CPU_ACCESSIBLE = {1, 3, 11, 13}  # CPU, CUDAHost, ROCMHost, CUDAManaged

_SETUP_PY = """\
from setuptools import Extension, setup

setup(
    name="capi_probe",
    ext_modules=[
        Extension(
            "capi_probe",
            ["capi_probe.c"],
            include_dirs={include_dirs!r},
            extra_compile_args=["-Wall", "-Wextra", "-Werror"],
        )
    ],
)
"""


def _cc() -> str:
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    assert cc, "no C compiler found"
    return cc


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    """tests/runtime/capi_probe.c built by setuptools in a temporary folder, imported."""
    build = tmp_path_factory.mktemp("capi_probe")
    shutil.copy(os.path.join(HERE, "capi_probe.c"), build / "capi_probe.c")
    (build / "setup.py").write_text(_SETUP_PY.format(include_dirs=[godlpack.get_include(), PY_INCLUDE]))
    r = subprocess.run(
        [sys.executable, "setup.py", "-q", "build_ext", "--inplace"],
        cwd=build,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, f"building capi_probe failed:\n{r.stdout}\n{r.stderr}"
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    path = build / f"capi_probe{suffix}"
    assert path.exists(), f"no {path.name} in {sorted(os.listdir(build))}"
    loader = importlib.machinery.ExtensionFileLoader("capi_probe", str(path))
    spec = importlib.util.spec_from_file_location("capi_probe", str(path), loader=loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def _same_memory(a: godlpack.Tensor, ptr: int) -> bool:
    return a.data_ptr == ptr


# --- the table itself ------------------------------------------------------------


def test_c_api_capsule_is_on_the_package():
    # godlpack_import_capi() does PyCapsule_Import("godlpack._C_API").
    cap = godlpack._C_API
    assert type(cap).__name__ == "PyCapsule"
    assert capsule_name(cap) == "godlpack._C_API"
    assert cap is godlpack._godlpack._C_API


def test_get_include_has_the_source_headers():
    inc = godlpack.get_include()
    for name in ("dlpack.h", "godlpack.h"):
        shipped = os.path.join(inc, "godlpack", name)
        assert os.path.isfile(shipped), shipped
        assert filecmp.cmp(shipped, os.path.join(ROOT, "include", "godlpack", name), shallow=False), (
            f"{shipped} is stale: run make ext"
        )


def test_versions_match_dlpack_info(probe):
    abi, size, major, minor, max_import_major = probe.versions()
    info = godlpack.dlpack_info()
    assert abi == info["abi_version"] == 1
    assert (major, minor) == info["api_version"] == (1, 3)
    assert max_import_major == info["max_version"][0] == 1
    # The table is as large as the header the probe was built with says:
    # 3 uint32 + DLPackVersion (24 bytes with padding), then 9 function pointers.
    assert size == probe.header_size()
    assert size == 24 + 9 * ctypes.sizeof(ctypes.c_void_p)


# --- managed_from_object + tensor_from_managed --------------------------------------


def test_import_numpy_zero_copy_and_released(probe):
    a = np.arange(12.0).reshape(3, 4)
    base_ref = sys.getrefcount(a)
    base = live()
    t, versioned = probe.import_tensor(a)
    assert versioned == 1
    assert isinstance(t, godlpack.Tensor)
    assert t.tolist() == a.tolist()
    assert t.shape == (3, 4) and t.dtype == "float64"
    assert _same_memory(t, a.ctypes.data)
    assert sys.getrefcount(a) > base_ref, "the export must keep the array alive"
    assert live() != base
    a[1, 2] = -7.0  # shared memory
    assert t.tolist()[1][2] == -7.0
    del t
    assert settle(base) == base
    assert sys.getrefcount(a) == base_ref, "NumPy's deleter did not run exactly once"


def test_import_numpy_strided(probe):
    a = np.arange(24.0).reshape(4, 6)[::2, 1::3]
    t, _ = probe.import_tensor(a)
    assert t.tolist() == a.tolist()
    assert t.strides == tuple(s // 8 for s in a.strides)
    assert _same_memory(t, a.ctypes.data)


@needs_torch
def test_import_torch_zero_copy_and_released(probe):
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    base = live()
    t, versioned = probe.import_tensor(x)
    assert versioned == 1
    assert t.tolist() == x.tolist()
    assert t.dtype == "float32"
    assert _same_memory(t, x.data_ptr())
    x[0, 0] = 42.0
    assert t.tolist()[0][0] == 42.0
    del t
    assert settle(base) == base


def test_import_godlpack_tensor_is_a_fresh_export(probe):
    g = godlpack.arange(5.0)
    base = live()
    t, versioned = probe.import_tensor(g)
    assert versioned == 1
    assert t.tolist() == g.tolist() and t.data_ptr == g.data_ptr
    del t
    assert settle(base) == base


def test_import_counts_one_deleter_call(probe):
    prod = CtypesProducer(np.arange(6.0).reshape(2, 3))
    t, versioned = probe.import_tensor(prod)
    assert versioned == 1
    assert prod.calls == [{"max_version": (1, 3), "stream": None}]  # stream=None said out loud: PyTorch reads a missing one as -1
    assert prod.deleter_calls == 0
    del t
    gc.collect()
    assert prod.deleter_calls == 1 and prod.live == 0


def test_stream_is_passed_through(probe):
    prod = CtypesProducer(np.arange(3.0))
    d = probe.inspect(prod, 1, 3, 7)
    assert prod.calls == [{"max_version": (1, 3), "stream": 7}]
    assert d["versioned"] == 1
    assert prod.deleter_calls == 1


def test_stream_is_checked_for_godlpack_tensors(probe):
    # The C form of __dlpack__ must not accept what __dlpack__ refuses.
    g = godlpack.arange(3.0)
    with pytest.raises(BufferError):
        g.__dlpack__(stream=5)
    with pytest.raises(BufferError):
        probe.inspect(g, 1, 3, 5)
    assert probe.inspect(g, 1, 3, -1)["data"] == g.data_ptr
    assert probe.inspect(g, 1, 3, None)["data"] == g.data_ptr


def test_old_producer_answers_legacy(probe):
    # Asked for 1.x, a producer that only knows legacy answers legacy.
    prod = CtypesProducer(np.arange(4.0), versioned=False)
    t, versioned = probe.import_tensor(prod)
    assert versioned == 0
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0]
    del t
    gc.collect()
    assert prod.deleter_calls == 1


def test_pre_max_version_signature_falls_back(probe):
    prod = CtypesProducer(np.arange(4.0), legacy_signature=True)
    t, versioned = probe.import_tensor(prod)
    assert versioned == 0
    assert prod.calls == [{"stream": None}]  # the legacy signature, stream=None explicit
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0]
    del t
    gc.collect()
    assert prod.deleter_calls == 1


def test_import_errors(probe):
    with pytest.raises(TypeError):
        probe.import_tensor(5)
    used = np.arange(2.0).__dlpack__(max_version=(1, 0))
    probe.take(used)
    with pytest.raises(BufferError):
        probe.import_tensor(used)


def test_tensor_from_managed_steals_on_failure(probe):
    prod = CtypesProducer(np.arange(3.0))
    with pytest.raises(BufferError):
        probe.import_bad_version(prod)
    assert prod.deleter_calls == 1 and prod.live == 0
    base = live()
    with pytest.raises(BufferError):
        probe.import_bad_version(godlpack.arange(3.0))
    assert settle(base) == base


# --- legacy ------------------------------------------------------------------------


def test_import_legacy(probe):
    a = np.arange(5.0)
    base_ref = sys.getrefcount(a)
    t, versioned = probe.import_legacy(a)
    assert versioned == 0
    assert t.tolist() == a.tolist()
    assert _same_memory(t, a.ctypes.data)
    d = probe.inspect(a, 0, 0)
    assert d["versioned"] == 0 and d["data"] == a.ctypes.data
    del t
    gc.collect()
    assert sys.getrefcount(a) == base_ref


@needs_torch
def test_import_legacy_of_godlpack_and_torch(probe):
    g = godlpack.arange(4.0)
    t, versioned = probe.import_legacy(g)
    assert versioned == 0 and t.tolist() == g.tolist() and t.data_ptr == g.data_ptr
    x = torch.arange(3, dtype=torch.int64)
    u, versioned = probe.import_legacy(x)
    assert versioned == 0 and u.tolist() == [0, 1, 2] and u.data_ptr == x.data_ptr()


def test_legacy_refuses_read_only(probe):
    ro = np.arange(3.0)
    ro.flags.writeable = False
    with pytest.raises(BufferError):
        probe.import_legacy(ro)
    t, versioned = probe.import_tensor(ro)
    assert versioned == 1 and t.readonly
    with pytest.raises(BufferError):
        probe.import_legacy(t)  # a read-only godlpack.Tensor: the C fast path
    d = probe.inspect(t)
    assert d["flags"] & 1, "READ_ONLY must survive a versioned re-export"


# --- sum_f64: reading a tensor in C ----------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda: np.arange(12.0).reshape(3, 4),
        lambda: np.arange(12.0).reshape(3, 4).T,
        lambda: np.arange(30.0).reshape(5, 6)[1::2, ::-2],
        lambda: np.arange(7.0)[::-1],
        lambda: np.full((), 3.5),
        lambda: np.ones((0, 4)),
        lambda: np.arange(24.0).reshape(2, 3, 4)[:, :, ::3],
    ],
    ids=["c", "transposed", "strided-negative", "reversed", "scalar", "empty", "3d"],
)
def test_sum_f64_numpy(probe, make):
    a = make()
    assert probe.sum_f64(a) == pytest.approx(float(a.sum()))
    assert probe.sum_f64(a, 0, 0) == pytest.approx(float(a.sum()))


@needs_torch
def test_sum_f64_torch_and_godlpack(probe):
    x = torch.arange(20, dtype=torch.float64).reshape(4, 5)[1:, ::2]
    assert probe.sum_f64(x) == pytest.approx(float(x.sum()))
    assert probe.sum_f64(x.t()) == pytest.approx(float(x.sum()))
    assert probe.sum_f64(godlpack.arange(1.0, 11.0)) == 55.0


def test_sum_f64_byte_offset_and_null_strides(probe):
    a = np.arange(10.0)
    # Elements 1, 3, 5 reached through byte_offset 8 and stride 2.
    prod = CtypesProducer(a, shape=[3], strides=[2], byte_offset=8)
    assert probe.sum_f64(prod) == 1.0 + 3.0 + 5.0
    assert prod.deleter_calls == 1
    assert probe.sum_f64(prod, 0, 0) == 9.0  # legacy managed tensor
    assert prod.deleter_calls == 2
    # A pre-1.2 producer: NULL strides mean compact row-major.
    prod = CtypesProducer(a, shape=[2, 4], strides=None, byte_offset=16)
    assert probe.sum_f64(prod) == float(a[2:10].sum())
    assert prod.deleter_calls == 1 and prod.live == 0


def test_sum_f64_rejects_and_still_frees(probe):
    prod = CtypesProducer(np.arange(4, dtype=np.float32))
    with pytest.raises(TypeError):
        probe.sum_f64(prod)
    assert prod.deleter_calls == 1 and prod.live == 0
    a = np.arange(3, dtype=np.int64)
    base_ref = sys.getrefcount(a)
    with pytest.raises(TypeError):
        probe.sum_f64(a)
    assert sys.getrefcount(a) == base_ref


# --- capsules ------------------------------------------------------------------------


@needs_torch
def test_export_capsule_consumed_by_torch(probe):
    g = godlpack.arange(5.0)
    base = live()
    cap = probe.export_capsule(g)
    assert capsule_name(cap) == "dltensor_versioned"
    x = torch.from_dlpack(cap)
    assert capsule_name(cap) == "used_dltensor_versioned"
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert x.data_ptr() == g.data_ptr
    assert live() != base
    del x, cap
    assert settle(base) == base


@needs_torch
def test_export_legacy_capsule_consumed_by_torch(probe):
    g = godlpack.arange(3.0)
    base = live()
    cap = probe.export_capsule(g, 0, 0)
    assert capsule_name(cap) == "dltensor"
    x = torch.from_dlpack(cap)
    assert capsule_name(cap) == "used_dltensor"
    assert x.data_ptr() == g.data_ptr and x.tolist() == [0.0, 1.0, 2.0]
    del x, cap
    assert settle(base) == base


@needs_torch
def test_export_capsule_of_foreign_producer(probe):
    a = np.arange(4.0)
    cap = probe.export_capsule(a)
    assert capsule_name(cap) == "dltensor_versioned"
    x = torch.from_dlpack(cap)
    assert capsule_name(cap) == "used_dltensor_versioned"
    assert x.tolist() == a.tolist() and x.data_ptr() == a.ctypes.data


def test_unconsumed_capsule_frees(probe):
    prod = CtypesProducer(np.arange(3.0))
    cap = probe.export_capsule(prod)
    assert prod.deleter_calls == 0
    del cap
    gc.collect()
    assert prod.deleter_calls == 1 and prod.live == 0
    g = godlpack.arange(3.0)
    base = live()
    cap = probe.export_capsule(g)
    assert live() != base
    del cap
    assert settle(base) == base


def test_take(probe):
    prod = CtypesProducer(np.arange(3.0))
    assert probe.take(prod.capsule(True)) == 1
    assert probe.take(prod.capsule(False)) == 0
    assert prod.deleter_calls == 2
    cap = np.arange(2.0).__dlpack__(max_version=(1, 0))
    assert probe.take(cap) == 1
    assert capsule_name(cap) == "used_dltensor_versioned"
    with pytest.raises(BufferError):
        probe.take(cap)  # used
    foreign = CtypesProducer(np.arange(3.0), name=b"not_a_tensor").capsule()
    with pytest.raises(BufferError):
        probe.take(foreign)
    assert capsule_name(foreign) == "not_a_tensor", "a refused capsule must stay untouched"
    with pytest.raises(TypeError):
        probe.take(np.arange(2.0))
    base = live()
    cap = godlpack.arange(3.0).__dlpack__(max_version=(1, 3))
    assert probe.take(cap) == 1
    assert settle(base) == base


# --- null checks, devices ---------------------------------------------------------------


def test_null_checks(probe):
    obj = np.arange(3.0)
    cap = np.arange(2.0).__dlpack__(max_version=(1, 0))
    r = probe.null_checks(obj, cap)
    never_fail = [k for k in r if k.startswith("free_managed")]
    assert len(never_fail) == 4
    for k in never_fail:
        assert r[k] == (False, None), k
    errors = {k: v for k, v in r.items() if k not in never_fail}
    assert len(errors) == 11
    for k, (failed, exc) in errors.items():
        assert failed, f"{k} did not return its error value"
        assert exc in ("ValueError", "TypeError", "BufferError"), f"{k} raised {exc}"
    assert errors["tensor_from_managed(NULL, 1)"][1] == "BufferError"
    # capsule_take(capsule, NULL) must not have consumed the capsule.
    assert capsule_name(cap) == "dltensor_versioned"


@needs_torch
def test_device_of(probe):
    assert probe.device_of(np.arange(3.0)) == (1, 0)
    assert probe.device_of(torch.zeros(2)) == (1, 0)
    assert probe.device_of(godlpack.zeros(2)) == (1, 0)
    assert probe.device_of(CtypesProducer(device=(13, 2))) == (13, 2)
    assert probe.device_of(CtypesProducer(device=(2, 1))) == (2, 1)
    with pytest.raises((AttributeError, TypeError)):
        probe.device_of(5)


def test_is_cpu_accessible(probe):
    known = set(godlpack.dlpack_info()["device_types"].values())
    assert {1, 2, 3, 13, 18} <= known
    for t in sorted(known | {-1, 0, 5, 6, 19, 1000}):
        want = t in CPU_ACCESSIBLE
        assert probe.is_cpu_accessible(t, 0) is want, t
        assert probe.is_cpu_accessible(t, 7) is want, t
        assert godlpack.is_cpu_accessible(t) is want, t


# --- the DLPack 1.3 C exchange API ----------------------------------------------------------


def test_godlpack_exchange_table(probe):
    h = probe.exchange_header(godlpack.Tensor)
    assert h == {
        "version": (1, 3),
        "prev_api_null": True,
        "managed_tensor_allocator": True,
        "managed_tensor_from_py_object_no_sync": True,
        "managed_tensor_to_py_object_no_sync": True,
        "dltensor_from_py_object_no_sync": True,
        "current_work_stream": True,
    }
    cap = godlpack.Tensor.__dlpack_c_exchange_api__
    assert capsule_name(cap) == "dlpack_exchange_api"
    # A static table: the same pointer from the type and from instances.
    assert capsule_pointer(cap) == capsule_pointer(godlpack.zeros(1).__dlpack_c_exchange_api__)


@needs_torch
def test_torch_exchange_table(probe):
    h = probe.exchange_header(torch.Tensor)
    assert h["version"][0] == 1
    assert h["managed_tensor_from_py_object_no_sync"] and h["managed_tensor_to_py_object_no_sync"]
    assert h["managed_tensor_allocator"] and h["current_work_stream"]


@needs_torch
def test_exchange_torch_to_godlpack(probe):
    x = torch.arange(12, dtype=torch.float64).reshape(3, 4)[:, 1::2]
    base = live()
    g = probe.exchange_cross(x, torch.Tensor, godlpack.Tensor)
    assert isinstance(g, godlpack.Tensor)
    assert g.tolist() == x.tolist()
    assert g.data_ptr == x.data_ptr()
    assert g.strides == x.stride()
    x[0, 0] = -1.0
    assert g.tolist()[0][0] == -1.0
    del g
    assert settle(base) == base


@needs_torch
def test_exchange_godlpack_to_torch(probe):
    g = godlpack.arange(6.0)
    base = live()
    x = probe.exchange_cross(g, godlpack.Tensor, torch.Tensor)
    assert isinstance(x, torch.Tensor)
    assert x.tolist() == g.tolist()
    assert x.data_ptr() == g.data_ptr
    x[2] = 100.0
    assert g.tolist()[2] == 100.0
    assert live() != base
    del x
    assert settle(base) == base


def test_exchange_godlpack_to_itself(probe):
    g = godlpack.arange(4.0)
    base = live()
    h = probe.exchange_cross(g, godlpack.Tensor, godlpack.Tensor)
    assert h.tolist() == g.tolist() and h.data_ptr == g.data_ptr
    d = probe.exchange_managed(g, godlpack.Tensor)
    assert d["version"] == (1, 3) and d["has_deleter"]
    assert d["data"] == g.data_ptr and d["shape"] == (4,) and d["strides"] == (1,)
    del h
    assert settle(base) == base


def test_exchange_read_only_survives(probe):
    ro = np.arange(3.0)
    ro.flags.writeable = False
    g = godlpack.from_dlpack(ro)
    assert g.readonly
    assert probe.exchange_managed(g, godlpack.Tensor)["flags"] & 1
    h = probe.exchange_cross(g, godlpack.Tensor, godlpack.Tensor)
    assert h.readonly


@needs_torch
def test_exchange_from_py_wrong_type(probe):
    with pytest.raises(TypeError):
        probe.exchange_managed(np.arange(3.0), godlpack.Tensor)
    with pytest.raises(TypeError):
        probe.exchange_dltensor(torch.zeros(2), godlpack.Tensor)


@needs_torch
def test_exchange_to_py_steals_on_failure(probe):
    g = godlpack.arange(3.0)
    base = live()
    with pytest.raises(BufferError):
        probe.exchange_to_py_bad_version(g, godlpack.Tensor, godlpack.Tensor)
    assert settle(base) == base, "to_py must call the deleter when it fails"
    x = torch.arange(3, dtype=torch.float64)
    with pytest.raises(BufferError):
        probe.exchange_to_py_bad_version(x, torch.Tensor, godlpack.Tensor)


@needs_torch
def test_exchange_dltensor(probe):
    g = godlpack.arange(12.0)
    d = probe.exchange_dltensor(g, godlpack.Tensor)
    assert d == {
        "data": g.data_ptr,
        "device": (1, 0),
        "ndim": 1,
        "dtype": (2, 64, 1),
        "shape": (12,),
        "strides": (1,),
        "byte_offset": 0,
    }
    x = torch.zeros(2, 3, dtype=torch.float32)
    d = probe.exchange_dltensor(x, torch.Tensor)
    if d is not None:  # the one optional function
        assert d["data"] == x.data_ptr() and d["shape"] == (2, 3) and d["dtype"] == (2, 32, 1)


@needs_torch
def test_exchange_current_work_stream(probe):
    assert probe.exchange_stream(godlpack.Tensor, 1, 0) == 0
    assert probe.exchange_stream(godlpack.Tensor, 2, 0) == 0
    assert probe.exchange_stream(torch.Tensor, 1, 0) == 0


@pytest.mark.parametrize(
    "shape,dtype",
    [((2, 3), (2, 64, 1)), ((), (0, 32, 1)), ((0, 5), (2, 32, 1)), ((7,), (6, 8, 1)), ((3, 1, 2), (5, 128, 1)),
     ((2, 3), (2, 32, 4)), ((5,), (17, 4, 2)), ((4,), (15, 6, 4))],  # vectors: float32x4, PyTorch's fp4x2, fp6x4
)
def test_exchange_allocator_cpu(probe, shape, dtype):
    base = live()
    r = probe.exchange_alloc(godlpack.Tensor, godlpack.Tensor, shape, dtype, (1, 0))
    assert r["rc"] == 0 and r["out_set"]
    assert r["set_error_calls"] == 0 and not r["exception_set"]
    t = r.pop("obj")
    assert isinstance(t, godlpack.Tensor)
    assert t.shape == shape and t.device == (1, 0) and not t.readonly
    if t.size:
        assert t.data_ptr % 64 == 0
        assert t.is_contiguous
    if dtype[2] > 1:  # a vector: whole bytes per element
        assert t.itemsize == dtype[1] * dtype[2] // 8 and t.nbytes == t.size * t.itemsize
    d = probe.exchange_dltensor(t, godlpack.Tensor)
    assert d["dtype"] == dtype
    del t, r
    assert settle(base) == base


@needs_torch
def test_exchange_allocator_to_torch(probe):
    base = live()
    r = probe.exchange_alloc(godlpack.Tensor, torch.Tensor, (4, 2), (2, 32, 1), (1, 0))
    x = r.pop("obj")
    assert isinstance(x, torch.Tensor)
    assert x.shape == (4, 2) and x.dtype == torch.float32 and x.is_contiguous()
    assert x.data_ptr() % 64 == 0
    x.fill_(2.5)
    assert float(x.sum()) == 20.0
    del x, r
    assert settle(base) == base


def test_exchange_allocator_errors(probe):
    base = live()
    for proto, ndim, kind in [
        (((2, 3), (2, 64, 1), (2, 0)), None, "BufferError"),  # CUDA: we allocate CPU memory only
        (((2, 3), (2, 64, 1), (1, 0)), -1, "ValueError"),
        (((2, 3), (2, 0, 1), (1, 0)), None, "ValueError"),  # 0 bits
        (((2, -3), (2, 64, 1), (1, 0)), None, "ValueError"),
        (((1 << 40, 1 << 40), (2, 64, 1), (1, 0)), None, "ValueError"),  # overflows
        # What godlpack's own import would refuse is refused here, not allocated:
        (((2, 3), (99, 8, 1), (1, 0)), None, "BufferError"),  # unknown dtype code
        (((2, 3), (2, 32, 0), (1, 0)), None, "ValueError"),  # 0 lanes
        (((2, 3), (17, 4, 3), (1, 0)), None, "BufferError"),  # 3 fp4 lanes: 12 bits, not whole bytes
        (((2, 3), (2, 32, 1), (1, 7)), None, "BufferError"),  # the CPU is device (1, 0)
    ]:
        args = (godlpack.Tensor, godlpack.Tensor, *proto) + (() if ndim is None else (ndim,))
        r = probe.exchange_alloc(*args)
        assert r["rc"] == -1, proto
        assert r["set_error_calls"] == 1, "SetError must be called exactly once on failure"
        assert r["kind"] == kind and r["message"]
        assert not r["out_set"] and r["obj"] is None
        assert not r["exception_set"], "the allocator reports through SetError, not a Python exception"
    assert live() == base


# --- godlpack.from_dlpack / torch.from_dlpack through the exchange API -------------------------


class _NoDunder(torch.Tensor if torch is not None else object):
    """A torch tensor whose __dlpack__ is broken: only the exchange API works.
    It names torch's table as its own (an override of __dlpack__ alone makes
    from_dlpack call the override: tests/runtime/test_exchange_torch.py)."""

    __dlpack_c_exchange_api__ = torch.Tensor.__dlpack_c_exchange_api__ if torch is not None else None

    def __dlpack__(self, *args, **kwargs):
        raise RuntimeError("__dlpack__ must not be called")


class _NoExchange(_NoDunder):
    __dlpack_c_exchange_api__ = None


@needs_torch
def test_from_dlpack_uses_torch_exchange_api():
    x = torch.arange(8, dtype=torch.float64).reshape(2, 4)
    base = live()
    s = x.as_subclass(_NoDunder)
    g = godlpack.from_dlpack(s)  # works only through torch's table
    assert g.tolist() == x.tolist()
    assert g.data_ptr == x.data_ptr()
    x[1, 1] = 9.0
    assert g.tolist()[1][1] == 9.0
    del g, s
    assert settle(base) == base
    # Control: without the table the same object falls back to __dlpack__.
    with pytest.raises(RuntimeError, match="must not be called"):
        godlpack.from_dlpack(x.as_subclass(_NoExchange))


@needs_torch
def test_from_dlpack_torch_plain():
    x = torch.arange(5, dtype=torch.int32)
    g = godlpack.from_dlpack(x)
    assert g.tolist() == [0, 1, 2, 3, 4] and g.dtype == "int32"
    assert g.data_ptr == x.data_ptr()


@needs_torch
def test_from_dlpack_torch_read_only_wrapper():
    from torch.utils.dlpack import ReadOnlyTensorWrapper

    x = torch.arange(3, dtype=torch.float64)
    g = godlpack.from_dlpack(ReadOnlyTensorWrapper(x))
    assert g.readonly
    assert g.data_ptr == x.data_ptr()


@needs_torch
def test_torch_from_dlpack_godlpack_tensor():
    g = godlpack.arange(7.0)
    base = live()
    x = torch.from_dlpack(g)
    assert x.tolist() == g.tolist()
    assert x.data_ptr() == g.data_ptr
    x[0] = 5.0
    assert g.tolist()[0] == 5.0
    del x
    assert settle(base) == base


# --- documentation and other compilers -----------------------------------------------------


def _doc_c_block() -> str:
    """The first ```c block under a heading containing "C API" (falling back
    to the first ```c block) of docs/c-api.md."""
    text = open(os.path.join(ROOT, "docs", "c-api.md"), encoding="utf-8").read()
    blocks = re.compile(r"^```c[ \t]*\n(.*?)^```", re.M | re.S)
    m = re.search(r"^#+[^\n]*C API[^\n]*$", text, re.M)
    found = blocks.search(text, m.end()) if m else None
    if found is None:
        found = blocks.search(text)
    assert found is not None, "docs/c-api.md has no ```c block"
    return found.group(1)


def test_doc_c_example_compiles(tmp_path):
    code = _doc_c_block()
    assert "godlpack" in code
    src = tmp_path / "c_api_example.c"
    src.write_text(code)
    r = subprocess.run(
        [
            _cc(),
            "-fsyntax-only",
            "-Werror=implicit-function-declaration",
            "-Werror=incompatible-pointer-types",
            "-Werror=int-conversion",
            "-I",
            godlpack.get_include(),
            "-I",
            PY_INCLUDE,
            str(src),
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, f"docs/c-api.md's C example does not compile:\n{r.stderr}"


def test_header_compiles_as_cxx(tmp_path):
    cxx = shutil.which("c++") or shutil.which("g++")
    assert cxx, "no C++ compiler found"
    src = tmp_path / "use.cc"
    src.write_text(
        textwrap.dedent(
            """\
            #include <godlpack/godlpack.h>
            int probe_size(void) {
              const GodlpackCAPI* api = godlpack_import_capi();
              DLPackExchangeAPI* x = nullptr;
              (void)x;
              return api ? (int)api->size + api->is_cpu_accessible(DLDevice{kDLCPU, 0}) : -1;
            }
            """
        )
    )
    r = subprocess.run(
        [cxx, "-fsyntax-only", "-Wall", "-Wextra", "-Werror", "-I", godlpack.get_include(), "-I", PY_INCLUDE, str(src)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
