"""Python values of Go types in a Go extension (pyext's bytesresult.go, ext.c):
a []byte result is bytes, on the typed and reflection paths, with and without
the GIL. Collected by tests/pyext/test_values.py's run, with valmod on PYTHONPATH."""
import array
import itertools
import math
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


# Python value trees (pyext's anyconv.go, ext_any.c): Go's any, []any and
# map[string]any parameters, and results of those and map[any]any.

ECHO_ANY = [valmod.echo_any, valmod.echo_any_refl, valmod.echo_any_nogil]


@pytest.mark.parametrize("f", [valmod.go_types, valmod.go_types_refl])
def test_an_any_argument_is_plain_go_values(f):
    """Every Python type an any parameter takes, as the Go type Go gets."""
    assert f(None) == "nil"
    assert f(True) == "bool" and f(False) == "bool"
    assert f(7) == "int64" and f(-(2**63)) == "int64" and f(2**63 - 1) == "int64"
    assert f(2**63) == "*big.Int(9223372036854775808)" and f(-(2**100)) == f"*big.Int({-(2**100)})"
    assert f(1.5) == "float64" and f(float("nan")) == "float64"
    assert f(1 + 2j) == "complex128"
    assert f("hé") == "string" and f("") == "string"
    assert f(b"a\0b") == '[]byte("a\\x00b")' and f(bytearray(b"x")) == '[]byte("x")' and f(b"") == '[]byte("")'
    assert f([1, "a"]) == "[]any{int64,string}" and f((1.0, None)) == "[]any{float64,nil}" and f([]) == "[]any{}"
    assert f({"a": 1, "b": [True]}) == "map[string]any{a:int64,b:[]any{bool}}" and f({}) == "map[string]any{}"
    assert f({1: "x", None: 2, 2.5: 3, False: 4, b"k": 5, "s": 6}) == (  # a bytes key is a string
        "map[any]any{bool=false:int64,float64=2.5:int64,int64=1:string,nil=<nil>:int64,string=k:int64,string=s:int64}")


@pytest.mark.parametrize("f", ECHO_ANY)
def test_a_tree_goes_to_go_and_back_equal(f):
    """A nested structure of every kind comes back equal: tuples as lists,
    bytearrays as bytes, every dict a dict."""
    tree = {"none": None, "t": True, "i": -3, "big": 10**40, "nbig": -(2**64), "f": 0.25, "c": 1j, "s": "naïve ☃",
            "b": b"\x00\xff", "l": [1, [2, [3, {"deep": (4, 5)}]]], "d": {1: {None: [b"x", {}]}}, "e": [], "ed": {}}
    back = f(tree)
    assert back == {**tree, "l": [1, [2, [3, {"deep": [4, 5]}]]]}
    assert type(back["big"]) is int and type(back["b"]) is bytes and type(back["l"][1]) is list
    assert f(bytearray(b"ab")) == b"ab" and type(f(bytearray(b"ab"))) is bytes
    assert f((1, (2,))) == [1, [2]]
    assert f(None) is None and f(True) is True and f(False) is False
    assert math.isnan(f(float("nan"))) and f(float("-inf")) == float("-inf")


def test_an_argument_is_copied_for_go_a_mutated_one_is_seen_as_it_was():
    """Go gets copies: changing the objects after the call changes nothing Go returned."""
    b = bytearray(b"abc")
    tree = [b, {"k": b}]
    back = valmod.echo_any(tree)
    b[0] = ord("z")
    assert back == [b"abc", {"k": b"abc"}]


def test_list_and_dict_parameters():
    for _ in range(100):  # C marks None only for any: a []any argument after a None one is still a list
        assert valmod.echo_any(None) is None and valmod.echo_list([1]) == [1] and valmod.echo_dict({}) == {}
    for f in (valmod.echo_list, valmod.echo_list_refl):
        assert f([1, "a", None]) == [1, "a", None] and f((1, 2)) == [1, 2] and f([]) == []
        with pytest.raises(TypeError, match=r"argument (1|'xs') must be list or tuple, not dict"):
            f({})
    for f in (valmod.echo_dict, valmod.echo_dict_refl):
        assert f({"a": [1, {2: 3}]}) == {"a": [1, {2: 3}]} and f({}) == {}
        with pytest.raises(TypeError, match=r"argument (1|'m') must be dict, not list"):
            f([1])
        with pytest.raises(TypeError, match=r"argument (1|'m') key 1: a key of type int, where the parameter "
                                            r"\(map\[string\]any\) takes str keys"):
            f({"a": 1, 1: 2})


def test_none_is_nil_and_a_default():
    assert valmod.echo_any_default() is None and valmod.echo_any_default([1]) == [1]
    assert valmod.echo_any(obj={"k": 1}) == {"k": 1}


@pytest.mark.parametrize("f", [valmod.go_value, valmod.go_value_refl])
def test_an_any_result_is_python_values(f):
    """Every Go type an any result takes: every int and uint kind an int,
    float32/64 a float, named strings and []byte str and bytes, *big.Int an
    int (nil: None), any slice or array a list, any map of scalar keys a
    dict (sorted), complex a complex."""
    assert f("nil") is None
    assert f("ints") == [-8, -16, -32, -(2**63), -1, 255, 65535, 2**31, 2**64 - 1, 7, 9]
    assert f("floats") == [1.5, float("-inf"), 0.1] and all(type(x) is float for x in f("floats"))
    assert f("complex") == [1 + 2j, 3 - 4j]
    assert f("strings") == ["héllo", "named", ""]
    assert f("bytes") == [b"a\0b", b"raw", b""] and all(type(x) is bytes for x in f("bytes"))
    assert f("big") == [-123456789012345678901234567890, 5, None]
    assert f("slices") == [[1, 2], ["x", "y"], [0.5], [b"\x01"]]
    maps = f("maps")
    assert maps == {"ints": {1: "a", 2: "b"}, "mixed": {None: 0, True: 1, -1: 4, 2.5: 2, "s": 3}}
    assert list(maps["mixed"]) == [None, True, -1, 2.5, "s"]  # by kind, then value
    assert f("nested") == {"a": [1, {"b": [None, True, "c"]}]}


def test_nan_keys_keep_their_values():
    """A NaN key is no key a Go map lookup finds: each pair is kept, both ways."""
    r = valmod.echo_any({math.nan: 1, "a": 2})
    assert len(r) == 2 and r["a"] == 2 and [v for k, v in r.items() if k != "a"] == [1]
    assert math.isnan(next(k for k in r if k != "a"))
    r = valmod.nan_keys()
    assert sorted(r.values()) == [1, 2, 3] and r[0.5] == 3


def test_other_result_types_and_tuples():
    assert valmod.any_keys() == {None: [], False: 0.5, 2: "two", "s": 1}
    assert valmod.list_of(3) == [[[]]]
    for f in (valmod.pair_any, valmod.pair_any_refl):
        assert f([1, {"a": None}]) == ([1, {"a": None}], len("[]any{int64,map[string]any{a:nil}}"))


@pytest.mark.parametrize("f", [valmod.go_value, valmod.go_value_refl])
def test_a_result_with_no_python_value_is_refused_naming_the_result_and_path(f):
    n = f.__name__
    cases = {
        "struct": (TypeError, "result 1: unsupported type struct { X int }"),
        "func": (TypeError, "result 1: unsupported type func()"),
        "chan": (TypeError, "result 1: unsupported type chan int"),
        "pointer": (TypeError, "result 1 item 0: unsupported type *int"),
        "deep": (TypeError, 'result 1 key "a" item 2 key "x": unsupported type struct {}'),
        "badvalue": (TypeError, "result 1 key 3 item 2: unsupported type func()"),
        "badutf8": (ValueError, 'result 1 item 1 key "k": a Go string that is not UTF-8 (return []byte for bytes)'),
        "badkey": (TypeError, 'result 1 key "m" key [1 2]: a key of type [2]int has no Python value that a dict takes'),
        "dupkeys": (ValueError, "result 1 key 1: the same Python dict key as another key of the map"),
        "dupbool": (ValueError, "result 1 key 1: the same Python dict key as another key of the map"),
        "self": (ValueError, "result 1: nested deeper than 512 slices and maps (does one contain itself?)"),
    }
    for which, (exc, msg) in cases.items():
        with pytest.raises(exc) as e:
            f(which)
        assert str(e.value) == f"{n}() {msg}", which
    with pytest.raises(KeyError):
        f("no such value")  # (any, error): the error raised


def test_a_result_nested_at_the_limit_is_made_one_deeper_is_refused():
    x = valmod.list_of(512)
    for _ in range(511):
        x = x[0]
    assert x == []
    with pytest.raises(ValueError, match=r"^list_of\(\) result 1: nested deeper than 512 slices and maps"):
        valmod.list_of(513)


def nested(depth):
    x = []
    for _ in range(depth - 1):
        x = [x]
    return x


@pytest.mark.parametrize("f", ECHO_ANY)
def test_an_argument_nested_at_the_limit_is_taken_one_deeper_and_a_cycle_refused(f):
    assert f(nested(512)) == nested(512)
    name = "argument 1" if f is valmod.echo_any_refl else "argument 'obj'"
    msg = f"{f.__name__}() {name}: nested deeper than 512 lists and dicts (does a container contain itself?)"
    for bad in (nested(513), [{"a": nested(512)}]):
        with pytest.raises(ValueError) as e:
            f(bad)
        assert str(e.value) == msg
    cycle = []
    cycle.append(cycle)
    d = {}
    d["d"] = d
    for bad in (cycle, d, [1, cycle]):
        with pytest.raises(ValueError) as e:
            f(bad)
        assert str(e.value) == msg


@pytest.mark.parametrize("f", ECHO_ANY)
def test_an_argument_with_no_go_value_is_refused_naming_the_argument_and_path(f):
    """Refused: what has no plain Go value (a set, an object, a NumPy array
    or scalar), a key that cannot be a Go map key, and keys Go would take
    as one."""
    name = "argument 1" if f is valmod.echo_any_refl else "argument 'obj'"
    cases = [
        ({1, 2}, TypeError, ": unsupported type set"),
        ([0, 1, 2, {"x": {3}}], TypeError, " item 3 key 'x': unsupported type set"),
        ({"a": [object()]}, TypeError, " key 'a' item 0: unsupported type object"),
        (np.zeros(2), TypeError, ": unsupported type numpy.ndarray"),
        ([np.int64(1)], TypeError, " item 0: unsupported type numpy.int64"),
        ({(1, 2): 3}, TypeError, " key (1, 2): a key of type tuple cannot be a Go map key "
                                 "(None, bool, int, float, str or bytes can)"),
        ({2**70: 1}, TypeError, f" key {2**70}: an int key beyond int64 cannot be a Go map key"),
        ({"a": 1, b"a": 2}, ValueError, " key b'a': the same Go map key (a string) as the key 'a'"),
        (["\ud800"], ValueError, " item 0: a str that is not valid Unicode (a lone surrogate) has no UTF-8 for Go"),
    ]
    for obj, exc, tail in cases:
        with pytest.raises(exc) as e:
            f(obj)
        assert str(e.value) == f"{f.__name__}() {name}{tail}", obj
    assert f({b"k": 1, 2: 3}) == {"k": 1, 2: 3}  # a bytes key is a Go string: it comes back a str


@pytest.mark.skipif(bool(os.environ.get("GODLPACK_SANITIZER")), reason="RSS is meaningless under a sanitizer")
@pytest.mark.parametrize("f", [valmod.echo_any, valmod.echo_any_refl, valmod.echo_any_nogil])
def test_100k_tree_round_trips_keep_rss_stable(f):
    """A tree of about 1 KiB of nodes and text each way: a leaked argument
    or result block would be 20 MiB a window."""
    tree = {"k%d" % i: [i, str(i) * 8, b"x" * 8, {"f": i / 3, "n": None}] for i in range(8)}
    assert f(tree) == {k: [v[0], v[1], v[2], v[3]] for k, v in tree.items()}
    assert growth_kib(lambda: f(tree), n=20_000) < 8192, "a leak of any trees"
