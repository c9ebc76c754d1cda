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
from conftest import child_env



# --- item 2: a foreign deleter that runs Python code keeps the pending error ----

def _raises_and_catches() -> None:
    """Python code in a deleter, as any Python-level deleter may run: raising and
    catching clears whatever exception the caller had pending unless it saved it."""
    try:
        raise KeyError("inside the deleter")
    except KeyError:
        pass


def test_failed_copy_keeps_its_exception():
    # A broadcast view of 2**62 elements: the producer (legacy) cannot copy,
    # godlpack's copy fails with MemoryError, and then drops the producer's
    # tensor, whose deleter must not swallow the MemoryError.
    p = cp.CtypesProducer(np.zeros(1, np.float32), shape=[2**62], strides=[0], versioned=False,
                          legacy_signature=True, python_deleter=_raises_and_catches)
    with pytest.raises(MemoryError):
        godlpack.from_dlpack(p, copy=True)
    assert p.deleter_calls == 1


def test_tensor_dealloc_keeps_a_pending_exception():
    # The interpreter drops the half-built list's items while ZeroDivisionError
    # is pending: the Tensor's dealloc runs the deleter then.
    p = cp.CtypesProducer(np.arange(4, dtype=np.float32), python_deleter=_raises_and_catches)

    def build():
        return [godlpack.from_dlpack(p), 1 // 0]

    with pytest.raises(ZeroDivisionError):
        build()
    assert p.deleter_calls == 1


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
    env = child_env()
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0 and "released" in r.stdout, (r.returncode, r.stdout, r.stderr[-2000:])


# --- item 3: NumPy gets the right dtype for bfloat16/float8/float6/float4 -----

ML_NAMES = ["bfloat16", "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz",
            "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn"]


def _filled(name: str, n: int, seed: int = 0) -> tuple[godlpack.Tensor, bytes]:
    t = godlpack.empty(n, name)
    raw = np.random.default_rng(seed).integers(0, 256, t.nbytes, dtype=np.uint8).tobytes()
    ctypes.memmove(t.data_ptr, raw, t.nbytes)
    return t, raw


@pytest.mark.parametrize("name", ML_NAMES)
def test_asarray_of_ml_dtypes_is_bit_exact(name):
    ml_dtypes = pytest.importorskip("ml_dtypes", reason="ml_dtypes gives NumPy these dtypes")
    t, raw = _filled(name, 37)
    with pytest.raises(BufferError, match="format"):
        memoryview(t)  # PEP 3118 has no format for these
    a = np.asarray(t)
    assert a.dtype == np.dtype(getattr(ml_dtypes, name)) and a.shape == (37,)
    bits = {"bfloat16": 16, "float6_e2m3fn": 6, "float6_e3m2fn": 6, "float4_e2m1fn": 4}.get(name, 8)
    if bits >= 8:
        utype = np.uint16 if bits == 16 else np.uint8
        assert np.array_equal(a.view(utype), np.frombuffer(raw, utype))
        assert a.ctypes.data == t.data_ptr  # zero-copy
    else:  # packed, little bit-endian: unpacked to one byte each
        word = int.from_bytes(raw, "little")
        want = [(word >> (i * bits)) & ((1 << bits) - 1) for i in range(37)]
        assert a.view(np.uint8).tolist() == want
        with pytest.raises(ValueError):
            np.array(t, copy=False)


def test_asarray_of_ml_dtypes_values_views_and_readonly():
    ml_dtypes = pytest.importorskip("ml_dtypes", reason="ml_dtypes gives NumPy these dtypes")
    torch = pytest.importorskip("torch", reason="PyTorch makes strided bfloat16 views")
    x = torch.arange(24, dtype=torch.float32).reshape(4, 6).to(torch.bfloat16)[:, ::2]
    a = np.asarray(godlpack.from_dlpack(x))
    assert a.dtype == ml_dtypes.bfloat16 and a.shape == (4, 3)
    assert np.array_equal(a.view(np.uint16), x.view(torch.int16).numpy().view(np.uint16))
    assert np.asarray(godlpack.from_dlpack(x), dtype=np.float32).tolist() == x.float().tolist()
    f4 = godlpack.zeros(3, "float4_e2m1fn")
    ctypes.memmove(f4.data_ptr, bytes([0x23, 0x0F]), 2)  # codes 3, 2, 15: 1.5, 1.0, -6.0
    assert np.asarray(f4).astype(np.float32).tolist() == [1.5, 1.0, -6.0]
    ro = godlpack.from_dlpack(cp.CtypesProducer(np.zeros(4, np.uint16), dtype=(4, 16, 1), flags=cp.READ_ONLY))
    assert not np.asarray(ro).flags.writeable


def test_asarray_refuses_instead_of_an_object_array():
    # A tensor NumPy cannot read (not CPU-accessible) used to become a 0-d
    # object array holding the Tensor.
    g = godlpack.from_dlpack(cp.CtypesProducer(np.zeros(4, np.float32), device=(2, 0)))
    with pytest.raises(BufferError, match="CPU"):
        np.asarray(g)
    code = textwrap.dedent("""
        import sys; sys.modules["ml_dtypes"] = None  # not installed
        import numpy as np, godlpack
        try:
            np.asarray(godlpack.zeros(3, "bfloat16"))
        except BufferError as e:
            print("refused:", e)
    """)
    env = child_env()
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert "refused:" in r.stdout and "ml_dtypes" in r.stdout, (r.stdout, r.stderr[-2000:])


# --- item 12: legacy imports are writable (the documented policy) ------------

def test_legacy_imports_are_writable_and_reexported_so():
    p = cp.CtypesProducer(np.arange(4, dtype=np.float32), versioned=False, legacy_signature=True)
    t = godlpack.from_dlpack(p)
    assert p.calls and "max_version" not in p.calls[-1] and not t.readonly
    cap = t.__dlpack__(max_version=(1, 3))
    assert cp.read_versioned(cap).flags & cp.READ_ONLY == 0
    del cap
    assert np.from_dlpack(t).flags.writeable
    legacy = t.__dlpack__()  # re-exported as legacy too (read-only tensors cannot be)
    assert cp.capsule_name(legacy) == "dltensor"
    del legacy
    # A versioned READ_ONLY producer is honoured, and then refuses legacy export.
    ro = godlpack.from_dlpack(cp.CtypesProducer(np.arange(4, dtype=np.float32), flags=cp.READ_ONLY))
    assert ro.readonly
    with pytest.raises(BufferError):
        ro.__dlpack__()


def test_jax_round_trip_through_godlpack():
    jax = pytest.importorskip("jax", reason="JAX is the legacy-only peer this policy is for")
    import jax.numpy as jnp
    x = jnp.arange(6, dtype=jnp.float32).reshape(2, 3)
    # JAX before 0.12 speaks legacy DLPack only (godlpack's import is then
    # writable); newer JAX exports versioned, READ_ONLY (its arrays are
    # immutable). godlpack follows what the producer says; the round trip
    # works either way.
    cap = x.__dlpack__(max_version=(1, 3))
    says_read_only = cp.capsule_name(cap) == "dltensor_versioned" and bool(cp.read_versioned(cap).flags & cp.READ_ONLY)
    del cap
    g = godlpack.from_dlpack(x)
    assert g.readonly == says_read_only
    y = jnp.from_dlpack(g)
    assert y.tolist() == x.tolist()


# --- item 13: nbytes of huge packed broadcast views; overflowing strides ------

def test_nbytes_rounds_up_for_huge_packed_broadcast_views():
    # 2**62 + 1 float4 elements (stride 0): 2**61 + 0.5 bytes, i.e. 2**61 + 1.
    p = cp.CtypesProducer(np.zeros(1, np.uint8), dtype=(17, 4, 1), shape=[2**62 + 1], strides=[0])
    assert godlpack.from_dlpack(p).nbytes == 2**61 + 1


def test_size_one_dims_with_huge_strides():
    # A size-1 dimension's stride is never used, but stride * itemsize
    # overflowed int64 (undefined behaviour, seen by UBSan) in tolist() and
    # the buffer protocol.
    a = np.array([[1.5, 2.5]])
    p = cp.CtypesProducer(a, strides=[2**62, 1])
    t = godlpack.from_dlpack(p)
    assert t.tolist() == [[1.5, 2.5]]
    assert memoryview(t).tolist() == [[1.5, 2.5]]
    assert np.asarray(t).tolist() == [[1.5, 2.5]]
    e = godlpack.from_dlpack(cp.CtypesProducer(np.zeros((0, 2)), strides=[2**62, 2**62]))
    assert e.tolist() == [] and memoryview(e).tolist() == []


def test_empty_views_with_huge_strides():
    """An empty view's strides are never used, so validation does not bound
    them, even in extents of 2 or more: the buffer protocol and tolist must
    not multiply them (signed overflow, found by make ubsan)."""
    p = cp.CtypesProducer(np.zeros(1, np.float64), shape=[2, 0], strides=[2**62, 1])
    t = godlpack.from_dlpack(p)
    assert t.tolist() == [[], []]
    m = memoryview(t)
    assert m.shape == (2, 0) and m.nbytes == 0
    assert np.asarray(t).shape == (2, 0)

