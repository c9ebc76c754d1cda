"""Python callables as Go func parameters and list/dict containers in Go
extensions (pyext's callback.go, containers.go, ext_pyobj.c): the test
extension tests/pyext/cbmod, whose checks (tests/pyext/cbmod/check_cbmod.py)
this run collects; here, that it stands alone, its stub and the docs' example."""
import pytest
from gomod import doc_example, mypy_good_and_bad, stands_alone


def test_cbmod_imports_without_godlpack():
    stands_alone("cbmod")


GOOD = """
    import array
    import numpy as np
    import cbmod

    def twice(x: float) -> float:
        return 2 * x

    from_buffer: float = cbmod.apply(array.array("d", [1.0]), twice) + cbmod.apply(memoryview(b""), twice)

    total: float = cbmod.apply(np.zeros(3), twice) + cbmod.apply(f=lambda x: x, xs=np.zeros(2))
    ok: bool = cbmod.check(lambda s, n: s == "a" and n == 1)
    words: list[str] = cbmod.words("a b")
    joined: str = cbmod.join(words, "-") + cbmod.join(("x", "y"), "")
    counts: dict[str, int] = cbmod.counts(words)
    scaled: dict[str, float] = cbmod.scale({"a": 1.0}, 2.0)
    c = cbmod.Counter(3)
    n: int = c.visit(lambda x: cbmod.Counter(x.value())) + c.each(lambda i: i < 1)
    cs: list[cbmod.Counter] = cbmod.counters3(2)
    print(total, ok, joined, counts, scaled, n, cs)
"""

BAD = """
    import numpy as np
    import cbmod

    def shout(s: str) -> str:
        return s.upper()

    cbmod.apply(np.zeros(3), shout)
    cbmod.join("ab", "-")
    w: list[int] = cbmod.words("a b")
    cbmod.scale({"a": "x"}, 2.0)
    cbmod.apply(np.zeros(3), 3)
"""


def test_the_stub_types_callables_and_containers(tmp_path):
    """cbmod.pyi (pyext.Module.Stub, written by the build) under mypy --strict: Callable[[float], float],
    list[str] and dict[str, T] used right pass; a callable of the wrong type,
    a str for a list, a list of the wrong item type, a wrong dict value type
    and a non-callable are errors."""
    pytest.importorskip("mypy")
    bad = mypy_good_and_bad(tmp_path, "cbmod", GOOD, BAD)
    for line in (8, 9, 10, 11, 12):
        assert f"bad.py:{line}: error" in bad, bad


@pytest.mark.one_python
def test_the_docs_example_builds_and_its_session_holds(tmp_path):
    """docs/callbacks.md's example, as written, built and doctested."""
    out = doc_example(tmp_path, "callbacks.md", "cbdemo")
    assert int(out.split()[-3]) >= 8, out
