"""Full/arange for the 8-bit float formats agree bit for bit with ml_dtypes
(what JAX and PyTorch use): rounding, subnormals, overflow, NaN and -0."""
from __future__ import annotations

import ctypes

import numpy as np
import pytest

import godlpack

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
