"""Python values of Go types in a Go extension (pyext's bytesresult.go, ext.c):
a []byte result is bytes, on the typed and reflection paths, with and without
the GIL. Collected by tests/pyext/test_values.py's run, with valmod on PYTHONPATH."""
import array
import os

import numpy as np
import pytest

import valmod


def rss_kib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4


@pytest.mark.parametrize("f", [valmod.rev, valmod.rev_refl])
def test_a_byte_slice_result_is_bytes(f):
    for arg in (b"abc", bytearray(b"abc"), memoryview(b"abc"), array.array("B", b"abc"), np.frombuffer(b"abc", np.uint8)):
        r = f(arg)
        assert type(r) is bytes and r == b"cba"


@pytest.mark.parametrize("f", [valmod.fill, valmod.fill_nogil, valmod.fill_refl_nogil])
def test_bytes_with_and_without_the_gil(f):
    """With the GIL Go makes the bytes object; without it C does from Go's copy."""
    assert f(5, 7) == b"\x07" * 5
    assert f(0, 7) == b""
    assert type(f(1 << 20, 255)) is bytes and f(1 << 20, 255) == b"\xff" * (1 << 20)


def test_a_named_byte_slice_an_empty_one_and_a_nil_one_are_bytes():
    assert valmod.blob("hé") == "hé".encode()
    assert valmod.none() == b"" and type(valmod.none()) is bytes


def test_bytes_in_a_tuple_and_beside_an_error():
    assert valmod.split(b"abcd") == (b"ab", 4)
    for f in (valmod.maybe, valmod.maybe_refl):
        assert f(3) == b"\0\0\0"
        with pytest.raises(ValueError, match="maybe: n < 0"):
            f(-1)


@pytest.mark.parametrize("f", [valmod.bad_text, valmod.bad_text_refl])
def test_a_string_result_stays_str_and_refuses_bytes_that_are_not_utf8(f):
    with pytest.raises(UnicodeDecodeError) as e:
        f()
    assert f.__name__ + "()" in str(e.value) + "".join(getattr(e.value, "__notes__", []))


def test_several_results_are_a_tuple_on_the_typed_path():
    m, sd = valmod.mean_std(np.array([1.0, 3.0]))
    assert (m, sd) == (2.0, 1.0)
    assert valmod.split_typed(b"abcd") == (b"ab", 4) == valmod.split(b"abcd")
    assert valmod.parse("k=3") == ("k", 3, True)


def test_a_tuple_with_an_error_raises_it():
    with pytest.raises(TypeError, match="no '=' in"):
        valmod.parse("k")
    with pytest.raises(ValueError, match="invalid syntax"):
        valmod.parse("k=x")


def test_a_tuple_whose_second_result_fails_frees_the_first():
    """Made in C (a str not UTF-8) or refused in Go (an aliasing slice), the
    second result's failure frees the first, a bytes object: 100 MiB if not."""
    with pytest.raises(UnicodeDecodeError) as e:
        valmod.bad_second(1)
    assert "bad_second() result 2" in "".join(e.value.__notes__)
    xs = np.zeros(4)
    for f, exc, arg in ((valmod.bad_second, UnicodeDecodeError, 1024), (valmod.bytes_then_alias, ValueError, xs)):
        for _ in range(100_000):
            with pytest.raises(exc):
                f(arg)
        before = rss_kib()
        for _ in range(100_000):
            with pytest.raises(exc):
                f(arg)
        assert rss_kib() - before < 8192, f"a leak of {f.__name__}'s first result"


def test_a_returned_argument_is_copied_not_aliased():
    src = bytearray(b"xyz")
    out = valmod.echo(src)
    src[0] = ord("q")
    assert out == b"xyz"


@pytest.mark.skipif(bool(os.environ.get("GODLPACK_SANITIZER")), reason="RSS is meaningless under a sanitizer")
@pytest.mark.parametrize("f", [valmod.rev, valmod.rev_refl, valmod.fill_nogil, valmod.split, valmod.maybe,
                               valmod.split_typed])
def test_100k_bytes_results_keep_rss_stable(f):
    args = {valmod.fill_nogil: (1024, 1), valmod.maybe: (1024,)}.get(f, (b"x" * 1024,))
    """A leaked result (1 KiB a call) would be 100 MiB; Go's heap settles in the warm-up."""
    for _ in range(100_000):
        f(*args)
    before = rss_kib()
    for _ in range(100_000):
        f(*args)
    assert rss_kib() - before < 8192, "a leak of bytes results"
