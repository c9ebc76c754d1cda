"""Class features of Go extensions (pyext.Class: weak references, repr and
str, static and class methods, comparison and hashing, the sequence and
iterator protocols, context managers, calls, custom exceptions) and the
typed wrappers of every arity: the test extension tests/pyext/classmod,
whose checks (tests/pyext/classmod/check_classmod.py) this run collects; here,
that it stands alone, and its stub under mypy."""
import pytest
from gomod import mypy_good_and_bad, stands_alone


def test_classmod_imports_without_godlpack():
    stands_alone("classmod")


GOOD = """
    import weakref
    import numpy as np
    import classmod

    v = classmod.Vec.filled(3, v=2.0)
    w: classmod.Vec = v(2.0)
    n: int = len(v)
    x: float = v[-1] + classmod.Vec.dot(v, w) + classmod.Vec.norm2(1.0, 2.0, 2.0)
    v[0] = 1.0
    del v[0]
    found: bool = 2.0 in v and v < w and v == w and hash(v) > 0
    total: float = sum(y for y in v)
    with v as same:
        same.append(1.0)
    points: list[classmod.Point] = list(classmod.Point(1, 2))
    r = weakref.ref(v)
    try:
        classmod.parse("x")
    except classmod.ParseError as e:
        err: ValueError = e
    print(n, x, found, total, points, r, classmod.mix6(np.zeros(2), 1.0, 2, False, "t", 0.5))
"""

BAD = """
    import classmod

    v = classmod.Vec(3)
    s: str = v[0]
    v["a"] = 1.0
    p = classmod.Point(1, 2)
    b: bool = v < p
"""


def test_the_stub_types_the_protocols(tmp_path):
    """classmod.pyi (pyext.Module.Stub, written by the build) under mypy --strict: protocols used right
    pass, and a wrong item type, and a str index
    and an ordering against another class are errors."""
    pytest.importorskip("mypy")
    bad = mypy_good_and_bad(tmp_path, "classmod", GOOD, BAD)
    for line in (5, 6, 8):
        assert f"bad.py:{line}: error" in bad, bad
