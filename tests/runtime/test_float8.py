"""Full/arange for the 8-bit float formats agree bit for bit with ml_dtypes
(what JAX and PyTorch use): rounding, subnormals, overflow, NaN and -0."""
from __future__ import annotations

import ctypes
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import godlpack
import ctypes_producer as cp
from harness import child_env

ml_dtypes = pytest.importorskip("ml_dtypes")  # installed with jax in the test venv

FLOAT8 = ["float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz",
          "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu"]


def values(name: str) -> np.ndarray:
    fi = ml_dtypes.finfo(getattr(ml_dtypes, name))
    rng = np.random.default_rng(7)
    top, tiny = float(fi.max), float(fi.smallest_subnormal)
    every_code = np.arange(256, dtype=np.uint8).view(getattr(ml_dtypes, name)).astype(np.float64)
    mids = (every_code[:-1] + every_code[1:]) / 2  # ties between neighbours: round to even
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, top, -top, top * 1.01, top * 2, tiny, tiny / 2, tiny * 0.49]
    randoms = np.concatenate([rng.uniform(-top, top, 300), rng.standard_normal(300), rng.uniform(-4 * tiny, 4 * tiny, 100)])
    return np.concatenate([special, every_code, mids, randoms])


def code_of(t: godlpack.Tensor) -> int:
    return ctypes.string_at(t.data_ptr, 1)[0]


@pytest.mark.parametrize("name", FLOAT8)
def test_full_matches_ml_dtypes_bit_for_bit(name):
    dt = getattr(ml_dtypes, name)
    vs = values(name)
    with np.errstate(over="ignore"):  # overflowing on purpose
        want = vs.astype(dt).view(np.uint8)
    got = np.array([code_of(godlpack.full(1, float(v), name)) for v in vs], dtype=np.uint8)
    bad = [(float(v), hex(g), hex(w)) for v, g, w in zip(vs, got, want) if g != w]
    assert not bad, bad[:10]


@pytest.mark.parametrize("name", [n for n in FLOAT8 if n != "float8_e8m0fnu"])
def test_arange_in_float8(name):
    t = godlpack.arange(-3, 3, 0.5, dtype=name)
    want = np.arange(-3, 3, 0.5).astype(getattr(ml_dtypes, name)).view(np.uint8)
    assert t.dtype == name and t.shape == (12,)
    assert bytes(ctypes.string_at(t.data_ptr, 12)) == want.tobytes()


def test_packed_sub_byte_types_refuse_full_but_allow_zeros():
    for name in ("float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn"):
        with pytest.raises(ValueError, match="sub-byte"):
            godlpack.full(4, 1.0, name)
        assert godlpack.zeros(4, name).nbytes == (4 * int(name[5]) + 7) // 8


# --- np.asarray gets the ml_dtypes dtype (bfloat16, float8/6/4), bit for bit ---

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
