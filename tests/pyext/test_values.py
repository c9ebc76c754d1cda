"""Python values of Go types in Go extensions (pyext's bytesresult.go): the
test extension tests/pyext/valmod, whose checks (tests/pyext/valmod/check_valmod.py)
this run collects; here, its stub under mypy --strict."""
import pytest
from gomod import mypy_good_and_bad

GOOD = """
    import numpy as np
    import valmod

    b: bytes = valmod.rev(b"abc") + valmod.rev_refl(bytearray(b"x")) + valmod.fill(3, 1) + valmod.blob("s")
    t: tuple[bytes, int] = valmod.split(memoryview(b"ab"))
    m: bytes = valmod.maybe(2)
    ms: tuple[float, float] = valmod.mean_std(np.zeros(1))
    kv: tuple[str, int, bool] = valmod.parse("k=1")
    t2: tuple[bytes, int] = valmod.split_typed(b"ab")
    print(b, t, m, b.hex(), ms, kv, t2)
"""

BAD = """
    import numpy as np
    import valmod

    s: str = valmod.rev(b"abc")
    n: int = valmod.fill(3, 1)
    t: tuple[str, int] = valmod.split(b"ab")
    m: float = valmod.mean_std(np.zeros(1))
    k: tuple[str, int] = valmod.parse("k=1")
"""


def test_the_stub_says_bytes_for_a_byte_slice_result(tmp_path):
    """valmod.pyi (pyext.Module.Stub, written by the build) under mypy --strict:
    a []byte result is bytes (alone, named, in a tuple, beside an error), a
    typed tuple wrapper's results a tuple of their types; taking them as other
    types is an error."""
    pytest.importorskip("mypy")
    bad = mypy_good_and_bad(tmp_path, "valmod", GOOD, BAD)
    for line in (5, 6, 7, 8, 9):
        assert f"bad.py:{line}: error" in bad, bad


ANY_GOOD = """
    from typing import Any
    import valmod

    x: Any = valmod.echo_any({"a": [1, None, b"x", 2.5]})
    n: int = valmod.echo_any(3)
    d0: None = valmod.echo_any_default()
    ls: list[Any] = valmod.echo_list([1, "a"]) + valmod.echo_list((1,)) + valmod.echo_list_refl([])
    d: dict[str, Any] = valmod.echo_dict({"k": {1: 2}})
    k: dict[Any, Any] = valmod.any_keys()
    p: tuple[Any, int] = valmod.pair_any(None)
    v: Any = valmod.go_value("ints")
    print(x, n, d0, ls, d, k, p, v)
"""

ANY_BAD = """
    import valmod

    ls: list[int] = valmod.echo_list({"a": 1})
    d: dict[str, int] = valmod.echo_dict([1])
    s: str = valmod.echo_list([1])
    k: list[int] = valmod.any_keys()
    p: tuple[int, str] = valmod.pair_any(None)
    m: dict[str, int] = valmod.echo_dict({1: 2})
"""


def test_the_stub_says_any_for_a_value_tree(tmp_path):
    """valmod.pyi under mypy --strict: an any parameter or result is Any, []any
    a list (or tuple) of Any, map[string]any dict[str, Any], map[any]any
    dict[Any, Any]; other containers or keys are errors."""
    pytest.importorskip("mypy")
    bad = mypy_good_and_bad(tmp_path, "valmod", ANY_GOOD, ANY_BAD)
    for line in (4, 5, 6, 7, 8, 9):
        assert f"bad.py:{line}: error" in bad, bad
