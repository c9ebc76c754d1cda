"""Operators (NotImplemented, reflected, in place), slices and the buffer
protocol of pyext classes: tests/opmod, built and checked in a process of
its own, and its stub under mypy."""
import pytest
from gomod import build_and_check, doc_example, mypy_good_and_bad


def test_operators_slices_and_buffers_in_a_go_extension(tmp_path):
    out = build_and_check(tmp_path, "opmod")
    assert "skipped" not in out, out


GOOD = """
    import numpy as np
    import opmod

    a = opmod.Arr.of(np.arange(3.0))
    b: opmod.Arr = a + a
    c: opmod.Arr = 2.0 * a - 1.0
    d: float = a @ b
    e: opmod.Arr = a[1:]
    f: float = a[0]
    a += b
    a *= 3
    a[::2] = np.zeros(2)
    del a[0]
    m = memoryview(opmod.Mat(2, 2))
    n: opmod.Arr = -a
"""

BAD = """
    import opmod

    a = opmod.Arr(3)
    s: str = a[0]
    t: float = a[1:]
    u = a + 1.0
"""


def test_the_stub_types_operators_and_slices(tmp_path):
    pytest.importorskip("mypy")  # in make test's venv; the NumPy-only runs of other Pythons lack it
    bad = mypy_good_and_bad(tmp_path, "opmod", GOOD, BAD)
    for line in (5, 6, 7):
        assert f"bad.py:{line}: error" in bad, bad


def test_the_docs_example_builds_and_its_session_holds(tmp_path):
    """docs/operators.md's example, as written, built and doctested."""
    out = doc_example(tmp_path, "operators.md", "vecops")
    assert int(out.split()[-3]) >= 9, out
