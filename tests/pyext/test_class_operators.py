"""Operators (NotImplemented, reflected, in place), slices and the buffer
protocol of pyext classes: the test extension tests/pyext/opmod, whose checks
(tests/pyext/opmod/check_opmod.py) this run collects; here, that it stands
alone, its stub under mypy and the docs' example."""
import pytest
from gomod import doc_example, mypy_good_and_bad, stands_alone


def test_opmod_imports_without_godlpack():
    stands_alone("opmod")


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


@pytest.mark.one_python
def test_the_docs_example_builds_and_its_session_holds(tmp_path):
    """docs/operators.md's example, as written, built and doctested."""
    out = doc_example(tmp_path, "operators.md", "vecops")
    assert int(out.split()[-3]) >= 9, out
