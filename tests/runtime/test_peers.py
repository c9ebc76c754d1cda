"""Exchange with the DLPack peers users hold beyond NumPy/PyTorch/JAX (issue 33):
PyArrow, array-api-strict, MLX, ml_dtypes (through NumPy), Dask, TensorFlow and
PaddlePaddle. Both ways: values, zero-copy by data pointer where the peer
promises it, read-only flags, 0-d, empty, strided, every dtype both support.
`make test` installs these peers; a test skips only where its peer is not
installed. TensorFlow and Paddle are too large for CI: their tests are in
test_large_peers.py, which `make test-peers` runs. godlpack.conformance drives
them all (check_peers below)."""
from __future__ import annotations

import numpy as np
import pytest

import godlpack
from godlpack.conformance import PEERS
from godlpack.conformance.probe import layout


def need(name: str):
    return pytest.importorskip(name, reason=f"optional peer {name} not installed (see mk/peers.mk)")


def start(x) -> int:
    """Where x's data begins, read from a fresh capsule of it."""
    return layout(x.__dlpack__(max_version=(1, 0)))["start"]


def peer(name: str):
    return PEERS[name](need(name))


VALUES = {"bool": [True, False, True, True]}


def values(dt: str) -> list:
    return VALUES.get(dt, [1, 2, 3, 4])


def both_ways(name: str, leave_out: tuple[str, ...] = ()) -> None:
    """Every dtype of peer `name` (but leave_out): into godlpack zero-copy with
    its dtype and values, and back into the peer with the same values."""
    p = peer(name)
    assert p.dtypes
    for dt in (d for d in p.dtypes if d not in leave_out):
        x = p.array(values(dt), dt)
        g = godlpack.from_dlpack(x)
        assert (g.dtype, g.shape) == (dt, (4,)), (name, dt)
        assert g.data_ptr == start(x), f"{name} {dt}: godlpack copied"
        assert g.tolist() == p.to_list(x), (name, dt)
        if not p.no_import():
            assert p.to_list(p.from_dlpack(g)) == p.to_list(x), (name, dt)


# --- PyArrow ----------------------------------------------------------------------


def test_pyarrow_arrays_and_tensors_into_godlpack_zero_copy_read_only():
    pa = need("pyarrow")
    a = pa.array(np.arange(5, dtype=np.float64))
    g = godlpack.from_dlpack(a)
    assert g.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0] and g.readonly  # Arrow memory is immutable
    assert g.data_ptr == a.buffers()[1].address
    sliced = a.slice(2, 2)  # an offset into the same buffer, no copy
    assert godlpack.from_dlpack(sliced).data_ptr == a.buffers()[1].address + 16
    base = np.arange(12, dtype=np.int32).reshape(3, 4)
    t = pa.Tensor.from_numpy(base.T)  # strided (Fortran order)
    gt = godlpack.from_dlpack(t)
    assert gt.shape == (4, 3) and gt.strides == (1, 4) and gt.data_ptr == base.ctypes.data
    assert gt.tolist() == base.T.tolist()
    assert godlpack.from_dlpack(pa.Tensor.from_numpy(np.array(2.5))).tolist() == 2.5  # 0-d
    assert godlpack.from_dlpack(pa.array([], pa.float32())).shape == (0,)


def test_pyarrow_imports_godlpack_zero_copy():
    pa = need("pyarrow")
    g = godlpack.arange(0, 6, 1, "float32")
    a = pa.Array.from_dlpack(g)
    assert a.to_pylist() == [0, 1, 2, 3, 4, 5] and a.buffers()[1].address == g.data_ptr
    m = godlpack.from_dlpack(np.arange(6.0).reshape(2, 3)[:, ::2])  # strided 2-d
    t = pa.Tensor.from_dlpack(m)
    assert t.to_numpy().tolist() == [[0.0, 2.0], [3.0, 5.0]] and t.strides == (24, 16)
    assert pa.Tensor.from_dlpack(godlpack.full((), 4.0, "float64")).to_numpy().tolist() == 4.0
    assert pa.Tensor.from_dlpack(godlpack.zeros((0, 3), "int8")).shape == (0, 3)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # ArrowTypeError is a TypeError: godlpack retries legacy
def test_pyarrow_every_dtype_both_ways():
    need("pyarrow")
    p = peer("pyarrow")
    bools = p.array(values("bool"), "bool")
    with pytest.raises(Exception, match="[Bb]it-packed|[Bb]oolean"):  # Arrow packs bools in bits
        godlpack.from_dlpack(bools)
    both_ways("pyarrow", leave_out=("bool",))


# --- array-api-strict ----------------------------------------------------------------


def test_array_api_strict_both_ways_every_dtype():
    need("array_api_strict")
    both_ways("array_api_strict")


def test_array_api_strict_views_read_only_0d_empty():
    xp = need("array_api_strict")
    x = xp.asarray([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    g = godlpack.from_dlpack(x[:, ::-1])  # negative strides, zero-copy
    assert g.strides == (3, -1) and g.tolist() == [[3.0, 2.0, 1.0], [6.0, 5.0, 4.0]]
    assert g.data_ptr == start(x) + 2 * 8
    ro = np.arange(3.0)
    ro.flags.writeable = False
    y = xp.from_dlpack(godlpack.from_dlpack(ro))
    assert not np.from_dlpack(y).flags.writeable  # READ_ONLY kept through godlpack
    assert xp.from_dlpack(godlpack.full((), 7, "int32")).shape == ()
    assert xp.from_dlpack(godlpack.zeros((0,), "float64")).shape == (0,)
    assert start(xp.from_dlpack(g)) == g.data_ptr  # it imports without copying


# --- MLX -----------------------------------------------------------------------------


def test_mlx_both_ways_every_dtype():
    need("mlx.core")
    both_ways("mlx")


def test_mlx_export_zero_copy_views_0d_empty():
    mx = need("mlx.core")
    x = mx.array([[1, 2, 3], [4, 5, 6]], dtype=mx.float32)
    g = godlpack.from_dlpack(x)
    assert g.data_ptr == start(x) and g.tolist() == [[1, 2, 3], [4, 5, 6]]
    t = godlpack.from_dlpack(x.T)  # a strided view
    assert t.strides == (1, 3) and t.tolist() == [[1, 4], [2, 5], [3, 6]] and t.data_ptr == g.data_ptr
    assert godlpack.from_dlpack(mx.array(2.5)).tolist() == 2.5
    assert godlpack.from_dlpack(mx.zeros((0, 2))).shape == (0, 2)
    # MLX imports by copying (mx.from_dlpack: "share memory when possible"): values only.
    s = godlpack.from_dlpack(np.arange(12.0).reshape(3, 4)[::2, 1::2])
    assert mx.from_dlpack(s).tolist() == [[1.0, 3.0], [9.0, 11.0]]
    assert mx.from_dlpack(godlpack.full((), 3, "int16")).tolist() == 3
    assert mx.from_dlpack(godlpack.zeros((2, 0), "float32")).shape == (2, 0)


# --- ml_dtypes (NumPy arrays of its dtypes) --------------------------------------------


@pytest.mark.parametrize("name", ["bfloat16", "float8_e4m3fn", "float8_e5m2"])
def test_ml_dtypes_arrays_read_godlpack_zero_copy(name):
    ml_dtypes = need("ml_dtypes")
    t = godlpack.arange(0, 6, 1, name)
    a = np.asarray(t)  # godlpack gives NumPy the ml_dtypes dtype, no copy
    assert a.dtype == getattr(ml_dtypes, name) and a.ctypes.data == t.data_ptr
    assert a.astype(np.float32).tolist() == [0, 1, 2, 3, 4, 5]
    assert np.asarray(godlpack.zeros((0,), name)).shape == (0,)
    assert np.asarray(godlpack.full((), 2.0, name)).astype(np.float32).tolist() == 2.0


def test_ml_dtypes_arrays_into_godlpack_zero_copy_or_refused_by_numpy():
    ml_dtypes = need("ml_dtypes")
    a = np.arange(8, dtype=np.float32).astype(ml_dtypes.bfloat16)[::2]  # strided
    try:
        g = godlpack.from_dlpack(a)
    except BufferError as e:  # NumPy 2.4's __dlpack__ refuses its dtypes: the checker's N/A rows say so
        assert "dtype" in str(e)
        assert PEERS["ml_dtypes"](ml_dtypes).no_export()
        return
    assert (g.dtype, g.strides, g.data_ptr) == ("bfloat16", (2,), a.ctypes.data)


# --- Dask ------------------------------------------------------------------------------


def test_dask_blocks_exchange_zero_copy():
    da = need("dask.array")
    base = godlpack.arange(0, 8, 1, "float64")
    x = da.from_array(np.from_dlpack(base), chunks=4)  # lazy (Dask copies it once)
    seen = []

    def through_godlpack(block):
        g = godlpack.from_dlpack(block)  # each NumPy block, zero-copy
        seen.append(g.data_ptr == block.ctypes.data)
        return np.from_dlpack(g) * 2

    out = x.map_blocks(through_godlpack, meta=np.array((), np.float64)).compute(scheduler="sync")
    assert out.tolist() == [0, 2, 4, 6, 8, 10, 12, 14]
    assert seen == [True, True]


# --- the checker drives each installed peer with no user code ---------------------------------

NEW = ["pyarrow", "array_api_strict", "mlx", "ml_dtypes", "dask"]  # TensorFlow, Paddle: test_large_peers.py


@pytest.mark.parametrize("name", NEW)
def test_check_peers(name):
    need("mlx.core" if name == "mlx" else name)
    check_rows(name)


def check_rows(name: str) -> None:
    """The checker's rows for peer name: every check ran, no crash row, each
    FAIL citing its clause."""
    from godlpack import conformance

    rows = conformance.check(name)
    assert [r.check for r in rows] == [t for t, _ in conformance.CHECKS]  # every check ran, no crash row
    for r in rows:
        assert r.status in ("PASS", "FAIL", "N/A") and r.reason, r
        if r.status == "FAIL":
            assert "[" in r.reason and ("dlpack.h" in r.reason or "array API" in r.reason
                                        or "DLPack Python spec" in r.reason), r  # cites its clause
    assert "module has no from_dlpack" not in str(rows)
