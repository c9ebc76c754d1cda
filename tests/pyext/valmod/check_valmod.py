"""Python values of Go types in a Go extension (pyext's bytesresult.go, ext.c):
a []byte result is bytes, on the typed and reflection paths, with and without
the GIL. Collected by tests/pyext/test_values.py's run, with valmod on PYTHONPATH."""
import array
import itertools
import os

import numpy as np
import pytest

import valmod


def rss_kib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4


def growth_kib(call, n=50_000):
    """RSS growth over n calls after 2n of warm-up, the least of three
    windows: a leak grows every window (1 KiB a call: 50 MiB), while the
    other extensions' Go runtimes in this process (every check file runs in
    it) may grow their heaps during one."""
    for _ in range(2 * n):
        call()
    windows = []
    for _ in range(3):
        before = rss_kib()
        for _ in range(n):
            call()
        windows.append(rss_kib() - before)
    return min(windows)


@pytest.mark.parametrize("f", [valmod.rev, valmod.rev_refl])
def test_a_byte_slice_result_is_bytes(f):
    for arg in (b"abc", bytearray(b"abc"), memoryview(b"abc"), array.array("B", b"abc"), np.frombuffer(b"abc", np.uint8)):
        r = f(arg)
        assert type(r) is bytes and r == b"cba"


@pytest.mark.parametrize("f", [valmod.fill, valmod.fill_nogil, valmod.fill_refl_nogil])
def test_bytes_with_and_without_the_gil(f):
    """With the GIL Go makes the bytes object from its memory (one copy);
    without it C does from Go's malloc'd copy."""
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
        def call():
            with pytest.raises(exc):
                f(arg)
        assert growth_kib(call) < 8192, f"a leak of {f.__name__}'s first result"


def test_a_returned_argument_is_copied_not_aliased():
    src = bytearray(b"xyz")
    out = valmod.echo(src)
    src[0] = ord("q")
    assert out == b"xyz"


@pytest.mark.skipif(bool(os.environ.get("GODLPACK_SANITIZER")), reason="RSS is meaningless under a sanitizer")
@pytest.mark.parametrize("f", [valmod.rev, valmod.rev_refl, valmod.fill_nogil, valmod.split, valmod.maybe,
                               valmod.split_typed])
def test_100k_bytes_results_keep_rss_stable(f):
    """A leaked result (1 KiB a call) would be 50 MiB a window; Go's heap settles in the warm-up."""
    args = {valmod.fill_nogil: (1024, 1), valmod.maybe: (1024,)}.get(f, (b"x" * 1024,))
    assert growth_kib(lambda: f(*args)) < 8192, "a leak of bytes results"


@pytest.mark.parametrize("f", [valmod.fill, valmod.fill_nogil, valmod.fill_refl_nogil])
def test_bytes_of_a_size_seen_before_and_of_a_new_one_are_each_right(f):
    """After two results of one size C makes the next call's bytes object
    at that size before Go runs (ext.c's bytes_ahead); a result of another
    size is made as before. Each is the function's own result."""
    for i, n in enumerate([4, 4, 4, 4, 5, 5, 3, 3, 3, 0, 0, 0, 1024, 1024, 1024, 7, 1024, 1024, 1 << 20, 1 << 20, 1 << 20]):
        r = f(n, i)
        assert type(r) is bytes and r == bytes([i]) * n, (i, n)


@pytest.mark.skipif(bool(os.environ.get("GODLPACK_SANITIZER")), reason="RSS is meaningless under a sanitizer")
def test_a_bytes_object_made_ahead_and_left_unused_is_freed():
    """The object made ahead, left when the size changes or the call raises:
    64 KiB a call (300 MiB a window) if it stayed."""
    big = 1 << 16
    def other_size():
        valmod.fill(big, 1), valmod.fill(big, 2), valmod.fill(big + 1, 3)
    def raises():
        valmod.maybe(big), valmod.maybe(big)
        with pytest.raises(ValueError):
            valmod.maybe(-1)
    for call in (other_size, raises):
        assert growth_kib(call, n=5_000) < 8192, f"{call.__name__}: a leak of the object made ahead"


@pytest.mark.skipif(bool(os.environ.get("GODLPACK_SANITIZER")), reason="RSS is meaningless under a sanitizer")
@pytest.mark.parametrize("f", [valmod.fill_nogil, valmod.fill_refl_nogil])
def test_bytes_of_changing_sizes_without_the_gil_keep_rss_stable(f):
    """No result the size of the one before: no object made ahead, so C
    makes each from Go's malloc'd copy, which it frees (50 MiB a window if not)."""
    sizes = itertools.cycle([1024, 1025, 1026])
    assert growth_kib(lambda: f(next(sizes), 1)) < 8192, "a leak of Go's copies"


class Sub(bytes):
    """A bytes subclass: the general buffer path takes it, not bytes' own."""


@pytest.mark.parametrize("f", [valmod.length, valmod.length_refl, valmod.length_nogil, valmod.blob_len])
def test_bytes_and_bytearray_into_a_byte_slice(f):
    """Exact bytes and bytearray are read in place (ext.c's bytes_arg); the
    rest through the buffer protocol or DLPack, alike."""
    for arg in (b"abc", bytearray(b"abc"), Sub(b"abc"), memoryview(b"abc"), array.array("B", b"abc"),
                np.frombuffer(b"abc", np.uint8)):
        assert f(arg) == 3, type(arg)
    for arg in (b"", bytearray(), Sub(), memoryview(b"")):
        assert f(arg) == 0, type(arg)
    assert f(b"\0" * (1 << 20)) == 1 << 20


@pytest.mark.parametrize("f", [valmod.rev, valmod.rev_refl])
def test_bytes_arguments_are_read_in_place_not_copied_wrong(f):
    data = bytes(range(256)) * 4
    for arg in (data, bytearray(data), Sub(data)):
        assert f(arg) == data[::-1]


@pytest.mark.parametrize("f", [valmod.upcase, valmod.upcase_refl])
def test_a_written_byte_slice_refuses_bytes_and_writes_a_bytearray(f):
    for arg in (b"abc", Sub(b"abc"), b""):
        with pytest.raises(BufferError, match=rf"^{f.__name__}\(\) argument 'b' is read-only, and {f.__name__} may "
                           "write to it$"):
            f(arg)
    ba = bytearray(b"abc")
    f(ba)
    assert ba == b"ABC"
    with pytest.raises(BufferError, match="argument 'b'"):
        f(memoryview(b"abc"))


def test_a_bytearray_cannot_resize_while_go_reads_it():
    """Held through its buffer for the call, as the general path holds it."""
    ba = bytearray(b"\x01" * 100)
    errors = []

    def grow():
        try:
            ba.extend(b"\x01" * 1_000_000)
        except BufferError as e:
            errors.append(e)
    assert valmod.sum_during(ba, grow) == 100
    assert len(errors) == 1 and len(ba) == 100
    ba.extend(b"\x01")  # released after the call
    assert len(ba) == 101


def test_two_bytes_results_and_results_of_every_size():
    data = bytes(range(256)) * 300  # 75 KiB
    for n in (0, 1, 1024, 64 << 10, (64 << 10) + 1, len(data)):
        a, b = valmod.halves(data[:n])
        assert (a, b) == (data[:n // 2], data[n // 2:n]) and type(a) is bytes and type(b) is bytes
    for n in (64 << 10, (64 << 10) + 1):
        assert valmod.fill(n, 3) == b"\x03" * n


def test_bytes_results_survive_go_collecting_garbage_meanwhile():
    """With Go's GC and allocation running beside the calls, every bytes
    result is what Go made."""
    valmod.gc_storm(True)
    try:
        for i in range(50_000):
            c = i % 200
            r = valmod.fill(1024, c)
            assert r == bytes([c]) * 1024, (i, r[:8])
            a, b = valmod.halves(r)
            assert a == b == bytes([c]) * 512
    finally:
        valmod.gc_storm(False)


@pytest.mark.skipif(bool(os.environ.get("GODLPACK_SANITIZER")), reason="RSS is meaningless under a sanitizer")
@pytest.mark.parametrize("f, arg", [(valmod.length, b"x" * 1024), (valmod.length, bytearray(1024)),
                                    (valmod.length_refl, b"x" * 1024), (valmod.halves, b"x" * 1024),
                                    (valmod.upcase, bytearray(1024))])
def test_100k_bytes_arguments_keep_rss_stable(f, arg):
    """A leaked reference or buffer a call would keep 1 KiB alive: 100 MiB."""
    assert growth_kib(lambda: f(arg)) < 8192, "a leak of bytes arguments"


def test_a_leaked_bytearray_export_would_refuse_resizing():
    ba = bytearray(16)
    for f in (valmod.length, valmod.length_refl, valmod.upcase):
        f(ba)
        ba.append(0)  # BufferError if the call kept an export
        del ba[-1]
