"""The typed wrappers of every arity and the class features of pyext,
against CPython's own protocol checks (collections.abc, operator, weakref,
copy, pickle). Run by tests/pyext/test_classes.py in a process of its own, with
classmod on PYTHONPATH."""
import gc
import sys

import numpy as np
import pytest

import classmod


@pytest.fixture(autouse=True)
def no_leaks():
    """Every test leaves no object of a Go class (nor a Go iterator) alive."""
    gc.collect()
    before = classmod.live_objects()
    yield
    gc.collect()
    assert classmod.live_objects() == before


# ---- typed wrappers of every arity ---------------------------------------------

def test_three_and_six_parameter_typed_functions_match_reflection():
    x = np.arange(4.0)
    assert classmod.sum3(x, 2.0, 1) == classmod.sum3_refl(x, 2.0, 1) == 13.0
    assert classmod.mix6(x, 2.0, 1, True, "t", 0.5) == classmod.mix6_refl(x, 2.0, 1, True, "t", 0.5) == "t:-13.5"
    assert classmod.mix6e(x, 1.0, 0) == "t:6"
    assert classmod.mix6e(x, 1.0, 0, tag="k", b=1.0, neg=True) == "k:-7"
    with pytest.raises(ValueError, match="^mix6e: empty tag$"):
        classmod.mix6e(x, 1.0, 0, tag="")
    classmod.store6(1, 2, 3, 4, 5, 6)
    assert classmod.sink6() == 21
    assert classmod.add8(1, 2, 3, 4, 5, 6, 7, 8) == 36


def test_a_typed_method_of_six_parameters():
    v = classmod.Vec(6)
    assert v.fill6(1, 2, 3, 4, 5, 6.5) == 21.5 and list(v) == [1.0, 2.0, 3.0, 4.0, 5.0, 6.5]
    with pytest.raises(IndexError, match="^fill6: 2 values, want 6$"):
        classmod.Vec(2).fill6(1, 2, 3, 4, 5, 6)
    with pytest.raises(TypeError, match=r"Vec.fill6\(\) argument 6 must be float, not str"):
        v.fill6(1, 2, 3, 4, 5, "x")


def test_typed_arguments_are_checked_and_named_like_reflection():
    x = np.arange(4.0)
    refs = sys.getrefcount(x)  # 2 before Python 3.14, 1 from 3.14 (the call borrows its argument)
    for f in (classmod.mix6, classmod.mix6_refl):
        with pytest.raises(TypeError, match=r"argument 5 must be str, not int"):
            f(x, 1.0, 1, True, 5, 0.5)
        with pytest.raises(BufferError, match=r"argument 1: want dtype float64, got float32"):
            f(np.zeros(2, np.float32), 1.0, 1, True, "t", 0.5)
        with pytest.raises(TypeError, match=r"takes 6 positional arguments but 5 were given"):
            f(x, 1.0, 1, True, "t")
    with pytest.raises(TypeError, match=r"mix6e\(\) argument 'n' must be int, not str"):
        classmod.mix6e(x, 1.0, n="a")
    with pytest.raises(RuntimeError, match=r"^Go panic in panic3\(\): panic3\(1, 2, 3\)"):
        classmod.panic3(1, 2, 3)
    assert sys.getrefcount(x) == refs


# ---- weak references -------------------------------------------------------------

def test_weak_references_to_an_object_of_a_weakref_class():
    import weakref

    v = classmod.Vec(2)
    r = weakref.ref(v)
    called = []
    r2 = weakref.ref(v, called.append)
    assert r() is v and weakref.getweakrefcount(v) == 2
    d = weakref.WeakValueDictionary({"v": v})
    p = weakref.proxy(v)
    assert len(p) == 2
    del v
    gc.collect()
    assert r() is None and called == [r2] and "v" not in d
    with pytest.raises(ReferenceError):
        len(p)


def test_a_class_without_weakref_refuses_weak_references():
    import weakref

    with pytest.raises(TypeError, match="cannot create weak reference to 'classmod.Bare' object"):
        weakref.ref(classmod.Bare())


# ---- repr and str ------------------------------------------------------------------

def test_repr_is_gostring_and_str_is_string():
    v = classmod.Vec.filled(2, 1.5)
    assert repr(v) == "classmod.Vec(2)" and str(v) == "[1.5 1.5]" and f"{v}" == "[1.5 1.5]"
    p = classmod.Point(1, 2)
    assert repr(p) == str(p) == "Point(1, 2)"  # String alone: both
    assert repr(classmod.Bare()).startswith("<classmod.Bare object at 0x")


# ---- static and class methods -------------------------------------------------------

def test_static_methods_take_no_receiver():
    import inspect

    a, b = classmod.Vec.filled(3, 2.0), classmod.Vec.filled(3, 0.5)
    assert classmod.Vec.dot(a, b) == a.dot(a, b) == 3.0
    assert classmod.Vec.norm2(1.0, 2.0, 2.0) == 3.0
    assert isinstance(inspect.getattr_static(classmod.Vec, "dot"), staticmethod)
    assert str(inspect.signature(classmod.Vec.dot)) == "(a, b)"
    with pytest.raises(TypeError, match=r"argument 2 must be classmod.Vec, not int"):
        classmod.Vec.dot(a, 1)


def test_class_methods_make_objects_of_the_class():
    import inspect

    v = classmod.Vec.filled(2)
    assert type(v) is classmod.Vec and str(v) == "[1 1]"
    assert str(classmod.Vec.filled(3, v=2.5)) == "[2.5 2.5 2.5]"
    assert str(v.filled(1, 4.0)) == "[4]"  # through an object too
    assert isinstance(inspect.getattr_static(classmod.Vec, "filled"), classmethod)
    assert str(inspect.signature(classmod.Vec.filled)) == "(n, v=1.0)"


# ---- comparison and hashing -----------------------------------------------------------

def test_rich_comparison_from_equal_and_less():
    import functools
    import operator

    a, b, c = classmod.Vec.filled(2, 1.0), classmod.Vec.filled(2, 1.0), classmod.Vec.filled(2, 2.0)
    assert a == b and not a != b and a is not b
    assert a != c and not a == c
    assert a < c and a <= c and c > a and c >= a and a <= b and a >= b
    assert not (a < b or a > b or c < a or c <= a)
    for op in (operator.lt, operator.le, operator.gt, operator.ge):
        assert op(a, c) == op((1.0, 1.0), (2.0, 2.0))
    assert sorted([c, a]) == [a, c] and max(a, c) is c
    assert sorted([c, a], key=functools.cmp_to_key(lambda x, y: (x > y) - (x < y))) == [a, c]
    # Other types: NotImplemented, so == is identity and < is TypeError.
    assert a.__eq__(1) is NotImplemented and a.__lt__("x") is NotImplemented
    assert a != 1 and not (a == "x") and a != classmod.Point(1, 1)
    with pytest.raises(TypeError, match="'<' not supported between instances of 'classmod.Vec' and 'int'"):
        a < 1


def test_hash_from_hash_agrees_with_equal():
    from collections.abc import Hashable

    a, b = classmod.Vec.filled(2, 1.0), classmod.Vec.filled(2, 1.0)
    assert isinstance(a, Hashable) and hash(a) == hash(b)
    assert {a: 1}[b] == 1 and len({a, b, classmod.Vec(2)}) == 2
    assert hash(classmod.Vec.filled(1, -0.0)) == hash(classmod.Vec.filled(1, 0.0))


def test_equal_without_hash_is_unhashable_and_bare_hashes_by_identity():
    from collections.abc import Hashable

    p = classmod.Point(1, 2)
    assert p == classmod.Point(1, 2) and p != classmod.Point(2, 1)
    assert classmod.Point.__hash__ is None and not isinstance(p, Hashable)
    with pytest.raises(TypeError, match="unhashable type: 'classmod.Point'"):
        hash(p)
    b = classmod.Bare()
    assert hash(b) == hash(b) and b == b and b != classmod.Bare()


# ---- the sequence protocol -------------------------------------------------------------

def test_len_getitem_setitem_delitem_with_negative_indices():
    import operator
    from collections.abc import Container, Iterable, Sized

    v = classmod.Vec(0)
    for x in (1.0, 2.0, 3.0):
        v.append(x)
    assert isinstance(v, Sized) and isinstance(v, Container) and isinstance(v, Iterable)
    assert len(v) == 3 and operator.length_hint(v) == 3 and bool(v)
    assert [v[0], v[1], v[2]] == [1.0, 2.0, 3.0] and [v[-1], v[-3]] == [3.0, 1.0]
    assert v[True] == 2.0 and operator.getitem(v, -2) == 2.0
    v[-1] = 30.0
    v[0] = 10
    assert str(v) == "[10 2 30]"
    del v[-3]
    assert str(v) == "[2 30]" and len(v) == 2
    operator.delitem(v, 0)
    assert str(v) == "[30]"
    assert not classmod.Vec(0)


@pytest.mark.parametrize("key, exc, msg", [
    (3, IndexError, "classmod.Vec index out of range"),
    (-4, IndexError, "classmod.Vec index out of range"),
    (2**70, IndexError, "cannot fit 'int' into an index-sized integer"),
    ("a", TypeError, "classmod.Vec indices must be integers or slices, not str"),
    (1.0, TypeError, "classmod.Vec indices must be integers or slices, not float"),
])
def test_bad_indices_raise_as_a_list_does(key, exc, msg):
    v = classmod.Vec(3)
    for op in (lambda: v[key], lambda: v.__setitem__(key, 1.0), lambda: v.__delitem__(key)):
        with pytest.raises(exc) as e:
            op()
        assert str(e.value) == msg
    assert len(v) == 3


def test_setitem_checks_the_value():
    v = classmod.Vec(1)
    with pytest.raises(TypeError, match=r"argument 2 must be float, not str"):
        v[0] = "x"
    with pytest.raises(TypeError, match=r"takes 1 arguments \(2 given\)"):
        v.__getitem__(0, 1)


def test_contains():
    v = classmod.Vec.filled(2, 4.0)
    assert 4.0 in v and 4 in v and 5.0 not in v
    assert "a" not in v and None not in v  # not of the element type: not in it
    # a value float() refuses, or cannot hold, is not in it either, as for a list of floats
    assert np.array([1.0, 2.0]) not in v and np.array([4.0, 4.0]) not in v and np.zeros((0,)) not in v
    assert 10**400 not in v and np.float64(4.0) in v and np.int8(4) in v and np.array(4.0) in v
    assert (np.array([1.0, 2.0]) in v) is False


def test_contains_propagates_a_values_own_error():
    class Bad:
        def __float__(self):
            raise ZeroDivisionError("no float")

    with pytest.raises(ZeroDivisionError, match="no float"):
        Bad() in classmod.Vec(1)


# ---- iteration ---------------------------------------------------------------------------

def test_iter_from_an_iter_seq_method():
    from collections.abc import Iterator

    v = classmod.Vec(0)
    for x in (1.0, 2.0, 3.0):
        v.append(x)
    it = iter(v)
    assert isinstance(it, Iterator) and iter(it) is it
    assert list(it) == [1.0, 2.0, 3.0] and list(it) == []
    with pytest.raises(StopIteration):
        next(it)
    assert list(v) == [1.0, 2.0, 3.0] and sum(v) == 6.0 and sorted(v, reverse=True) == [3.0, 2.0, 1.0]
    assert [(a, b) for a in v for b in v][:2] == [(1.0, 1.0), (1.0, 2.0)]
    assert list(classmod.Vec(0)) == []
    assert [repr(p) for p in classmod.Point(1, 2)] == ["Point(2, 1)", "Point(1, 2)"]  # objects of a class


def test_an_iterator_left_unfinished_stops_its_go_sequence():
    v = classmod.Vec.filled(5, 1.0)
    before = classmod.stopped()
    it = iter(v)
    assert next(it) == 1.0
    assert classmod.stopped() == before
    del it
    assert classmod.stopped() == before + 1  # the sequence's defer ran
    for _ in v:
        break
    gc.collect()
    assert classmod.stopped() == before + 2
    assert list(v) and classmod.stopped() == before + 3  # finished: stopped at the end, not when freed


def test_an_iterator_keeps_its_object_alive():
    it = iter(classmod.Vec.filled(2, 7.0))
    gc.collect()
    assert list(it) == [7.0, 7.0]


def test_a_panic_while_iterating_is_a_runtime_error():
    v = classmod.Vec(0)
    for x in (1.0, 13.0, 2.0):
        v.append(x)
    it = iter(v)
    assert next(it) == 1.0
    with pytest.raises(RuntimeError, match="Go panic in Vec.__next__\\(\\): unlucky 13"):
        next(it)
    del it


def test_an_iterator_resumed_on_other_threads():
    import threading

    v = classmod.Vec(0)
    for x in range(6):
        v.append(float(x))
    it = iter(v)
    got = [next(it)]

    def step():
        got.append(next(it))

    for _ in range(4):
        t = threading.Thread(target=step)
        t.start()
        t.join()
    got += list(it)
    assert got == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]


# ---- context manager, call ---------------------------------------------------------------

def test_context_manager_enter_and_exit():
    import contextlib
    from contextlib import AbstractContextManager

    v = classmod.Vec(1)
    assert isinstance(v, AbstractContextManager)
    with v as x:
        assert x is v and v.entered() == 1
    with pytest.raises(KeyError):
        with v:
            raise KeyError("k")  # not suppressed
    with contextlib.ExitStack() as stack:
        assert stack.enter_context(v) is v
    assert v.entered() == 3 and v.exits() == "[false true false]"
    with pytest.raises(TypeError, match=r"takes 3 arguments \(1 given\)"):
        v.__exit__(None)


def test_call():
    from collections.abc import Callable

    v = classmod.Vec.filled(2, 1.5)
    assert callable(v) and isinstance(v, Callable)
    w = v(2.0)
    assert type(w) is classmod.Vec and str(w) == "[3 3]" and str(v) == "[1.5 1.5]"
    with pytest.raises(ValueError, match="^negative scale$"):
        v(-1.0)
    with pytest.raises(RuntimeError, match=r"Go panic in Vec.__call__\(\): scale by NaN"):
        v(float("nan"))
    with pytest.raises(TypeError, match="must be float, not str"):
        v("x")
    assert not callable(classmod.Point(1, 2))


# ---- custom exceptions ---------------------------------------------------------------------

def test_custom_exceptions_and_their_bases():
    import pickle

    assert issubclass(classmod.ParseError, ValueError) and issubclass(classmod.NotFound, KeyError)
    assert classmod.ParseError.__module__ == "classmod" and classmod.ParseError.__name__ == "ParseError"
    assert classmod.ParseError.__doc__ == "Input that does not parse."
    assert classmod.parse("42") == 42
    with pytest.raises(classmod.ParseError) as e:
        classmod.parse("4x")
    assert type(e.value) is classmod.ParseError and str(e.value) == 'cannot parse "4x"'
    assert type(pickle.loads(pickle.dumps(e.value))) is classmod.ParseError
    with pytest.raises(ValueError):  # caught as its base too
        classmod.parse("x")
    with pytest.raises(classmod.NotFound) as e:  # wrapped with %w: errors.As finds it
        classmod.parse("missing")
    assert e.value.args == ("parse: missing not found",)
    with pytest.raises(ValueError) as e:  # no custom type: Def's rules
        classmod.parse("")
    assert type(e.value) is ValueError
    with pytest.raises(IndexError, match="^no such row$"):
        classmod.index_error()


# ---- references and leaks --------------------------------------------------------------------

def test_no_references_leak_through_the_protocols():
    v = classmod.Vec.filled(3, 1.0)
    key = 1
    n_v, n_key = sys.getrefcount(v), sys.getrefcount(key)
    for _ in range(100):
        v[key], v[-1] = v[key], 2.0
        _ = 1.0 in v, "x" in v, v == v, v < v, v != 1, hash(v), len(v), list(v), repr(v), str(v)
        with v:
            pass
        try:
            v[10]
        except IndexError:
            pass
        try:
            classmod.parse("bad")
        except ValueError:
            pass
    assert sys.getrefcount(v) == n_v and sys.getrefcount(key) == n_key


def test_equal_and_hash_by_value_of_a_comparable_go_type():
    from collections.abc import Hashable

    a, b, c = classmod.Key("a", 1, 0.0), classmod.Key("a", 1, -0.0), classmod.Key("a", 2, 0.0)
    assert a == b and not a != b and a != c and a != classmod.Key("b", 1, 0.0)
    assert isinstance(a, Hashable) and hash(a) == hash(b)
    assert len({a, b, c, classmod.Key("a", 2, 0.0)}) == 2 and {a: 1}[b] == 1
    assert a != "a" and a.__eq__(1) is NotImplemented
    nan = classmod.Key("n", 0, float("nan"))
    assert nan != nan  # as Go's == (and Python's float) says


# ---- subclassing from Python ---------------------------------------------------------------

class Labelled(classmod.Vec):
    def __init__(self, n, label):
        super().__init__(n)
        self.label = label

    def total(self):
        return sum(self)


def test_a_python_subclass_holds_the_go_value_made_by_super_init():
    import pickle
    import weakref

    v = Labelled(3, "x")
    assert isinstance(v, classmod.Vec) and type(v) is Labelled and v.label == "x"
    v[0] = 2.0
    v.append(1.0)
    assert len(v) == 4 and v.total() == 3.0 and list(v) == [2.0, 0.0, 0.0, 1.0]
    u = classmod.Vec(0)
    for x in (2.0, 0.0, 0.0, 1.0):
        u.append(x)
    assert classmod.Vec.dot(v, v) == 5.0 and v == u and u == v and hash(v) == hash(u)
    assert v != classmod.Vec(4) and v > classmod.Vec(4) and v < classmod.Vec.filled(4, 3.0)
    assert str(v) == "[2 0 0 1]" and repr(v) == "classmod.Vec(4)"
    with v as same:
        assert same is v
    w = v(2.0)
    assert type(w) is classmod.Vec and str(w) == "[4 0 0 2]"  # a *T result: the Go class's own object
    r = weakref.ref(v)
    v.cycle = v  # through the subclass's __dict__: the collector frees it
    del v, same
    gc.collect()
    assert r() is None
    msg = ("^cannot pickle 'Labelled' object: objects of a Python subclass of the Go class classmod.Vec do not "
           "pickle: define __reduce__ in the subclass")
    with pytest.raises(TypeError, match=msg):
        pickle.dumps(Labelled(1, "y"))
    import copy
    with pytest.raises(TypeError, match=msg):
        copy.copy(Labelled(1, "y"))


class Reduced(classmod.Vec):
    """A subclass that pickles: its own __reduce__."""

    def __reduce__(self):
        return (_rebuild_reduced, (list(self),))


def _rebuild_reduced(values):
    r = Reduced(0)
    for x in values:
        r.append(x)
    return r


def test_a_subclass_with_its_own_reduce_pickles():
    import pickle

    r = Reduced(0)
    r.append(2.5)
    back = pickle.loads(pickle.dumps(r))
    assert type(back) is Reduced and list(back) == [2.5]


def test_a_subclass_without_init_inherits_the_go_one_and_class_methods_make_it():
    class Plain(classmod.Vec):
        pass

    p = Plain(2)
    assert type(p) is Plain and len(p) == 2
    q = Plain.filled(3, v=2.0)
    assert type(q) is Plain and str(q) == "[2 2 2]"
    with pytest.raises(ValueError, match="Vec: n must be >= 0, got -1"):
        Plain(-1)
    with pytest.raises(TypeError, match="missing required argument 'n'"):
        Plain()


def test_a_subclass_whose_init_skips_super_holds_nothing_and_says_so():
    class Forgot(classmod.Vec):
        def __init__(self):
            pass

    f = Forgot()
    with pytest.raises(TypeError, match=r"holds no Go value: its __init__ must call classmod.Vec.__init__"):
        len(f)
    with pytest.raises(TypeError, match="holds no Go value"):
        f.append(1.0)
    with pytest.raises(TypeError, match="holds no Go value"):
        classmod.Vec.dot(f, classmod.Vec(1))
    with pytest.raises(TypeError, match="holds no Go value"):
        f[0]
    classmod.Vec.__init__(f, 2)  # late, but it works
    assert len(f) == 2
    with pytest.raises(TypeError, match="holds its Go value already"):
        classmod.Vec.__init__(f, 3)


def test_classes_are_final_unless_subclassable():
    with pytest.raises(TypeError, match="is not an acceptable base type"):
        class Sub(classmod.Bare):
            pass


def test_protocols_from_many_threads():
    import threading

    v = classmod.Vec.filled(50, 1.0)
    errors = []

    def work():
        try:
            for _ in range(20):
                assert sum(v) == 50.0 and v[-1] == 1.0 and len(v) == 50 and 1.0 in v
                it = iter(v)
                next(it)  # freed unfinished, on this thread
                with v:
                    pass
                assert v == classmod.Vec.filled(50, 1.0)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    its = [iter(v) for _ in range(3)]
    for it in its:
        next(it)
    t = threading.Thread(target=its.clear)  # unfinished iterators freed on another thread
    t.start()
    t.join()
    assert its == []


# ---- pickling functions and methods -----------------------------------------------------------

def test_functions_pickle_by_reference_as_builtins_do():
    import copy
    import math
    import pickle

    f = classmod.sum3
    assert f.__self__ is classmod and f.__module__ == "classmod"
    assert f.__name__ == f.__qualname__ == "sum3" and f.__reduce__() == "sum3"
    assert type(f) is type(math.sqrt) and f.__doc__ == "sum(x)*a + n, typed."
    for proto in range(pickle.HIGHEST_PROTOCOL + 1):
        assert pickle.loads(pickle.dumps(f, proto)) is f
    assert copy.copy(f) is f and copy.deepcopy(f) is f
    assert pickle.loads(pickle.dumps(classmod.add8))(1, 2, 3, 4, 5, 6, 7, 8) == 36
    assert pickle.loads(pickle.dumps(classmod.mix6e))(np.arange(4.0), 1.0, 0, tag="k") == "k:6"


def test_methods_pickle_as_list_append_does():
    import pickle

    V = classmod.Vec
    assert V.append.__qualname__ == "Vec.append" and V.append.__objclass__ is V
    for m in (V.append, V.fill6, V.dot, V.__len__, V.__getitem__, V.__contains__, V.__call__):
        for proto in range(pickle.HIGHEST_PROTOCOL + 1):
            assert pickle.loads(pickle.dumps(m, proto)) is m
    assert pickle.loads(pickle.dumps(V.filled)) == V.filled  # a class method, bound to the class
    assert pickle.loads(pickle.dumps(V.filled))(2, 3.0) == V.filled(2, 3.0)
    v = V.filled(2, 1.5)
    bound = pickle.loads(pickle.dumps(v.append))  # a bound method: the object pickles with it
    bound(7.0)
    assert list(bound.__self__) == [1.5, 1.5, 7.0] and list(v) == [1.5, 1.5]
    assert pickle.loads(pickle.dumps(v.__len__))() == 2 and pickle.loads(pickle.dumps(v))(2.0) == V.filled(2, 3.0)
    with pytest.raises(TypeError, match="cannot pickle 'classmod.Bare' object"):
        pickle.dumps(classmod.Bare().__init__)  # an object that does not pickle: its bound methods neither


def test_a_spawned_process_pool_runs_functions_and_methods():
    import concurrent.futures
    import multiprocessing

    ex = concurrent.futures.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
    try:
        assert ex.submit(classmod.add8, 1, 2, 3, 4, 5, 6, 7, 8).result(timeout=120) == 36
        assert list(ex.map(classmod.Vec.norm2, [3.0, 0.0], [4.0, 0.0], [0.0, 2.0], timeout=60)) == [5.0, 2.0]
        assert ex.submit(classmod.Vec.filled(3, 2.0).__call__, 2.0).result(timeout=60) == classmod.Vec.filled(3, 4.0)
        assert ex.submit(classmod.Vec.filled, 2).result(timeout=60) == classmod.Vec.filled(2, 1.0)
    finally:
        for p in list(getattr(ex, "_processes", {}).values()):
            p.kill()  # nothing left behind, whatever failed
        ex.shutdown(wait=False, cancel_futures=True)


# ---- the module imported again -----------------------------------------------------------------

REIMPORT = r"""
import gc, pickle, sys
import classmod
base = classmod.live_objects()
OldVec, old, oldp = classmod.Vec, classmod.Vec.filled(3, 2.0), classmod.Point(1, 2)
class OldSub(classmod.Vec):
    pass
olds = OldSub(2)
del sys.modules["classmod"]
import classmod as new
assert new.Vec is not OldVec
# the old objects and the old class keep working
assert len(old) == 3 and old[0] == 2.0 and list(old) == [2.0] * 3 and 2.0 in old and old == new.Vec.filled(3, 2.0)
old.append(1.0)
old[0] = 5.0
assert str(old) == "[5 2 2 1]" and len(olds) == 2 and oldp.x == 1 and list(oldp)
o2 = OldVec(2)
assert type(o2) is OldVec and len(o2) == 2 and type(OldVec.filled(1)) is OldVec and type(OldSub(1)) is OldSub
assert new.Vec.dot(old, new.Vec.filled(4, 1.0)) == 10.0 and OldVec.dot(new.Vec(1), old) == 0.0
try:
    o2.__init__(5)
except TypeError as e:
    assert "holds its Go value already" in str(e), e
else:
    raise AssertionError("a second __init__ passed")
# the new module's too
v = new.Vec.filled(2, 1.0)
assert len(v) == 2 and type(v(2.0)) is new.Vec and pickle.loads(pickle.dumps(v)) == v
assert pickle.loads(pickle.dumps(new.sum3)) is new.sum3
del old, olds, oldp, o2, v
gc.collect()
assert new.live_objects() == base, (new.live_objects(), base)
print("ok")
"""


def test_objects_and_class_of_a_module_imported_again_keep_working():
    import subprocess

    r = subprocess.run([sys.executable, "-c", REIMPORT], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout == "ok\n", r.stdout + r.stderr


# ---- __new__ and __init__ called by hand ----------------------------------------------------------

def test_init_after_new_called_by_hand_is_refused():
    V = classmod.Vec
    o = V.__new__(V, 3)  # the constructor ran: o holds its Go value
    assert type(o) is V and len(o) == 3
    with pytest.raises(TypeError, match=r"^Vec.__init__: the classmod.Vec object holds its Go value already"):
        o.__init__(9)
    assert len(o) == 3
    v = V(2)  # Cls(...)'s own __init__ is the no-op
    with pytest.raises(TypeError, match="holds its Go value already"):
        v.__init__(5)
    with pytest.raises(TypeError, match="holds its Go value already"):
        V.__init__(V.__new__(V, 1), 1)
    assert V.__new__.__self__ is V and V.__new__.__qualname__ == "Vec.__new__"
    with pytest.raises(TypeError, match=r"Vec.__new__\(int\): int is not a subtype of classmod.Vec"):
        V.__new__(int)
    with pytest.raises(TypeError, match=r"Vec.__new__\(X\): X is not a type object \(int\)"):
        V.__new__(1)
    with pytest.raises(TypeError, match=r"Vec.__new__\(\): not enough arguments"):
        V.__new__()
    with pytest.raises(TypeError, match="classmod.Bare is not a subtype of classmod.Vec"):
        V.__new__(classmod.Bare)


def test_new_and_init_of_a_subclass_called_by_hand():
    class Sub(classmod.Vec):
        pass

    s = classmod.Vec.__new__(Sub, 3)  # a subclass's object starts empty
    with pytest.raises(TypeError, match="holds no Go value"):
        len(s)
    s.__init__(4)  # its first __init__ makes the value
    assert len(s) == 4
    with pytest.raises(TypeError, match="holds its Go value already"):
        s.__init__(5)

    class WithNew(classmod.Vec):
        def __new__(cls, n, label):
            self = super().__new__(cls, n)
            self.label = label
            return self

        def __init__(self, n, label):
            super().__init__(n)

    w = WithNew(2, "a")
    assert len(w) == 2 and w.label == "a" and type(w) is WithNew
    with pytest.raises(TypeError, match="holds its Go value already"):
        w.__init__(3, "b")


# ---- slices ---------------------------------------------------------------------------------------

BIG = sys.maxsize
STEPS = [1, 2, 5, 6, 7, 100, BIG // 2, BIG - 1, BIG, -1, -2, -5, -6, -7, -100, -BIG // 2, -BIG, -BIG - 1, 2**70, -2**70]
BOUNDS = [None, 0, 1, 3, 5, 6, 7, -1, -6, -7, BIG, -BIG - 1, 2**70, -2**70]


def _vec(values):
    v = classmod.Vec(0)
    for x in values:
        v.append(x)
    return v


@pytest.mark.parametrize("step", STEPS)
def test_slices_with_any_step_are_a_lists(step):
    """Every start and stop with steps up to sys.maxsize (and beyond): the
    items of a list's slice, never a Go panic from an index that overflowed."""
    items = [float(i) for i in range(6)]
    for n in (0, 1, 6):
        for start in BOUNDS:
            for stop in BOUNDS:
                key = slice(start, stop, step)
                want = items[:n]
                v = _vec(want)
                assert list(v[key]) == want[key], key
                del want[key]
                del v[key]
                assert list(v) == want, key
                want, v = items[:n], _vec(items[:n])
                new = [20.0 + x for x in want[key]]  # (13 panics in All)
                want[key] = new
                v[key] = _vec(new)
                assert list(v) == want, key
                # a sequence of another size: a resize for step 1 only, as a list says
                want, v = items[:n], _vec(items[:n])
                try:
                    want[key] = [21.5]
                except ValueError as e:
                    with pytest.raises(ValueError, match=str(e)):
                        v[key] = _vec([21.5])
                else:
                    v[key] = _vec([21.5])
                assert list(v) == want, key


def test_slice_edges():
    v = _vec([0.0, 1.0, 2.0])
    assert list(v[1::BIG]) == [1.0] and list(v[::-BIG - 1]) == [2.0] and list(v[5::BIG]) == []
    assert list(v[BIG::-BIG]) == [2.0] and list(v[-BIG - 1:BIG:BIG]) == [0.0] and list(v[::2**100]) == [0.0]
    # Go gets a step of at most max(len, 2) either way: the same items, no overflow in any loop
    for key, step in ((slice(1, None, BIG), 3), (slice(None, None, -BIG - 1), -3), (slice(None, None, -4), -3),
                      (slice(None, None, -3), -3), (slice(None, None, 2), 2), (slice(None, None, -2), -2)):
        v[key]
        assert classmod.last_step() == step, key
    classmod.Vec(0)[::-BIG]
    assert classmod.last_step() == -2  # never 1 or -1 for a larger step: step 1 is a plain slice (a resize)
    classmod.Vec(1)[::BIG]
    assert classmod.last_step() == 2
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        v[::0]
    with pytest.raises(ValueError, match="attempt to assign sequence of size 2 to extended slice of size 1"):
        v[::BIG] = _vec([1.0, 2.0])
