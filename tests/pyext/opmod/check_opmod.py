"""Operators, slices and the buffer protocol of pyext classes, against
CPython's own protocol machinery (operator, memoryview, NumPy's buffer
import). Run by tests/pyext/test_class_operators.py in a process of its own, with
opmod on PYTHONPATH."""
import ctypes
import gc
import itertools
import operator
import sys

import numpy as np
import pytest
from children import run_child
from threads import in_threads

import opmod
from opmod import Arr


@pytest.fixture(autouse=True)
def no_leaks():
    """Every test leaves no object of a Go class alive, and no Go memory pinned by a view."""
    gc.collect()
    before = opmod.live_objects()
    yield
    gc.collect()
    assert opmod.live_objects() == before
    assert opmod.pinned_buffers() == 0


def vals(a):
    return np.asarray(a).tolist()


# ---- binary operators ------------------------------------------------------------

def test_binary_operators_call_go_with_the_operands_in_order():
    a, b = Arr.of(np.arange(4.0)), Arr.of(np.full(4, 2.0))
    assert vals(a + b) == [2.0, 3.0, 4.0, 5.0]
    assert vals(a - 1.0) == [-1.0, 0.0, 1.0, 2.0]
    assert vals(a * 3) == [0.0, 3.0, 6.0, 9.0]  # an int is a float64 operand
    assert a @ b == 12.0
    assert vals(a << 3) == [0.0, 8.0, 16.0, 24.0]
    assert vals(operator.add(a, b)) == vals(a + b)
    q, r = divmod(Arr.of(np.array([7.0, -7.0])), 2.0)
    assert vals(q) == [3.0, -3.0] and vals(r) == [1.0, -1.0]


def test_reflected_operators_take_the_object_first_and_keep_the_order():
    a = Arr.of(np.arange(3.0))
    assert vals(10.0 - a) == [10.0, 9.0, 8.0]  # __rsub__, not __sub__
    assert vals(a - 10.0) == [-10.0, -9.0, -8.0]
    assert vals(2 * a) == [0.0, 2.0, 4.0]
    assert vals(operator.mul(2.5, a)) == [0.0, 2.5, 5.0]


def test_an_operand_go_does_not_take_gives_notimplemented_then_typeerror():
    a = Arr.of(np.arange(3.0))
    assert a.__add__(1.0) is NotImplemented  # "+" takes an Arr
    assert a.__mul__("x") is NotImplemented
    assert a.__lshift__(1.5) is NotImplemented  # an int parameter refuses a float
    with pytest.raises(TypeError, match=r"unsupported operand type\(s\) for \+: 'opmod.Arr' and 'float'"):
        a + 1.0
    with pytest.raises(TypeError, match="can't multiply sequence"):  # str's repetition had the last word
        a * "x"
    with pytest.raises(TypeError, match="unsupported operand"):
        "x" - a
    with pytest.raises(TypeError, match="unsupported operand"):
        a / 2.0  # not declared


def test_notimplemented_lets_the_other_operand_answer():
    class Other:
        def __radd__(self, other):
            return ("radd", type(other).__name__)

        def __rmatmul__(self, other):
            return "rmatmul"

    a = Arr.of(np.arange(3.0))
    assert a + Other() == ("radd", "Arr")
    assert a @ Other() == "rmatmul"


def test_errors_of_go_pass_through_and_are_not_notimplemented():
    a, b = Arr(2), Arr(3)
    with pytest.raises(ValueError, match="lengths differ: 2 and 3"):
        a + b
    with pytest.raises(ValueError, match="matmul: lengths differ"):
        a @ b


def test_unary_operators():
    a = Arr.of(np.array([1.0, -2.0]))
    assert vals(-a) == [-1.0, 2.0]
    assert vals(abs(a)) == [1.0, 2.0]
    assert vals(operator.neg(a)) == [-1.0, 2.0]
    with pytest.raises(TypeError, match="bad operand type for unary ~"):
        ~a


def test_in_place_operators_change_the_object_and_fall_back_to_binary():
    a, b = Arr.of(np.arange(3.0)), Arr.of(np.ones(3))
    before = a
    a += b
    assert a is before and vals(a) == [1.0, 2.0, 3.0]
    a *= 2
    assert a is before and vals(a) == [2.0, 4.0, 6.0]
    a -= 1.0  # no in-place "-": a = a - 1.0, a new object
    assert a is not before and vals(a) == [1.0, 3.0, 5.0] and vals(before) == [2.0, 4.0, 6.0]
    c = before
    assert operator.iadd(c, b) is before
    with pytest.raises(ValueError, match="lengths differ"):
        c += Arr(5)
    with pytest.raises(TypeError, match="unsupported operand"):
        c += 1.0  # neither __iadd__ nor __add__ takes a float


def test_operators_work_on_a_python_subclass_and_keep_results_of_the_go_class():
    class Sub(Arr):
        pass

    s = Sub(3)
    s += Arr.of(np.ones(3))
    assert type(s) is Sub and vals(s) == [1.0, 1.0, 1.0]
    assert type(s * 2.0) is Arr
    assert vals(Arr.of(np.ones(3)) + s) == [2.0, 2.0, 2.0]


# ---- slices ----------------------------------------------------------------------

def test_slices_match_a_list_for_every_start_stop_and_step():
    model = [float(i) for i in range(6)]
    a = Arr.of(np.array(model))
    # Out-of-range bounds first: an index left unclipped fails on them at once
    # (None's stop, unclipped, is sys.maxsize: a long way to fail).
    bounds = [-8, 9, None, -6, -3, -1, 0, 1, 3, 5, 6]
    for start, stop, step in itertools.product(bounds, bounds, [None, -3, -2, -1, 1, 2, 4]):
        s = slice(start, stop, step)
        assert vals(a[s]) == model[s], s


def test_slice_assignment_and_deletion_match_a_list():
    for s in [slice(1, 3), slice(None, None, 2), slice(None, None, -1), slice(4, 1, -2), slice(2, 2), slice(-2, None)]:
        model = [float(i) for i in range(6)]
        a = Arr.of(np.array(model))
        new = [100.0 + i for i in range(len(model[s]))]
        model[s] = new
        a[s] = np.array(new)
        assert vals(a) == model, s
        del model[s]
        del a[s]
        assert vals(a) == model, s
    a = Arr.of(np.arange(4.0))
    a[1:3] = np.array([7.0, 8.0, 9.0])  # a contiguous slice may change the length
    assert vals(a) == [0.0, 7.0, 8.0, 9.0, 3.0]


def test_bad_slices_raise_as_a_list_does():
    a = Arr(4)
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        a[::0]
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        del a[::0]
    with pytest.raises(ValueError, match="extended slice of size 2"):
        a[::2] = np.ones(3)
    with pytest.raises(TypeError, match="indices must be integers or slices, not str"):
        a["x"]
    with pytest.raises(TypeError):
        a[1:2] = "not an array"
    assert vals(a) == [0.0] * 4


def test_int_indices_still_work_next_to_slices():
    a = Arr.of(np.arange(4.0))
    assert a[-1] == 3.0 and a[np.int64(1)] == 1.0
    a[-1] = 9.0
    del a[0]
    assert vals(a) == [1.0, 2.0, 9.0]
    with pytest.raises(IndexError):
        a[3]


# ---- the buffer protocol ---------------------------------------------------------

def test_a_buffer_is_a_zero_copy_view_of_the_go_slice():
    a = Arr.of(np.arange(4.0))
    m = memoryview(a)
    assert (m.format, m.itemsize, m.shape, m.strides, m.readonly, m.ndim) == ("d", 8, (4,), (8,), False, 1)
    x = np.asarray(a)
    assert x.dtype == np.float64 and x.flags.writeable and not x.flags.owndata
    a.scale(10.0)  # Go writes: NumPy sees it
    assert x.tolist() == [0.0, 10.0, 20.0, 30.0]
    x[1] = -1.0  # NumPy writes: Go sees it
    assert a[1] == -1.0
    m.release()


def test_a_two_dimensional_read_only_buffer():
    mat = opmod.Mat(2, 3)
    x = np.asarray(mat)
    assert x.shape == (2, 3) and x.dtype == np.int32 and x.tolist() == [[0, 1, 2], [10, 11, 12]]
    assert not x.flags.writeable and x.flags.c_contiguous
    mat.bump()
    assert x[1, 2] == 13
    m = memoryview(mat)
    assert m.readonly and m.format == "i" and m.shape == (2, 3) and m.strides == (12, 4)
    with pytest.raises(TypeError, match="read-only"):
        m[0, 0] = 5
    view = ctypes.create_string_buffer(256)  # room for a Py_buffer
    with pytest.raises(BufferError, match="read-only"):
        ctypes.pythonapi.PyObject_GetBuffer(ctypes.py_object(mat), view, ctypes.c_int(1))  # PyBUF_WRITABLE
    with pytest.raises(BufferError, match="not Fortran-contiguous"):
        ctypes.pythonapi.PyObject_GetBuffer(ctypes.py_object(mat), view, ctypes.c_int(0x58))  # PyBUF_F_CONTIGUOUS
    assert opmod.pinned_buffers() == 2  # m and x's
    assert m.tobytes(order="C") == x.tobytes()
    m.release()


def test_bytes_and_empty_buffers():
    assert bytes(opmod.Bytes("héllo")) == "héllo".encode()
    assert memoryview(opmod.Bytes("")).nbytes == 0
    e = Arr(0)
    m = memoryview(e)
    assert m.nbytes == 0 and m.shape == (0,)
    assert np.asarray(e).shape == (0,)
    m.release()


def test_a_shape_that_does_not_fit_is_a_buffer_error():
    with pytest.raises(BufferError, match=r"shape \[2 2\] holds 4 items, the slice 3"):
        memoryview(opmod.BadShape())


def test_a_view_keeps_its_object_and_memory_alive():
    a = Arr.of(np.arange(3.0))
    x = np.asarray(a)
    del a
    gc.collect()
    assert opmod.live_objects() >= 1  # the view holds the object
    assert x.tolist() == [0.0, 1.0, 2.0]
    b = Arr.of(np.arange(3.0))
    y = np.asarray(b)
    b.grow(100000)  # the Go slice moves: the view keeps the old memory, pinned
    gc.collect()
    assert y.tolist() == [0.0, 1.0, 2.0] and len(b) == 100003
    del x, y


def test_views_release_their_references():
    a = Arr.of(np.arange(3.0))
    before = sys.getrefcount(a)
    for _ in range(200):
        with memoryview(a) as m:
            assert m[2] == 2.0
            assert opmod.pinned_buffers() == 1
    assert sys.getrefcount(a) == before
    assert opmod.pinned_buffers() == 0


def test_classes_without_buffer_refuse_memoryview():
    # Arr's subclass inherits the buffer; an object holding no Go value refuses it.
    class Sub(Arr):
        def __init__(self):
            pass  # no super().__init__: no Go value

    with pytest.raises(BufferError, match="holds no Go value"):
        memoryview(Sub())
    with pytest.raises(TypeError):
        memoryview(opmod)  # a module: no buffer at all


def test_views_from_many_threads():
    a = Arr.of(np.arange(64.0))

    def work():
        for _ in range(300):
            with memoryview(a) as m:
                assert m[63] == 63.0
            assert np.asarray(a).sum() == 2016.0

    in_threads(lambda k: work(), 8)


# ---- Go sequences as iterators --------------------------------------------------------

def test_a_function_returning_iter_seq_returns_an_iterator():
    it = opmod.countdown(3)
    assert iter(it) is it and type(it).__name__ == "go_iterator"
    assert list(it) == [3, 2, 1]
    assert next(it, "end") == "end"  # exhausted stays exhausted
    assert sum(opmod.countdown(10)) == 55


def test_a_sequence_of_objects_through_the_reflection_path():
    parts = list(opmod.chunks(np.arange(5.0), 2))
    assert [type(p) for p in parts] == [Arr, Arr, Arr]
    assert [vals(p) for p in parts] == [[0.0, 1.0], [2.0, 3.0], [4.0]]


def test_an_iter_seq2_class_iteration_gives_tuples():
    t = opmod.Table(3)
    assert list(t) == [("k0", 0.0), ("k1", 1.0), ("k2", 2.0)]
    assert dict(t) == {"k0": 0.0, "k1": 1.0, "k2": 2.0}


def test_an_unfinished_sequence_stops_when_its_iterator_dies():
    before = opmod.stopped()
    it = opmod.countdown(5)
    assert next(it) == 5
    del it
    gc.collect()
    assert opmod.stopped() == before + 1  # its deferred call ran
    assert list(opmod.countdown(2)) == [2, 1]
    assert opmod.stopped() == before + 2


def test_a_panic_in_a_sequence_is_a_runtime_error_and_a_nil_one_a_value_error():
    it = opmod.countdown(14)
    assert next(it) == 14
    with pytest.raises(RuntimeError, match="countdown: 13"):
        next(it)
    with pytest.raises(ValueError, match="nil iter.Seq"):
        opmod.nothing()


def test_iterators_from_many_threads():
    results = []

    def work():
        for _ in range(50):
            results.append(sum(opmod.countdown(12)))

    in_threads(lambda k: work(), 4)
    assert results == [78] * 200


# ---- regressions of the review (each hung, leaked or raised wrongly before) ----------------

@pytest.fixture()
def no_hang():
    """A deadlock fails the test (the whole process is dumped and ends) instead of hanging it."""
    import faulthandler
    faulthandler.dump_traceback_later(60, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


def test_a_sequence_may_call_python_from_its_goroutine(no_hang):
    assert list(opmod.map_seq(lambda v: v * 10, 4)) == [0, 10, 20, 30]
    seen = []
    it = opmod.defer_seq(lambda v: seen.append(v) or 0)
    assert [next(it), next(it)] == [0, 1]
    del it  # its deferred f(-1) runs (calling Python) while the iterator dies
    gc.collect()
    assert seen == [-1]


def test_a_binary_operand_that_converts_only_by_float_is_the_other_operands_turn():
    a = Arr.of(np.array([1.0, 2.0]))
    r = a - np.array([1.0, 1.0])  # NotImplemented, then ndarray.__rsub__ (through a's buffer)
    assert isinstance(r, np.ndarray) and r.tolist() == [0.0, 1.0]

    class F:
        def __float__(self):
            raise TypeError("not a number here")

        def __rmul__(self, other):
            return "F.__rmul__"

    assert a * F() == "F.__rmul__"
    assert a.__lshift__(np.int64(1)) is NotImplemented  # an int parameter takes a Python int, as int does
    assert 1 not in opmod.Table(2) and "k1" in opmod.Table(2)  # __contains__: of no such type, not in it


def test_an_iterator_kept_by_its_own_object_is_collected():
    class Sub(opmod.Table):
        pass

    for _ in range(20):
        s = Sub(3)
        s.it = iter(s)  # a cycle through the Go iterator
        assert next(s.it) == ("k0", 0.0)
        del s
    # no_leaks: every object and pull state is gone after gc.collect()


def test_a_callable_raising_in_a_buffer_function_raises_its_own_exception():
    class Mine(Exception):
        pass

    err = Mine("from the hook")

    def f(v):
        raise err

    opmod.hook(f)
    with pytest.raises(Mine) as e:
        memoryview(opmod.Hooked())
    assert e.value is err
    opmod.hook(lambda v: v)
    assert bytes(opmod.Hooked()) == b"hi"
    assert opmod.pinned_buffers() == 0


def test_an_empty_buffer_is_fortran_contiguous_too():
    view = ctypes.create_string_buffer(256)
    cube = opmod.Cube()
    assert ctypes.pythonapi.PyObject_GetBuffer(ctypes.py_object(cube), view, ctypes.c_int(0x58)) == 0  # F request
    ctypes.pythonapi.PyBuffer_Release(view)
    m = memoryview(cube)
    assert m.shape == (2, 0, 3) and m.c_contiguous and m.f_contiguous
    m.release()


def test_a_release_gil_function_may_call_python_during_atexit(tmp_path):
    import subprocess
    script = tmp_path / "late.py"
    script.write_text(
        "import atexit, opmod\n"
        "def late():\n"
        "    print('late', opmod.apply_nogil(lambda v: v + 1, 1), flush=True)\n"
        "atexit.register(late)\n"
        "print('early', opmod.apply_nogil(lambda v: v, 0), flush=True)\n")
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.split() == ["early", "0", "late", "2"], r.stdout


# ---- issue 42: iterators under threads, re-entrancy and shutdown -----------------------

@pytest.mark.parametrize("make, want", [
    (lambda: opmod.countdown(3), [1, 2, 3]),
    (lambda: iter(opmod.Table(3)), [("k0", 0.0), ("k1", 1.0), ("k2", 2.0)]),
], ids=["iter.Seq", "Seq2-class"])
def test_threads_take_turns_with_one_iterator(make, want):
    """Six threads drain one iterator: each value comes out exactly once, the
    others see the plain end (no handle freed under a thread still pulling)."""
    for _ in range(300):
        it = make()
        out = []

        def work():
            for x in it:
                out.append(x)

        in_threads(lambda k: work(), 6)
        assert sorted(out) == want
        assert next(it, "end") == "end"


@pytest.mark.parametrize("name", ["map_seq", "map_seq_refl"])
def test_a_sequence_calling_next_on_its_own_iterator_raises_value_error(no_hang, name):
    """As a generator does (ValueError: generator already executing), not a deadlock."""
    it = None

    def f(v):
        return next(it) if v == 2 else v

    it = getattr(opmod, name)(f, 5)
    assert [next(it), next(it)] == [0, 1]
    with pytest.raises(ValueError, match="already executing"):
        next(it)
    assert next(it, "end") == "end"  # the exception ended the sequence, as it ends a generator
    it = None  # the exception, which Go's PyError holds until Go collects it, reaches it through f's cell


def test_a_partly_consumed_iterator_kept_until_shutdown_lets_the_process_exit(tmp_path):
    """A sequence whose deferred call calls Python, alive until finalization:
    the deferred call is refused (Python is shutting down), and the process
    still ends. abs holds no module globals (a lambda's would keep the
    iterator alive past finalize_modules)."""
    r = run_child(tmp_path, (
        "import sys, opmod\n"
        "it = opmod.defer_seq(abs)\n"
        "assert [next(it), next(it)] == [0, 1]\n"
        "sys._it = it\n"
        "kept = opmod.defer_seq(abs)\n"
        "next(kept)\n"
        "print('done', flush=True)\n"))
    assert r.returncode == 0 and r.stdout.split() == ["done"], r.stdout + r.stderr


def test_pulling_a_sequence_that_calls_python_during_finalization_raises(tmp_path):
    """A __del__ run by finalization pulls a sequence whose values come from
    a Python callable: the call is refused (a thread of Go's own), and the
    iterator raises RuntimeError instead of waiting for it forever."""
    r = run_child(tmp_path, (
        "import opmod\n"
        "class D:\n"
        "    def __del__(self):\n"
        "        try:\n"
        "            print('del', list(opmod.map_seq(abs, 3)), flush=True)\n"
        "        except RuntimeError as e:\n"
        "            print('refused:', e, flush=True)\n"
        "d = D()\n"
        "assert list(opmod.map_seq(abs, 2)) == [0, 1]\n"
        "print('done', flush=True)\n"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines() == [
        "done", "refused: Python is shutting down: the Go sequence waits for a call of a Python callable that can no "
        "longer run"], r.stdout + r.stderr


def test_an_exception_while_a_freed_iterator_stops_its_sequence_is_reported():
    """A deferred Python call that raises while the iterator is freed has no
    caller: reported as unraisable (as a generator's at close()), not lost."""
    seen = []
    old = sys.unraisablehook
    sys.unraisablehook = seen.append
    try:
        def g(v):
            if v == -1:
                raise KeyError("in defer")
            return v

        it = opmod.defer_seq(g)
        assert next(it) == 0
        del it
        gc.collect()
    finally:
        sys.unraisablehook = old
    assert [type(u.exc_value) for u in seen] == [KeyError], seen
    assert seen[0].object == "stopping a Go sequence whose iterator was freed"
    seen.clear()  # the exception's traceback holds g's frame
