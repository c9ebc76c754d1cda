"""The typed wrappers of every arity and the class features of pyext,
against CPython's own protocol checks (collections.abc, operator, weakref,
copy, pickle). Run by tests/test_classes.py in a process of its own, with
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


def test_typed_arguments_are_checked_and_named_like_reflection():
    x = np.arange(4.0)
    for f in (classmod.mix6, classmod.mix6_refl):
        with pytest.raises(TypeError, match=r"argument 5 must be str, not int"):
            f(x, 1.0, 1, True, 5, 0.5)
        with pytest.raises(BufferError, match=r"argument 1: dtype float32, want float64"):
            f(np.zeros(2, np.float32), 1.0, 1, True, "t", 0.5)
        with pytest.raises(TypeError, match=r"takes 6 positional arguments but 5 were given"):
            f(x, 1.0, 1, True, "t")
    with pytest.raises(TypeError, match=r"mix6e\(\) argument 'n' must be int, not str"):
        classmod.mix6e(x, 1.0, n="a")
    with pytest.raises(RuntimeError, match=r"^Go panic in panic3\(\): panic3\(1, 2, 3\)"):
        classmod.panic3(1, 2, 3)
    assert sys.getrefcount(x) == 2
