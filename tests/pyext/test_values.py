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
