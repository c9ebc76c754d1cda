"""Python callables as Go func parameters, and list/dict containers, in a
Go extension (pyext's callback.go, containers.go, ext_pyobj.c). Run by
tests/pyext/test_callbacks.py in a process of its own, with cbmod on PYTHONPATH."""
import gc
import os
import sys
import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from children import run_child

import cbmod


def settle(count, want, timeout=5.0):
    """Runs Go's collector until count() is want (the funcs Go no longer
    holds release their callables in Go cleanups, which take the GIL), or the
    timeout passes; the count. count measures a reference count the way the
    test's baseline was measured: how sys.getrefcount counts the references
    of the caller's own frame changed in CPython 3.14 (borrowed stack
    references), so every count of one object goes through one function."""
    end = time.monotonic() + timeout
    while True:
        gc.collect()
        cbmod.go_gc()
        n = count()
        if n == want or time.monotonic() > end:
            return n


def counter(obj):
    """A count for settle, and the same count now."""
    def count():
        return sys.getrefcount(obj)
    return count


@pytest.fixture(autouse=True)
def no_leaks():
    """Every test leaves no object of a Go class alive."""
    gc.collect()
    before = cbmod.live_objects()
    yield
    gc.collect()
    cbmod.go_gc()  # Go's PyErrors hold exceptions, whose tracebacks hold frames and their objects
    gc.collect()
    assert cbmod.live_objects() == before


# ---- calls ------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["apply", "apply_refl", "apply_nogil", "apply_nogil_refl"])
def test_a_go_func_calls_the_python_callable(name):
    seen = []

    def f(x):
        seen.append(x)
        return x * x

    assert getattr(cbmod, name)(np.arange(4.0), f) == 14.0
    assert seen == [0.0, 1.0, 2.0, 3.0]
    assert getattr(cbmod, name)(np.arange(3.0), np.sqrt) == pytest.approx(1 + 2**0.5)  # any callable


def test_keywords_and_the_callable_of_each_kind():
    assert cbmod.apply(f=lambda x: 1.0, xs=np.zeros(3)) == 3.0
    assert cbmod.echo(lambda *a: repr(a)) == "(1.5, -3, 65535, True, 'héllo')"
    assert cbmod.multi(lambda n, s: (n * 10, s * n)) == "20:abab"
    assert cbmod.as_str(lambda: "ü") == "ü" and cbmod.as_bool(lambda: np.True_) is True
    assert cbmod.small(lambda: -128) == -128 and cbmod.tiny(lambda: np.uint8(255)) == 255


def test_a_result_takes_the_checks_of_an_argument():
    with pytest.raises(TypeError, match=r"^as_float\(\) callback result 1 must be float, not str$"):
        cbmod.as_float(lambda: "x")
    with pytest.raises(OverflowError, match=r"^small\(\) callback result 1: 300 out of range for int8$"):
        cbmod.small(lambda: 300)
    with pytest.raises(OverflowError, match="-1 out of range for uint8"):
        cbmod.tiny(lambda: -1)
    with pytest.raises(OverflowError, match="out of range for float32"):
        cbmod.as_float32(lambda: 1e300)
    with pytest.raises(TypeError, match="must be int, not bool"):
        cbmod.small(lambda: True)
    with pytest.raises(TypeError, match="must be str, not int"):
        cbmod.as_str(lambda: 1)
    with pytest.raises(TypeError, match="must be bool, not int"):
        cbmod.as_bool(lambda: 1)
    with pytest.raises(TypeError, match="must be int, not NoneType"):
        cbmod.small(lambda: None)
    with pytest.raises(TypeError, match=r"multi\(\) callback must return a tuple of 2 values, not list"):
        cbmod.multi(lambda n, s: [n, s])
    with pytest.raises(TypeError, match=r"multi\(\) callback result 2 must be str, not int"):
        cbmod.multi(lambda n, s: (n, n))


def test_a_non_callable_is_a_type_error_before_go_runs():
    with pytest.raises(TypeError, match=r"^apply\(\) argument 'f' must be callable, not int$"):
        cbmod.apply(np.zeros(2), 3)
    with pytest.raises(TypeError, match=r"^apply_refl\(\) argument 2 must be callable, not str$"):
        cbmod.apply_refl(np.zeros(2), "f")
    before = cbmod.counters()
    with pytest.raises(TypeError, match="must be callable"):
        cbmod.no_err(None)
    assert cbmod.counters() == before  # Go did not run


# ---- exceptions -------------------------------------------------------------------

class Custom(Exception):
    pass


@pytest.mark.parametrize("name", ["check", "check_refl", "check_wrapped"])
@pytest.mark.parametrize("exc", [ValueError("boom"), Custom("mine"), KeyError("k")])
def test_the_callables_exception_is_raised_again_as_itself(name, exc):
    def raising(s, n):
        assert (s, n) == ("a", 1)
        raise exc

    with pytest.raises(type(exc)) as ei:
        getattr(cbmod, name)(raising)
    assert ei.value is exc  # the same object, not a RuntimeError
    frames = [f.name for f in traceback.extract_tb(ei.tb)]
    assert "raising" in frames, frames  # the callable's frame is in the traceback
    assert getattr(cbmod, name)(lambda s, n: s == "a") is True


def test_go_sees_the_exception_as_a_py_error():
    assert cbmod.describe(lambda: 1 / 0) == (
        "ZeroDivisionError|division by zero|wrapped: ZeroDivisionError: division by zero")

    def custom():
        raise Custom("it broke")

    assert cbmod.describe(custom) == "Custom|it broke|wrapped: Custom: it broke"
    assert cbmod.describe(lambda: None).startswith("no PyError")


@pytest.mark.parametrize("name", ["no_err", "no_err_refl"])
def test_without_an_error_result_the_go_call_unwinds(name):
    exc = ArithmeticError("stop")

    def f(x):
        raise exc

    unwound, continued = cbmod.counters()
    with pytest.raises(ArithmeticError) as ei:
        getattr(cbmod, name)(f)
    assert ei.value is exc
    assert cbmod.counters() == (unwound + 1, continued)  # deferred calls ran; the code after f did not
    assert getattr(cbmod, name)(lambda x: x + 1) == 2.0
    assert cbmod.counters() == (unwound + 2, continued + 1)


def test_a_go_panic_under_a_callback_stays_a_runtime_error():
    with pytest.raises(RuntimeError, match=r"^Go panic in panics\(\): boom in Go"):
        cbmod.as_float(lambda: cbmod.panics())
    with pytest.raises(RuntimeError, match="Go panic"):
        cbmod.check_wrapped(lambda s, n: cbmod.panics())


def test_a_base_exception_passes_through():
    with pytest.raises(KeyboardInterrupt):
        cbmod.apply_nogil(np.zeros(1), lambda x: (_ for _ in ()).throw(KeyboardInterrupt()))


# ---- the GIL and goroutines -------------------------------------------------------

@pytest.mark.parametrize("name", ["parallel", "parallel_refl"])
def test_goroutines_call_the_callable_at_once_without_the_gil(name):
    threads = set()
    lock = threading.Lock()

    def f(i):
        with lock:
            threads.add(threading.get_ident())
        return i * i

    assert getattr(cbmod, name)(64, f) == sum(i * i for i in range(64))
    assert len(threads) >= 1
    err = LookupError("one of them")

    def some_fail(i):
        if i == 7:
            raise err
        return i

    with pytest.raises(LookupError) as ei:
        getattr(cbmod, name)(16, some_fail)
    assert ei.value is err


def test_python_threads_and_goroutines_together():
    def f(i):
        return i + 1

    with ThreadPoolExecutor(4) as ex:
        results = list(ex.map(lambda n: cbmod.parallel(n, f), range(1, 41)))
    assert results == [n * (n + 1) // 2 for n in range(1, 41)]
    with ThreadPoolExecutor(4) as ex:
        sums = list(ex.map(lambda k: cbmod.apply_nogil(np.full(50, float(k)), lambda x: x * 2), range(20)))
    assert sums == [100.0 * k for k in range(20)]


# ---- lifetime and references ------------------------------------------------------

def test_a_kept_func_calls_its_callable_after_the_call_returned():
    calls = []

    def g(x):
        calls.append(threading.get_ident())
        return x + 100

    count = counter(g)
    base = count()
    cbmod.store(g)
    assert count() == base + 1  # Go holds it
    assert cbmod.call_stored(1) == 101
    assert cbmod.call_stored_later(2) == 102  # from a goroutine, the GIL released by the call
    assert len(calls) == 2
    cbmod.drop_stored()
    assert settle(count, base) == base  # released once Go collected the func


def test_no_reference_leaks():
    def f(x):
        return x

    err = ValueError("kept")

    def raising(s, n):
        raise err

    counts = [counter(f), counter(raising), counter(err)]
    bases = [c() for c in counts]
    xs = np.arange(5.0)
    for _ in range(200):
        cbmod.apply(xs, f)
        cbmod.apply_nogil_refl(xs, f)
        cbmod.parallel(4, f)
        for name in ("check", "check_wrapped", "check_refl"):
            try:
                getattr(cbmod, name)(raising)
            except ValueError:
                pass
    err.__traceback__ = None  # the traceback holds frames that hold the callables
    assert [settle(c, b) for c, b in zip(counts, bases)] == bases


# ---- classes ----------------------------------------------------------------------

@pytest.mark.parametrize("name", ["each", "each_refl"])
def test_a_method_takes_a_callable(name):
    c = cbmod.Counter(5)
    seen = []

    def f(i):
        seen.append(i)
        return i < 2

    assert getattr(c, name)(f) == 3 and seen == [0, 1, 2]
    err = IndexError("out")

    def raising(i):
        raise err

    with pytest.raises(IndexError) as ei:
        getattr(c, name)(raising)
    assert ei.value is err


def test_objects_of_go_classes_cross_both_ways():
    c = cbmod.Counter(4)
    got = []

    def f(x):
        got.append(x)
        return cbmod.Counter(x.value() * 10)

    assert c.visit(f) == 41
    assert isinstance(got[0], cbmod.Counter) and got[0].value() == 4
    with pytest.raises(TypeError, match=r"^Counter.visit\(\) callback result 1 must be cbmod.Counter, not int$"):
        c.visit(lambda x: 3)
    cs = cbmod.counters3(3)
    assert [x.value() for x in cs] == [0, 1, 2] and all(isinstance(x, cbmod.Counter) for x in cs)
    assert cbmod.counters3(0) == []


# ---- containers -------------------------------------------------------------------

@pytest.mark.parametrize("name", ["words", "words_refl"])
def test_string_slices_are_lists(name):
    assert getattr(cbmod, name)("a  bé c") == ["a", "bé", "c"]
    assert getattr(cbmod, name)("") == []


@pytest.mark.parametrize("name", ["join", "join_refl"])
def test_lists_and_tuples_of_str_are_string_slices(name):
    join = getattr(cbmod, name)
    assert join(["a", "b", "ü"], "-") == "a-b-ü"
    assert join(("x", "y"), "") == "xy"
    assert join([], ",") == ""
    with pytest.raises(TypeError, match=r"argument (1|'xs') must be list\[str\], not str"):
        join("ab", "-")
    with pytest.raises(TypeError, match=r"argument (1|'xs') item 1 must be str, not int"):
        join(["a", 1], "-")
    with pytest.raises(TypeError, match=r"must be list\[str\], not set"):
        join({"a"}, "-")


def test_keywords_name_the_container_argument():
    assert cbmod.join(sep="+", xs=["a", "b"]) == "a+b"
    with pytest.raises(TypeError, match=r"^join\(\) argument 'xs' item 0 must be str, not bytes$"):
        cbmod.join([b"a"], "")


@pytest.mark.parametrize("name", ["scale", "scale_refl"])
def test_dicts_are_maps(name):
    scale = getattr(cbmod, name)
    assert scale({"a": 1.5, "b": 2}, 2.0) == {"a": 3.0, "b": 4.0}
    assert scale({}, 2.0) == {}
    with pytest.raises(TypeError, match=r"argument (1|'m') value for key 'a' must be float, not str"):
        scale({"a": "x"}, 1.0)
    with pytest.raises(TypeError, match=r"argument (1|'m') key must be str, not int"):
        scale({1: 1.0}, 1.0)
    with pytest.raises(TypeError, match=r"must be dict\[str, float\], not list"):
        scale([("a", 1.0)], 1.0)


def test_map_results_and_value_kinds():
    assert list(cbmod.counts(["b", "a", "b"]).items()) == [("a", 1), ("b", 2)]  # keys in order
    assert cbmod.upper({"a": "b", "é": "x"}) == {"A": "B", "É": "X"}
    assert sorted(cbmod.true_keys({"x": True, "y": False, "z": np.True_})) == ["x", "z"]
    assert cbmod.kinds() == ({"max": 2**32 - 1}, {"f": False, "t": True}, [])
    assert cbmod.sum8({"a": 100, "b": -128}) == -28
    with pytest.raises(OverflowError, match=r"value for key 'a': 1000 out of range for int8"):
        cbmod.sum8({"a": 1000})
    with pytest.raises(TypeError, match="must be bool, not int"):
        cbmod.true_keys({"x": 1})


def test_strings_that_are_not_utf8_name_the_argument_or_the_result():
    for f in (cbmod.bad_words, cbmod.bad_map):
        with pytest.raises(UnicodeDecodeError) as e:
            f()
        assert f"in {f.__name__}() result 1: a Go string that is not UTF-8" in "".join(e.value.__notes__)
    for call, where in ((lambda: cbmod.join(["a", "\udcff"], ""), "in join() argument 'xs' item 1"),
                        (lambda: cbmod.words("\udcff"), "in words() argument 1"),
                        (lambda: cbmod.words_refl("\udcff"), "in words_refl() argument 1"),
                        (lambda: cbmod.upper({"k": "\ud800"}), "in upper() argument 1 value for key 'k'"),
                        (lambda: cbmod.upper({"\ud800": "v"}), "in upper() argument 1 key")):
        with pytest.raises(UnicodeEncodeError) as e:
            call()
        assert where in "".join(e.value.__notes__), e.value.__notes__


def test_containers_hold_and_release_their_items():
    s = "".join(["piece"] * 3)  # one object, counted
    base = sys.getrefcount(s)
    for _ in range(100):
        cbmod.join([s, s], "")
        cbmod.upper({s: s})
        cbmod.counts((s,))
    assert sys.getrefcount(s) == base

    class Sneaky(str):
        pass

    assert cbmod.join([Sneaky("a"), "b"], "") == "ab"  # a str subclass is a str


def test_a_list_changed_by_another_thread_while_it_is_read():
    items = ["w%d" % i for i in range(2000)]
    stop = threading.Event()

    def mutate():
        while not stop.is_set():
            items[len(items) // 2] = "m" + str(time.monotonic())
            items.append("x")
            items.pop()

    t = threading.Thread(target=mutate)
    t.start()
    try:
        for _ in range(200):
            out = cbmod.join(items, ",").split(",")
            assert len(out) in (2000, 2001)
    finally:
        stop.set()
        t.join()


# ---- issue 42: shutdown and release -------------------------------------------------

def test_the_first_callable_call_may_come_during_finalization(tmp_path):
    """The first callable ever passed to Go, from a __del__ that finalization
    runs (imports fail then: sys.meta_path is None)."""
    r = run_child(tmp_path, (
        "import numpy as np, cbmod\n"
        "class D:\n"
        "    def __del__(self):\n"
        "        print('del', cbmod.apply(np.ones(2), lambda x: x + 1), flush=True)\n"
        "d = D()\n"
        "print('done', flush=True)\n"))
    assert r.returncode == 0 and r.stdout.split() == ["done", "del", "4.0"], r.stdout + r.stderr
    assert "Error" not in r.stderr, r.stderr


class Heavy:
    """A callable holding 1 MiB."""

    def __init__(self):
        self.b = bytearray(1 << 20)

    def __call__(self, x):
        return x


def test_callables_go_did_not_keep_are_released_by_a_collection():
    """300 calls each given a callable of 1 MiB: once the calls returned, a
    gc.collect() releases every one (Go's collector need not have run)."""
    import weakref
    xs = np.zeros(2)
    refs = []
    for _ in range(300):
        f = Heavy()
        refs.append(weakref.ref(f))
        assert cbmod.apply(xs, f) == 0.0
    del f
    gc.collect()
    assert sum(r() is not None for r in refs) == 0


def _rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.parametrize("call", [
    lambda f: cbmod.apply(np.zeros(2), f), lambda f: cbmod.apply_refl(np.zeros(2), f),
    lambda f: cbmod.apply_nogil(np.zeros(2), f), lambda f: cbmod.apply_nogil_refl(np.zeros(2), f),
    lambda f: cbmod.parallel(3, f), lambda f: cbmod.Counter(2).each(lambda i: f(i) < 9),
    lambda f: cbmod.no_err(lambda x: f(x) + 1)])
def test_a_callable_go_did_not_keep_is_released_when_the_call_returns(call):
    """300 calls each given a callable of 1 MiB, no collection of either
    runtime: each callable is gone as soon as its call returned (issue 42,
    bug 6), and RSS does not grow by their 300 MiB."""
    import weakref
    gc.collect()
    gc.disable()  # no full collection (which runs Go's) may release them
    try:
        before = _rss()
        for _ in range(300):
            f = Heavy()
            ref = weakref.ref(f)
            call(f)
            del f
            assert ref() is None, "the callable outlived its call"
        grown = _rss() - before
    finally:
        gc.enable()
    if not os.environ.get("GODLPACK_SANITIZER"):  # RSS is meaningless under a sanitizer
        assert grown < 64 << 20, f"RSS grew {grown / 2**20:.0f} MiB over 300 calls of 1 MiB callables"


@pytest.mark.parametrize("name", ["store_unkept", "store_unkept_refl"])
def test_a_func_go_kept_without_keep_is_refused_after_the_call(name):
    """A func called after the call that passed it returned, though Go
    never said it keeps it (pyext.Keep): a clear error, never a call of a
    released callable; the callable itself was released at the return."""
    import weakref
    g = Heavy()
    ref = weakref.ref(g)
    getattr(cbmod, name)(g)
    del g
    assert ref() is None
    with pytest.raises(RuntimeError, match=(
            rf"^Go panic in call_stored\(\): pyext: a Go func called the Python callable passed to {name}\(\) "
            rf"after {name}\(\) returned; wrap it in pyext.Keep during the call to keep it")):
        cbmod.call_stored(1)
    cbmod.drop_stored()


def test_a_sequence_calling_a_func_it_did_not_keep_raises_at_its_first_value():
    it = iter(cbmod.lazy(lambda x: x))
    with pytest.raises(RuntimeError, match=r"passed to lazy\(\) after lazy\(\) returned; wrap it in pyext.Keep"):
        next(it)


def test_a_func_with_an_error_result_returns_the_refusal():
    cbmod.store_unkept_err(lambda: None)
    with pytest.raises(RuntimeError, match=(
            r"^pyext: a Go func called the Python callable passed to store_unkept_err\(\) after "
            r"store_unkept_err\(\) returned; wrap it in pyext.Keep during the call to keep it$")):
        cbmod.call_stored_err()


def test_a_goroutine_still_calling_when_the_call_returns_is_refused_after_it():
    """spin's goroutine calls f in a loop and is inside f's second call when
    spin returns (f lets spin return, then waits): that call completes, the
    next is refused (an error, since f has an error result), and the
    callable is released as the goroutine's last call ends."""
    import weakref

    class F:
        def __init__(self):
            self.calls = 0
            self.gate = threading.Event()

        def __call__(self):
            self.calls += 1
            if self.calls == 2:
                cbmod.spin_mark()  # spin returns while this call runs
                assert self.gate.wait(5)

    for _ in range(5):
        f = F()
        ref = weakref.ref(f)
        cbmod.spin(f)
        f.gate.set()
        n, _, err = cbmod.spin_result().partition(" ")
        assert (n, f.calls) == ("2", 2)
        assert "after spin() returned" in err, err
        del f
        assert ref() is None


def test_a_kept_callable_survives_collections_and_is_released_once_dropped():
    import weakref
    g = Heavy()
    ref = weakref.ref(g)
    cbmod.store(g)
    del g
    for _ in range(3):
        gc.collect()
    assert ref() is not None and cbmod.call_stored(5) == 5  # Go holds it: it lives and works
    cbmod.drop_stored()
    # A collection releases it; a few more under load: Go scans the innermost
    # frame of a preempted goroutine conservatively, and a stale word there
    # may hold the func through one collection (seen once in a loaded run).
    assert settle(lambda: ref() is None, True) is True



def test_a_collection_in_a_forked_child_leaves_go_alone(tmp_path):
    """A child forked after Go held callables has no Go runtime to ask:
    gc.collect() there keeps what Go held, instead of hanging."""
    r = run_child(tmp_path, (
        "import gc, os, numpy as np, cbmod\n"
        "cbmod.store(lambda x: x)\n"
        "cbmod.apply(np.ones(2), lambda x: x)\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    gc.collect()\n"
        "    os.write(1, b'child\\n')\n"
        "    os._exit(0)\n"
        "_, status = os.waitpid(pid, 0)\n"
        "print('parent', status, flush=True)\n"), timeout=30)
    assert r.returncode == 0 and r.stdout.split() == ["child", "parent", "0"], r.stdout + r.stderr
