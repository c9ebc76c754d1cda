"""vecmath's Go classes (Index, Counter: index.go) and keyword arguments
(clip): NumPy, PyTorch and JAX inputs to methods, wrong inputs, panics,
threads, freeing, repr and docstrings, pickling (also in a fresh process
that never imports godlpack). Run with pytest after `pip install .` (or
with vecmath on PYTHONPATH)."""
import gc
import inspect
import os
import pickle
import struct
import subprocess
import sys
import threading

import numpy as np
import pytest

import vecmath


# ---- keyword arguments and defaults --------------------------------------------

def test_clip_takes_keywords_and_defaults():
    x = np.array([-2.0, 0.5, 3.0])
    assert vecmath.clip(x) == 2 and x.tolist() == [0.0, 0.5, 1.0]
    x = np.array([-2.0, 0.5, 3.0])
    assert vecmath.clip(x, hi=2.0) == 2 and x.tolist() == [0.0, 0.5, 2.0]
    x = np.array([-2.0, 0.5, 3.0])
    assert vecmath.clip(x=x, hi=0.75, lo=-1.0) == 2 and x.tolist() == [-1.0, 0.5, 0.75]
    x = np.array([-2.0, 0.5, 3.0])
    assert vecmath.clip(x, -3.0, hi=0.0) == 2 and x.tolist() == [-2.0, 0.0, 0.0]
    kw = {"lo": np.float64(0.25)}  # NumPy scalars, through a dict
    x = np.array([0.0])
    assert vecmath.clip(x, **kw) == 1 and x.tolist() == [0.25]
    assert str(inspect.signature(vecmath.clip)) == "(x, lo=0.0, hi=1.0)"


@pytest.mark.parametrize("call, exc, msg", [
    (lambda x: vecmath.clip(), TypeError, "clip() missing required argument 'x' (pos 1)"),
    (lambda x: vecmath.clip(lo=0.0), TypeError, "clip() missing required argument 'x' (pos 1)"),
    (lambda x: vecmath.clip(x, y=1.0), TypeError, "clip() got an unexpected keyword argument 'y'"),
    (lambda x: vecmath.clip(x, 0.0, lo=1.0), TypeError, "clip() got multiple values for argument 'lo'"),
    (lambda x: vecmath.clip(x, x=x), TypeError, "clip() got multiple values for argument 'x'"),
    (lambda x: vecmath.clip(x, 0.0, 1.0, 2.0), TypeError, "clip() takes at most 3 arguments (4 given)"),
    (lambda x: vecmath.clip(x, lo="a"), TypeError, "clip() argument 'lo' must be float, not str"),
    (lambda x: vecmath.clip(x, 0.0, "b"), TypeError, "clip() argument 'hi' must be float, not str"),
    (lambda x: vecmath.clip(np.zeros(2, np.float32)), BufferError, "clip() argument 'x': want dtype float64, got float32; "
     "pass a conforming copy, or allow a conversion in Go (pyext.Convert)"),
    (lambda x: vecmath.clip(x, lo=2.0, hi=1.0), ValueError, "clip: lo > hi"),
    (lambda x: vecmath.echo(x=x), TypeError, "echo() takes no keyword arguments"),  # no Args: positional only
])
def test_argument_errors_name_the_argument(call, exc, msg):
    x = np.zeros(3)
    before = sys.getrefcount(x)
    with pytest.raises(exc) as e:
        call(x)
    assert str(e.value) == msg
    del e
    assert sys.getrefcount(x) == before


# ---- classes ---------------------------------------------------------------------

def test_index_with_numpy_torch_and_jax_inputs():
    ix = vecmath.Index(2, name="pts")
    assert (ix.size, ix.dim, ix.name) == (0, 2, "pts")
    assert ix.add(np.array([[0.0, 0.0], [1.0, 1.0]])) == 2  # 2-d: any shape, n*dim values
    torch = pytest.importorskip("torch")
    assert ix.add(torch.tensor([3.0, 4.0], dtype=torch.float64)) == 1
    jnp = pytest.importorskip("jax.numpy")
    assert ix.add(jnp.array([10.0, 10.0], dtype=jnp.float64) if _jax_x64() else np.array([10.0, 10.0])) == 1
    assert ix.size == 4
    assert ix.nearest(np.array([0.9, 1.2])) == 1
    assert ix.nearest(q=torch.tensor([2.9, 4.0], dtype=torch.float64)) == 2
    assert ix.nearest(np.array([100.0, 100.0]), max_dist=1.0) == -1
    ro = np.array([0.1, 0.0])
    ro.setflags(write=False)  # ReadOnlyArgs: read-only arrays welcome
    assert ix.nearest(ro) == 0
    d = ix.distances(np.zeros(2))  # a new Go array, zero-copy to NumPy
    assert type(d) is vecmath.Tensor
    np.testing.assert_allclose(np.from_dlpack(d), [0.0, np.sqrt(2), 5.0, np.sqrt(200)])
    assert torch.from_dlpack(d).shape == (4,)


def _jax_x64():
    import jax
    return bool(jax.config.jax_enable_x64)


def test_jax_float32_array_is_refused_with_buffer_error_naming_the_argument():
    jnp = pytest.importorskip("jax.numpy")
    ix = vecmath.Index(3)
    with pytest.raises(BufferError, match=r"Index.add\(\) argument 'x': want dtype float64, got float32"):
        ix.add(jnp.zeros(3, dtype=jnp.float32))
    with pytest.raises(BufferError, match=r"Index.nearest\(\) argument 'q': want dtype float64, got float32"):
        ix.nearest(q=jnp.zeros(3, dtype=jnp.float32))


@pytest.mark.parametrize("call, exc, match", [
    (lambda ix: ix.add(np.zeros(3, np.float32)), BufferError, r"Index.add\(\) argument 'x': want dtype float64, got float32"),
    (lambda ix: ix.add(np.zeros(6)[::2]), BufferError, r"Index.add\(\) argument 'x': not C-contiguous"),
    (lambda ix: ix.add(1.0), TypeError, r"^Index.add\(\) argument 'x' must be an array or a bytes-like object, not float$"),
    (lambda ix: ix.add(np.zeros(2)), ValueError, "add: 2 values are not rows of 3"),
    (lambda ix: ix.add(), TypeError, r"Index.add\(\) missing required argument 'x' \(pos 1\)"),
    (lambda ix: ix.add(y=np.zeros(3)), TypeError, r"Index.add\(\) got an unexpected keyword argument 'y'"),
    (lambda ix: ix.nearest(np.zeros(3), dist=1.0), TypeError, "unexpected keyword argument 'dist'"),
    (lambda ix: ix.nearest(np.zeros(3), max_dist="far"), TypeError, "argument 'max_dist' must be float, not str"),
    (lambda ix: ix.fail(3), TypeError, r"Index.fail\(\) argument 'how' must be str, not int"),
    (lambda ix: ix.fail("error"), RuntimeError, "failed, as asked"),
    (lambda ix: ix.fail("panic"), RuntimeError, r"Go panic in Index.fail\(\): runtime error: index out of range"),
    (lambda ix: setattr(ix, "size", 3), AttributeError, "has no setter"),
    (lambda ix: setattr(ix, "name", 3), TypeError, r"^Index.name: the value must be str, not int$"),
    (lambda ix: delattr(ix, "name"), AttributeError, "cannot delete"),
    (lambda ix: vecmath.Index.add(vecmath.Counter(), np.zeros(3)), TypeError,
     "descriptor 'add' for 'vecmath.Index' objects doesn't apply to a 'vecmath.Counter' object"),
    (lambda ix: vecmath.Index.add(), TypeError, "needs an argument"),
    (lambda ix: vecmath.Counter().merge(ix), TypeError, r"Counter.merge\(\) argument 'other' must be vecmath.Counter, not vecmath.Index"),
    (lambda ix: vecmath.Index(0), ValueError, "dim must be positive, got 0"),
    (lambda ix: vecmath.Index(), TypeError, r"Index\(\) missing required argument 'dim' \(pos 1\)"),
    (lambda ix: vecmath.Index(2, nam="x"), TypeError, "unexpected keyword argument 'nam'"),
    (lambda ix: vecmath.Index(2.5), TypeError, "argument 'dim' must be int, not float"),
])
def test_wrong_inputs_to_methods(call, exc, match):
    ix = vecmath.Index(3)
    with pytest.raises(exc, match=match):
        call(ix)
    assert ix.size == 0  # nothing half-done


def test_panic_in_a_method_carries_the_go_stack_as_a_note():
    with pytest.raises(RuntimeError) as e:
        vecmath.Index(1).fail("panic")
    assert any("goroutine" in n or "index.go" in n for n in getattr(e.value, "__notes__", []))


def test_repr_docstrings_and_signatures():
    ix = vecmath.Index(3, name="a")
    assert repr(ix) == 'vecmath.Index(dim=3, size=0, name="a")'  # its String()
    ix.name = "b"
    assert str(ix) == 'vecmath.Index(dim=3, size=0, name="b")'
    assert repr(vecmath.Counter()).startswith("<vecmath.Counter object at 0x")  # no String(): Python's
    assert vecmath.Index.__module__ == "vecmath" and vecmath.Index.__qualname__ == "Index"
    assert vecmath.Index.__doc__.startswith("A nearest-neighbour index")
    assert vecmath.Index.add.__doc__.startswith("Appends the rows of x")
    assert vecmath.Index.size.__doc__ == "How many rows the index holds."
    assert vecmath.Index.add.__name__ == "add" and vecmath.Index.add.__qualname__ == "Index.add"
    assert str(inspect.signature(vecmath.Index)) == "(dim, name='')"
    assert str(inspect.signature(vecmath.Index.nearest)) == "(self, /, q, max_dist=1e+308)"
    assert str(inspect.signature(ix.nearest)) == "(q, max_dist=1e+308)"
    assert vecmath.Counter(start=4).incr() == 5 and vecmath.Counter(4).incr(by=-4) == 0


def test_objects_are_freed_no_leak_over_10k():
    gc.collect()
    base = vecmath.live_objects()
    ix = vecmath.Index(2)
    c = vecmath.Counter()
    assert vecmath.live_objects() == base + 2
    del ix, c
    assert vecmath.live_objects() == base  # freed at once: the handles are deleted
    for i in range(10_000):
        ix = vecmath.Index(2, name="x")
        ix.add(np.ones(2))
        c = vecmath.Counter(i).merge(vecmath.Counter(1))
    del ix
    assert vecmath.live_objects() == base
    # In reference cycles too (the objects hold no Python references: a
    # holder's cycle is what the collector breaks).
    for _ in range(100):
        a = [vecmath.Index(1)]
        a.append(a)
    del a
    gc.collect()
    assert vecmath.live_objects() == base


def test_eight_threads_call_methods_of_shared_objects():
    ix = vecmath.Index(4)
    c = vecmath.Counter()
    errors = []
    start = threading.Barrier(8)

    def work(k):
        try:
            start.wait()
            rows = np.full((50, 4), float(k))
            for _ in range(20):
                assert ix.add(rows) == 50  # ReleaseGIL: Go runs these at once, a mutex guards the index
                c.incr(by=1)  # ReleaseGIL, atomic
                ix.nearest(np.zeros(4))
                assert ix.size >= 50
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert ix.size == 8 * 20 * 50 and c.value == 8 * 20
    assert ix.nearest(np.zeros(4)) >= 0


def test_pickling_round_trips_through_marshal_binary():
    ix = vecmath.Index(2, name="saved")
    ix.add(np.array([1.0, 2.0, 3.0, 4.0]))
    for proto in range(2, pickle.HIGHEST_PROTOCOL + 1):
        y = pickle.loads(pickle.dumps(ix, protocol=proto))
        assert type(y) is vecmath.Index and y is not ix
        assert (y.size, y.dim, y.name) == (2, 2, "saved")
        assert y.nearest(np.array([3.0, 4.0])) == 1
    red = ix.__reduce__()
    assert red[0] is vecmath._rebuild_object and red[1][0] is vecmath.Index
    with pytest.raises(TypeError, match="cannot pickle 'vecmath.Counter' object"):
        pickle.dumps(vecmath.Counter())
    with pytest.raises(ValueError, match="corrupt pickle"):
        vecmath._rebuild_object(vecmath.Index, b"\x00")
    with pytest.raises(TypeError, match="no picklable Go class"):
        vecmath._rebuild_object(vecmath.Counter, b"")


def test_init_on_a_live_object_raises_instead_of_doing_nothing():
    """ix.__init__(0) used to return silently (Index(0) raises), and
    ix.__init__(5, 'b') kept the old values."""
    ix = vecmath.Index(3, "a")
    ix.add(np.ones(3))
    for args in [(0,), (5, "b")]:
        with pytest.raises(TypeError, match="holds its Go value already"):
            ix.__init__(*args)
    assert (ix.dim, ix.name, ix.size) == (3, "a", 1)
    y = pickle.loads(pickle.dumps(ix))  # an object made without Cls(...) refuses it too
    with pytest.raises(TypeError, match="holds its Go value already"):
        y.__init__(3)


@pytest.mark.parametrize("dim", [2**61, 2**61 + 1, 2**63 - 1])
def test_a_crafted_pickle_dim_whose_row_size_overflows_is_corrupt(dim):
    """8*dim wrapped: 2**61 raised a Go panic, 2**61+1 was taken as 8-byte rows."""
    data = struct.pack("<qq", dim, 0) + struct.pack("<d", 1.0)
    with pytest.raises(ValueError, match="corrupt pickle"):
        vecmath._rebuild_object(vecmath.Index, data)


def test_unpickled_in_a_fresh_process_that_never_imports_godlpack(tmp_path):
    ix = vecmath.Index(3, name="far")
    ix.add(np.arange(6.0))
    path = tmp_path / "ix.pkl"
    path.write_bytes(pickle.dumps(ix))
    code = ("import pickle, sys\n"
            f"y = pickle.load(open({str(path)!r}, 'rb'))\n"
            "assert 'godlpack' not in sys.modules, sorted(m for m in sys.modules if 'godlpack' in m)\n"
            "assert 'numpy' not in sys.modules\n"
            "print(repr(y), y.size)\n")
    env = dict(os.environ, PYTHONPATH=os.path.dirname(vecmath.__file__))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == 'vecmath.Index(dim=3, size=2, name="far") 2'


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_drops_objects_without_calling_go():
    """The Go runtime does not survive fork: in the child, a method call is a
    RuntimeError and freeing an object leaks its handle instead of hanging.
    (In a process of its own: this one has JAX's threads, which fork warns of.)"""
    code = """if True:
        import os, vecmath
        ix = vecmath.Index(2)
        pid = os.fork()
        if pid == 0:
            code = 3
            try:
                ix.size
            except RuntimeError as e:
                code = 0 if "forked" in str(e) else 4
            del ix  # leaks its handle: no call into Go
            try:
                vecmath.Counter()
                code = 5
            except RuntimeError:
                pass
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(status), ix.size)
    """
    env = dict(os.environ, PYTHONPATH=os.path.dirname(vecmath.__file__))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["0", "0"]


def test_a_method_converts_what_its_author_allows():
    """Index.extend is Index.add with pyext.Convert(0): a list, float32, a
    strided, a Fortran-order or a broadcast block is copied into a compact
    float64 temporary; add itself still refuses them."""
    ix = vecmath.Index(3)
    rows = np.arange(12, dtype=np.float64).reshape(4, 3)
    assert ix.extend(rows.tolist()) == 4
    assert ix.extend(rows.astype(np.float32)) == 4
    assert ix.extend(np.asfortranarray(rows)) == 4
    assert ix.extend(rows=np.broadcast_to(rows[0], (2, 3))) == 2  # stride 0, by keyword
    buf = np.zeros(rows.nbytes + 1, np.uint8)
    unaligned = np.frombuffer(buf.data, dtype=np.float64, count=12, offset=1).reshape(4, 3)
    unaligned[...] = rows
    assert ix.extend(unaligned) == 4
    assert ix.size == 18
    # Every conversion kept the values: rows 0-3, 4-7, 8-11, 12-13 (row 0 twice), 14-17.
    d = np.asarray(ix.distances(np.array([9.0, 10.0, 11.0])))
    assert np.flatnonzero(d == 0).tolist() == [3, 7, 11, 17]
    assert np.flatnonzero(np.asarray(ix.distances(rows[0])) == 0).tolist() == [0, 4, 8, 12, 13, 14]
    with pytest.raises(BufferError, match="not C-contiguous"):
        ix.add(np.asfortranarray(rows))  # Fortran order: refused without Convert
    with pytest.raises(BufferError, match=r"Index.extend\(\) argument 'rows': not an array, and converting the list"):
        ix.extend([["a", "b", "c"]])
    assert ix.size == 18


def test_functions_and_methods_pickle_by_reference():
    """pickle.dumps(vecmath.scale) raised 'cannot pickle PyCapsule object'
    and methods 'cannot pickle godlpack.go_method object' (issue 42)."""
    for f in (vecmath.scale, vecmath.Index.add, vecmath.Index.nearest):
        assert pickle.loads(pickle.dumps(f)) is f
    assert vecmath.scale.__self__ is vecmath and vecmath.scale.__qualname__ == "scale"
    ix = vecmath.Index(2)
    ix.add(np.array([1.0, 2.0]))
    assert pickle.loads(pickle.dumps(ix.nearest))(np.array([1.0, 2.0])) == 0
