"""JAX <-> godlpack in both directions. JAX exports legacy capsules only and
copies CPU buffers that are not 64-byte aligned; godlpack's own tensors are
aligned, so those imports must be zero-copy."""
from __future__ import annotations

import gc
import warnings

import numpy as np
import pytest

import godlpack
import ctypes_producer as cp
from dtypes import JAX_DTYPES
from harness import live
from ctypes_producer import CtypesProducer

jax = pytest.importorskip("jax", reason="optional peer jax not installed")
import jax.dlpack  # noqa: E402
import jax.numpy as jnp  # noqa: E402


@pytest.fixture(autouse=True, scope="module")
def x64():
    """int64/uint64/float64/complex128 need x64; restored for other modules."""
    old = bool(jax.config.jax_enable_x64)
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", old)



def buffer_pointer(x):
    f = getattr(x, "unsafe_buffer_pointer", None)
    return f() if f is not None else None


def sample(name, shape=(3, 4)):
    n = int(np.prod(shape))
    if name == "bool":
        return (jnp.arange(n) % 3 == 0).reshape(shape)
    if name.startswith("complex"):
        return (jnp.arange(n) + 1j * jnp.arange(n)[::-1]).astype(name).reshape(shape)
    return (jnp.arange(n) * 2 + 1).astype(name).reshape(shape)


def to_list(x):
    return np.asarray(x.astype(jnp.float32) if x.dtype == jnp.bfloat16 else x).tolist()


@pytest.mark.parametrize("name", JAX_DTYPES)
def test_jax_to_godlpack_every_dtype(name):
    x = sample(name)
    g = godlpack.from_dlpack(x)
    assert g.dtype == name
    assert g.shape == x.shape
    assert g.device == (1, 0)
    assert g.is_contiguous
    ptr = buffer_pointer(x)
    if ptr is not None:
        assert g.data_ptr == ptr  # JAX exports its CPU buffer as is
    assert g.tolist() == to_list(x)


@pytest.mark.parametrize("name", JAX_DTYPES)
@pytest.mark.parametrize("importer", ["jnp", "jax.dlpack"])
def test_godlpack_created_to_jax_is_zero_copy(name, importer):
    g = godlpack.arange(0, 12, dtype=name) if name != "bool" else godlpack.full(12, True)
    assert g.data_ptr % 64 == 0
    fn = jnp.from_dlpack if importer == "jnp" else jax.dlpack.from_dlpack
    j = fn(g)
    assert str(j.dtype) == name
    assert j.shape == (12,)
    ptr = buffer_pointer(j)
    if ptr is not None:
        assert ptr == g.data_ptr, "an aligned godlpack tensor must not be copied by JAX"
    expect = [True] * 12 if name == "bool" else list(range(12))
    got = to_list(j)
    if name.startswith("complex"):
        expect = [complex(v) for v in expect]
    assert got == expect


@pytest.mark.parametrize("name", JAX_DTYPES)
def test_jax_round_trip_every_dtype(name):
    x = sample(name, (2, 3, 2))
    g = godlpack.from_dlpack(x)
    y = jnp.from_dlpack(g)
    assert y.dtype == x.dtype and y.shape == x.shape
    assert bool(jnp.all(y == x))


def test_jax_array_keeps_godlpack_memory_alive():
    g = godlpack.arange(100, dtype="float32")
    ptr = g.data_ptr
    j = jnp.from_dlpack(g)
    with_j = live()
    del g
    gc.collect()
    assert live()[0] >= 1 and live() == with_j  # JAX's import holds the owner
    if buffer_pointer(j) is not None:
        assert buffer_pointer(j) == ptr
    assert np.asarray(j).tolist() == list(range(100))
    assert float(jnp.sum(j)) == 4950.0


def test_jax_import_of_ctypes_producer_tensor_deletes_once():
    a = np.arange(16, dtype=np.float32)
    # JAX asks for a legacy capsule; make the producer give what is asked.
    p = CtypesProducer(a)
    g = godlpack.from_dlpack(p)
    j = jnp.from_dlpack(g)
    del g
    gc.collect()
    assert np.asarray(j).tolist() == a.tolist()
    del j
    gc.collect()
    for _ in range(50):  # JAX may release its buffer a little later
        if p.deleter_calls:
            break
        gc.collect()
    assert p.deleter_calls == 1


def test_jax_layouts():
    x = jnp.arange(24.0).reshape(2, 3, 4)
    for y in (x[0], x[:, 1:, :], jnp.array(7.0), jnp.zeros((0, 3)), x.reshape(1, 2, 1, 3, 4)):
        g = godlpack.from_dlpack(y)
        assert g.shape == y.shape
        assert g.tolist() == np.asarray(y).tolist()
        assert np.from_dlpack(g).tolist() == np.asarray(y).tolist()


def test_godlpack_layouts_into_jax():
    for g in (
        godlpack.full((), 2.5),
        godlpack.zeros((0, 3), "float32"),
        godlpack.zeros((1,) * 32, "int32"),
        godlpack.full((2, 3), 1 + 2j, "complex64"),
    ):
        j = jnp.from_dlpack(g)
        assert j.shape == g.shape
        assert np.asarray(j).tolist() == g.tolist()


def test_noncontiguous_godlpack_into_jax_values():
    # JAX may refuse non-compact strides or copy them; if it accepts, the
    # values must be right.
    a = np.arange(12.0).reshape(3, 4)
    g = godlpack.from_dlpack(a.T)
    assert g.strides == (1, 4) and not g.is_contiguous
    # godlpack's side, whatever JAX does: the export describes a.T exactly.
    assert np.from_dlpack(g).tolist() == a.T.tolist()
    try:
        j = jnp.from_dlpack(g)
    except Exception as e:  # a peer's limitation is a finding, not our failure
        warnings.warn(f"JAX {jax.__version__} refuses non-compact strides: {type(e).__name__}: {e}")
        return
    assert np.asarray(j).tolist() == a.T.tolist()


def test_jax_to_torch_through_godlpack():
    torch = pytest.importorskip("torch", reason="optional peer torch not installed")

    x = jnp.arange(6, dtype=jnp.int32)
    g = godlpack.from_dlpack(x)
    t = torch.from_dlpack(g)
    assert t.data_ptr() == g.data_ptr
    assert t.tolist() == [0, 1, 2, 3, 4, 5]
    back = jnp.from_dlpack(godlpack.from_dlpack(t))
    assert back.tolist() == [0, 1, 2, 3, 4, 5]


# --- the legacy/versioned policy on a JAX round trip ---------------------------

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
