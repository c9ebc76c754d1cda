"""gonum's *mat.Dense, *mat.VecDense, mat.Matrix and mat.Vector as parameters
and results of a Go extension (pyext/gonum): values, zero-copy both ways,
strided results, refusals, conversions, NumPy and PyTorch inputs, threads,
and that every exported Go buffer is released. Run by tests/pyext/test_gonum.py in
a process of its own, with gonummod on PYTHONPATH."""
import gc
import threading

import numpy as np
import pytest

import gonummod as g


@pytest.fixture(autouse=True)
def no_leaks():
    """Every test releases the Go memory it was handed (pinned until then)."""
    gc.collect()
    before = g.live_owners()
    yield
    gc.collect()
    assert g.live_owners() == before


def square(n=3):
    return np.arange(float(n * n)).reshape(n, n)


# ---- parameters: values and zero-copy ---------------------------------------

def test_a_dense_parameter_is_the_arrays_memory_on_both_paths():
    a = square()
    assert g.trace(a) == g.trace_refl(a) == g.trace_nogil(a) == 12.0
    assert g.addr(a) == a.ctypes.data
    v = np.arange(4.0)
    assert g.vaddr(v) == v.ctypes.data
    r = a[1:]  # C-contiguous rows of a bigger array: taken at their own address
    assert g.addr(np.ascontiguousarray(r)) == r.ctypes.data == a.ctypes.data + 24


def test_go_writes_land_in_the_callers_array():
    a = square()
    g.scale(a, 2.0)
    assert a.tolist() == (2 * square()).tolist()


def test_matvec_and_mul_match_numpy_on_typed_and_reflection_paths():
    rng = np.random.default_rng(0)
    m, x = rng.standard_normal((4, 3)), rng.standard_normal(3)
    for f in (g.matvec, g.matvec_refl):
        y = np.from_dlpack(f(m, x))
        assert y.shape == (4,) and np.allclose(y, m @ x)
        # Buffers too, as the stub says (SupportsDLPack | Buffer): a memoryview of each.
        y = np.from_dlpack(f(memoryview(m), memoryview(x)))
        assert np.allclose(y, m @ x)
    b = rng.standard_normal((3, 5))
    c = np.from_dlpack(g.mul(m, b))
    assert c.shape == (4, 5) and np.allclose(c, m @ b)


def test_vector_and_matrix_interfaces():
    assert g.norm(np.array([3.0, 4.0])) == 5.0
    assert g.total(square()) == 36.0
    assert np.from_dlpack(g.rev(np.arange(3.0))).tolist() == [2.0, 1.0, 0.0]
    t = np.from_dlpack(g.transpose(np.arange(6.0).reshape(2, 3)))
    assert t.shape == (3, 2) and t.tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]


def test_a_shape_requirement_adds_to_the_types_own():
    assert np.from_dlpack(g.rowsums3(np.ones((2, 3)))).tolist() == [3.0, 3.0]
    with pytest.raises(BufferError, match=r"^rowsums3\(\) argument 1: want shape \(\*, 3\), got \(2, 2\)$"):
        g.rowsums3(np.ones((2, 2)))


def test_a_method_takes_a_matrix_after_its_receiver():
    acc = g.Acc()
    assert acc.add(square()) == 12.0
    assert acc.add([[1, 0], [0, 1]]) == 14.0  # converted: a list of ints
    with pytest.raises(BufferError, match=r"want ndim 2, got 1"):
        acc.add(np.ones(3))


def test_threads_without_the_gil():
    a = square(64)
    want = float(np.trace(a))
    errors = []

    def run():
        try:
            for _ in range(200):
                assert g.trace_nogil(a) == want
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    ts = [threading.Thread(target=run) for _ in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert errors == []


# ---- refusals ---------------------------------------------------------------

def test_wrong_dtype_ndim_layout_and_emptiness_are_buffer_errors():
    with pytest.raises(BufferError, match=r"^trace\(\) argument 1: want dtype float64, got float32; .*pyext\.Convert"):
        g.trace(square().astype(np.float32))
    with pytest.raises(BufferError, match=r"^trace\(\) argument 1: want ndim 2, got 1 \(shape \(9,\)\)$"):
        g.trace(np.arange(9.0))
    with pytest.raises(BufferError, match=r"^norm\(\) argument 1: want ndim 1, got 2"):
        g.norm(square())
    with pytest.raises(BufferError, match=r"^trace\(\) argument 1: want C-contiguous, got strides \(1, 3\)"):
        g.trace(square().T)
    with pytest.raises(BufferError, match=r"want C-contiguous, got strides \(2,\)"):
        g.vaddr(np.arange(8.0)[::2])
    with pytest.raises(BufferError, match=r"^trace\(\) argument 1: gonum has no empty matrix of shape \(0, 3\)$"):
        g.trace(np.zeros((0, 3)))
    with pytest.raises(BufferError, match=r"^norm\(\) argument 1: gonum has no empty vector"):
        g.norm(np.zeros(0))


def test_a_read_only_array_is_refused_where_go_writes():
    a = square()
    a.flags.writeable = False
    with pytest.raises(BufferError, match=r"^scale\(\) argument 1 is read-only, and scale may write to it$"):
        g.scale(a, 2.0)
    assert g.trace(a) == 12.0  # read-only parameters take it


def test_a_non_array_is_a_type_error_without_convert():
    with pytest.raises(TypeError, match=r"^trace\(\) argument 1 must be an array or a bytes-like object, not list$"):
        g.trace([[1.0, 0.0], [0.0, 1.0]])


def test_go_errors_and_panics_keep_their_classes():
    with pytest.raises(ValueError, match=r"^matvec: m is 3x3, x has 2 elements$"):
        g.matvec(square(), np.ones(2))
    with pytest.raises(RuntimeError, match="expect square matrix"):
        g.trace(np.zeros((2, 3)))


# ---- conversions ------------------------------------------------------------

def test_convert_copies_what_does_not_conform_and_shares_what_does():
    a = square()
    assert g.addr_conv(a) == a.ctypes.data  # conforming: still zero-copy
    assert g.addr_conv(a.T) != a.ctypes.data  # transposed: a C-contiguous temporary
    m = np.arange(4, dtype=np.float32).reshape(2, 2)
    assert g.addr_conv(m) != m.ctypes.data
    y = np.from_dlpack(g.matvec_conv(m, [1, 1]))  # float32 and a list of ints
    assert y.tolist() == [1.0, 5.0]
    y = np.from_dlpack(g.matvec_conv(a.T, np.ones(3, dtype=np.int64)))
    assert y.tolist() == a.T.sum(axis=1).tolist()
    with pytest.raises(BufferError, match=r"want ndim 1, got 2"):
        g.matvec_conv(a, a)  # shapes are never converted


def test_convert_write_back_reaches_a_strided_array():
    a = square()
    g.scale_wb(a.T, 10.0)
    assert a.tolist() == (10 * square()).tolist()
    with pytest.raises(BufferError, match="scale\\(\\) argument 1: want C-contiguous"):
        g.scale(a.T, 10.0)


# ---- results ----------------------------------------------------------------

def test_a_dense_result_is_go_memory_zero_copy():
    m, address = g.eye(4)
    x = np.from_dlpack(m)
    assert x.ctypes.data == address
    assert x.tolist() == np.eye(4).tolist()
    x[0, 1] = 5.0  # Python's now, and writable
    assert np.from_dlpack(m)[0, 1] == 5.0


def test_a_slice_of_a_dense_keeps_its_stride():
    w = np.from_dlpack(g.window(5))
    want = np.arange(25.0).reshape(5, 5)[1:4, 1:4]
    assert w.shape == (3, 3) and w.strides == (40, 8)
    assert w.tolist() == want.tolist()


def test_a_column_view_keeps_its_increment():
    c = np.from_dlpack(g.column(4))
    assert c.strides == (24,) and c.tolist() == [1.0, 4.0, 7.0, 10.0]


def test_results_that_alias_an_argument_are_refused():
    a = square()
    with pytest.raises(ValueError, match=r"^a returned \*mat\.Dense aliases an argument's memory"):
        g.same(a)
    with pytest.raises(ValueError, match=r"^a returned \*mat\.VecDense aliases an argument's memory"):
        g.row_view(a)


def test_nil_and_empty_results():
    with pytest.raises(ValueError, match=r"^a nil \*mat\.Dense was returned$"):
        g.nil_dense()
    assert np.from_dlpack(g.empty_dense()).shape == (0, 0)


def test_results_outlive_the_go_call_and_are_released_once():
    before = g.live_owners()
    m, _ = g.eye(3)
    x = np.from_dlpack(m)
    assert g.live_owners() > before  # pinned while Python holds it
    del m
    gc.collect()
    assert x.tolist() == np.eye(3).tolist()  # the NumPy view keeps the Go memory
    del x
    gc.collect()
    assert g.live_owners() == before


# ---- PyTorch ----------------------------------------------------------------

def test_torch_tensors_in_and_out():
    torch = pytest.importorskip("torch")
    t = torch.arange(9, dtype=torch.float64).reshape(3, 3)
    assert g.trace(t) == 12.0
    assert g.addr(t) == t.data_ptr()
    y = torch.from_dlpack(g.matvec(t, torch.ones(3, dtype=torch.float64)))
    assert y.tolist() == [3.0, 12.0, 21.0]
    w = torch.from_dlpack(g.window(5))
    assert w.stride() == (5, 1) and w.tolist() == [[6.0, 7.0, 8.0], [11.0, 12.0, 13.0], [16.0, 17.0, 18.0]]
    g.scale(t, 2.0)
    assert t[2, 2].item() == 16.0
    with pytest.raises(BufferError, match="want dtype float64, got float32"):
        g.trace(torch.zeros(2, 2))
    with pytest.raises(BufferError, match="want C-contiguous"):
        g.trace(t.T)
    assert g.addr_conv(t.T) != t.data_ptr()
    assert torch.from_dlpack(g.matvec_conv(torch.eye(2), torch.ones(2))).tolist() == [1.0, 1.0]  # float32
