"""Python values of Go types beyond scalars and arrays (pyext's values.go,
ext_conv.c): complex, int of any size (*big.Int), aware datetime (time.Time),
timedelta (time.Duration), os.PathLike (pyext.Path), bytearray results
(pyext.ByteArray) and None for *T, each on the typed path and through
reflection, against CPython's own types; refusals name the argument; 100k
calls a row keep RSS stable; the stub under mypy --strict. Collected by
pytest (pyproject's python_files), which builds convmod on import."""
import datetime as dt
import os
import pathlib
import struct
import sys

import pytest
from gomod import mypy_good_and_bad

import convmod as m

UTC = dt.timezone.utc
IST = dt.timezone(dt.timedelta(hours=5, minutes=30))


def rss_kib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4


@pytest.mark.parametrize("f", [m.cmul, m.cmul_refl])
def test_complex_both_ways(f):
    assert f(1 + 2j, 3 - 1j) == (1 + 2j) * (3 - 1j)
    r = f(2, 1.5)  # int and float are complex numbers too, as complex() takes them
    assert type(r) is complex and r == 3 + 0j
    big = complex(1e300, -1e-300)
    assert f(big, 1) == big  # complex128 is Python's complex: exact
    with pytest.raises(TypeError, match=r"argument 1 must be complex, not str"):
        f("1+2j", 1)


@pytest.mark.parametrize("f", [m.c64, m.c64_refl])
def test_complex64_rounds_to_float32_parts_and_refuses_beyond_their_range(f):
    x = complex(1 / 3, 0.1)
    want = complex(*struct.unpack("ff", struct.pack("ff", x.real, x.imag)))
    assert f(x) == want != x
    assert f(complex(float("inf"), float("nan"))).real == float("inf")
    with pytest.raises(OverflowError, match=r"argument 1: \(1e\+300\+0j\) out of range for complex64"):
        f(1e300 + 0j)
    with pytest.raises(OverflowError, match="out of range for complex64"):
        f(complex(0, -1e39))


@pytest.mark.parametrize("f", [m.bigmul, m.bigmul_refl])
def test_ints_of_any_size_both_ways(f):
    for a, b in ((3, 4), (-(2**63), 1), (2**63, 1), (2**64 - 1, -1), (3**2000, -(7**900)), (-(10**5000), -(10**5000)),
                 (0, 10**100), (2**62, 2**62)):
        r = f(a, b)
        assert type(r) is int and r == a * b, (a, b)
    class Index:  # __index__ objects are ints, as for an int parameter
        def __index__(self):
            return 2**100
    assert f(Index(), 2) == 2**101
    with pytest.raises(TypeError, match=r"argument (2|'b') must be int, not float"):
        f(1, 2.0)
    with pytest.raises(TypeError, match=r"must be int, not bool"):
        f(True, 1)


def test_an_int_argument_names_itself_and_a_nil_result_is_refused():
    with pytest.raises(TypeError, match=r"bigmul\(\) argument 'b' must be int, not str"):
        m.bigmul(1, b="2")
    with pytest.raises(ValueError, match=r"a nil \*big.Int was returned"):
        m.bignil()


def test_a_huge_int_is_fast():
    """Hex text both ways is linear: a million-bit product in well under a second."""
    import time
    a = 3**400_000  # 634k bits
    t = time.perf_counter()
    assert m.bigmul(a, 1) == a
    assert time.perf_counter() - t < 1.0


@pytest.mark.parametrize("f", [m.twice, m.twice_refl])
def test_a_pointer_takes_none_as_nil_and_a_nil_result_is_none(f):
    assert f(None) is None
    assert f(2.5) == 5.0
    assert f(x=None) is None if f is m.twice else True
    with pytest.raises(TypeError, match=r"argument .* must be float, not str"):
        f("x")


@pytest.mark.parametrize("f", [m.upper, m.upper_refl])
def test_a_string_pointer(f):
    assert f(None) is None and f("é") == "é!"


def test_an_int8_pointer_keeps_its_range_check():
    assert m.small(None) == -1000 and m.small(-128) == -128
    with pytest.raises(OverflowError, match="argument 1: 128 out of range for int8"):
        m.small(128)


@pytest.mark.parametrize("f", [m.longer, m.longer_refl])
def test_a_duration_pointer(f):
    assert f(None) is None
    assert f(dt.timedelta(milliseconds=5)) == dt.timedelta(seconds=1, milliseconds=5)


@pytest.mark.parametrize("f", [m.later, m.later_refl])
def test_an_aware_datetime_both_ways_keeps_its_wall_clock_and_offset(f):
    for t in (dt.datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=IST), dt.datetime(1, 1, 1, tzinfo=UTC),
              dt.datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
              dt.datetime(1969, 7, 20, 20, 17, 40, tzinfo=dt.timezone(-dt.timedelta(hours=4)))):
        r = f(t, dt.timedelta(0))
        assert type(r) is dt.datetime and r == t and r.utcoffset() == t.utcoffset(), t
        assert (r.year, r.month, r.day, r.hour, r.minute, r.second, r.microsecond) == \
            (t.year, t.month, t.day, t.hour, t.minute, t.second, t.microsecond)
    r = f(dt.datetime(2024, 1, 1, tzinfo=UTC), dt.timedelta(days=1, microseconds=-1))
    assert r == dt.datetime(2024, 1, 1, 23, 59, 59, 999999, tzinfo=UTC) and r.tzinfo is UTC


def test_a_datetime_is_the_same_instant_in_go():
    t = dt.datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=IST)
    assert m.unix_nano(t) == (int(t.timestamp()) * 1_000_000 + t.microsecond) * 1000
    assert m.zone_of(t) == 19800
    assert m.between(t, t.astimezone(UTC) + dt.timedelta(hours=1)) == dt.timedelta(hours=1)


def test_a_tzinfo_with_rules_gives_its_offset_at_that_time():
    class Rules(dt.tzinfo):  # +1 h in summer, else 0: utcoffset() decides, as zoneinfo's does
        def utcoffset(self, d):
            return dt.timedelta(hours=1 if 4 <= d.month <= 9 else 0)

        def dst(self, d):
            return dt.timedelta(0)
    assert m.zone_of(dt.datetime(2024, 7, 1, tzinfo=Rules())) == 3600
    assert m.zone_of(dt.datetime(2024, 1, 1, tzinfo=Rules())) == 0


@pytest.mark.parametrize("f", [m.from_unix_nano, m.from_unix_nano_nogil])
def test_a_time_result_drops_nanoseconds_below_a_microsecond(f):
    r = f(1_700_000_000_123_456_789)
    assert r == dt.datetime(2023, 11, 14, 22, 13, 20, 123456, tzinfo=UTC) and r.tzinfo is UTC
    assert f(-1) == dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)  # truncated toward the past


def test_a_time_result_in_a_fixed_zone_keeps_it():
    r = m.in_zone(dt.datetime(2024, 1, 1, tzinfo=UTC), -5400)
    assert r.utcoffset() == dt.timedelta(minutes=-90) and (r.hour, r.minute) == (22, 30)


def test_datetime_refusals_name_the_argument():
    with pytest.raises(TypeError, match=r"later\(\) argument 't' must be an aware datetime .*not a naive one"):
        m.later(dt.datetime(2024, 1, 1), dt.timedelta(0))
    class NoOffset(dt.tzinfo):
        def utcoffset(self, d):
            return None
    with pytest.raises(TypeError, match="argument 't' must be an aware datetime"):
        m.later(dt.datetime(2024, 1, 1, tzinfo=NoOffset()), dt.timedelta(0))
    with pytest.raises(TypeError, match=r"argument 't' must be datetime.datetime, not datetime.date"):
        m.later(dt.date(2024, 1, 1), dt.timedelta(0))
    with pytest.raises(TypeError, match=r"argument 'd' must be datetime.timedelta, not int"):
        m.later(dt.datetime(2024, 1, 1, tzinfo=UTC), 5)
    with pytest.raises(ValueError, match="a UTC offset with microseconds"):
        m.zone_of(dt.datetime(2024, 1, 1, tzinfo=dt.timezone(dt.timedelta(microseconds=1))))
    with pytest.raises(ValueError, match="outside datetime's years 1 to 9999"):
        m.bad_year()


@pytest.mark.parametrize("f", [m.nanos, m.nanos_refl])
def test_timedelta_both_ways(f):
    for d in (dt.timedelta(0), dt.timedelta(days=-1, microseconds=1), dt.timedelta(days=106751, seconds=85636),
              dt.timedelta(microseconds=-1), -dt.timedelta(days=106751, seconds=85636)):
        ns = f(d)
        assert ns == (d // dt.timedelta(microseconds=1)) * 1000
        assert m.dur(ns) == d
    with pytest.raises(OverflowError, match=r"argument 1: datetime.timedelta\(days=106752\) out of range for "
                                            r"time.Duration"):
        f(dt.timedelta(days=106752))
    with pytest.raises(OverflowError, match="out of range for time.Duration"):
        f(dt.timedelta.min)


def test_a_duration_result_drops_nanoseconds_toward_zero():
    assert m.dur(1999) == dt.timedelta(microseconds=1)
    assert m.dur(-1999) == dt.timedelta(microseconds=-1)
    assert m.dur(2**63 - 1) == dt.timedelta(microseconds=(2**63 - 1) // 1000)
    assert m.dur(-(2**63)) == -dt.timedelta(microseconds=2**63 // 1000)


@pytest.mark.parametrize("f", [m.path_bytes, m.path_bytes_refl])
def test_a_path_takes_str_bytes_and_pathlike(f, tmp_path):
    assert f("/tmp/é") == os.fsencode("/tmp/é")
    assert f(b"/a\xff") == b"/a\xff"  # bytes as they are
    assert f("/a\udcff") == b"/a\xff"  # os.fsencode's surrogateescape
    assert f(pathlib.PurePosixPath("/x/y")) == b"/x/y"
    class Bytesy(os.PathLike):
        def __fspath__(self):
            return b"raw"
    assert f(Bytesy()) == b"raw"
    with pytest.raises(TypeError, match=r"argument .* must be str, bytes or os.PathLike, not int"):
        f(3)


def test_a_path_is_the_file_go_opens_and_comes_back_a_str(tmp_path):
    p = tmp_path / "here"
    p.write_text("x")
    assert m.exists(p) and not m.exists(tmp_path / "not-here")
    assert m.path_echo(b"/a\xff") == "/a\udcff" == os.fsdecode(b"/a\xff")
    assert m.path_echo(p) == str(p)
    with pytest.raises(TypeError, match=r"path_bytes\(\) argument 'p' must be str, bytes or os.PathLike, not "
                                        r"NoneType"):
        m.path_bytes(p=None)


@pytest.mark.parametrize("f", [m.scratch, m.scratch_refl, m.scratch_nogil])
def test_a_bytearray_result(f):
    r = f(5)
    assert type(r) is bytearray and r == bytearray(5)
    r[0] = 1  # its own memory
    assert f(0) == bytearray() and type(f(0)) is bytearray


NAIVE = dt.datetime(2024, 1, 1)
AWARE = dt.datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=IST)
HUGE = 3**2000
ROWS = [  # (function, arguments, exception or None): 1 KiB or more a call where a value could leak
    (m.cmul, (1 + 2j, 3j), None), (m.cmul_refl, (1 + 2j, 3j), None), (m.c64, (1e300 + 0j,), OverflowError),
    (m.bigmul, (HUGE, HUGE), None), (m.bigmul_refl, (HUGE, -HUGE), None), (m.bigmul, (HUGE, 1.0), TypeError),
    (m.bignil, (), ValueError),
    (m.twice, (None,), None), (m.twice, (1.0,), None), (m.upper, ("s" * 1024,), None), (m.twice, ("x",), TypeError),
    (m.later, (AWARE, dt.timedelta(days=1)), None), (m.later_refl, (AWARE, dt.timedelta(days=1)), None),
    (m.later, (NAIVE, dt.timedelta(0)), TypeError), (m.nanos, (dt.timedelta(days=10**6),), OverflowError),
    (m.longer, (dt.timedelta(1),), None), (m.bad_year, (), ValueError),
    (m.path_bytes, (pathlib.Path("p" * 1024),), None), (m.path_echo, ("p" * 1024,), None),
    (m.path_echo, (3,), TypeError),
    (m.scratch, (1024,), None), (m.scratch_nogil, (1024,), None), (m.scratch_refl, (1024,), None),
]


@pytest.mark.skipif(bool(os.environ.get("GODLPACK_SANITIZER")), reason="RSS is meaningless under a sanitizer")
def test_100k_calls_a_row_keep_rss_stable():
    """150k calls a row, after a warm-up, in three windows of 50k: a leak grows
    RSS in each (a leaked datetime result, 64 bytes, 3 MiB a window; most rows
    leak 1 KiB a call if any: 50 MiB), while Go's heap growing to its steady
    size shows in one or two at most (seen once in a 3.14 suite's run). Prints the smaller window's growth a row."""
    grown = {}
    for f, args, exc in ROWS:
        def call():
            if exc is None:
                f(*args)
                return
            try:
                f(*args)
            except exc:
                return
            raise AssertionError(f"{f.__name__}{args!r:.60} did not raise {exc.__name__}")
        for _ in range(20_000):
            call()
        windows = []
        for _ in range(3):  # a leak grows every window; the heap's growth or a neighbour's noise, one
            before = rss_kib()
            for _ in range(50_000):
                call()
            windows.append(rss_kib() - before)
        grown[f"{f.__name__}{args!r:.40}"] = min(windows)
    print("RSS growth KiB per 50k calls:", grown, file=sys.stderr)
    assert max(grown.values()) < 2048, grown


GOOD = """
    import datetime as dt
    import pathlib
    import convmod as m

    c: complex = m.cmul(1j, 2) + m.c64(1.5)
    n: int = m.bigmul(2**100, 3)
    x: float | None = m.twice(None)
    s: str | None = m.upper("a")
    d: dt.timedelta | None = m.longer(None)
    t: dt.datetime = m.later(dt.datetime.now(dt.timezone.utc), dt.timedelta(seconds=1))
    ns: int = m.nanos(m.between(t, t))
    p: str = m.path_echo(pathlib.Path("/x")) + m.path_echo(b"/y") + m.path_echo("z")
    b: bytes = m.path_bytes(p=pathlib.Path("/x"))
    a: bytearray = m.scratch(3)
    print(c, n, x, s, d, t, ns, p, b, a)
"""

BAD = """
    import datetime as dt
    import convmod as m

    x: float = m.twice(1.0)
    t: dt.datetime = m.later(1.0, dt.timedelta(0))
    p: str = m.path_echo(3)
    a: bytes = m.scratch(3)
    c: float = m.cmul(1j, 1j)
    n: str = m.bigmul(1, 2)
    d: int = m.nanos(5)
"""


def test_the_stub_under_mypy_strict(tmp_path):
    """convmod.pyi (pyext.Module.Stub): complex, int, float | None, str | None,
    datetime.datetime, datetime.timedelta, str | bytes | os.PathLike for a
    Path, bytearray; taking them as other types is an error."""
    pytest.importorskip("mypy")
    bad = mypy_good_and_bad(tmp_path, "convmod", GOOD, BAD)
    for line in range(5, 12):
        assert f"bad.py:{line}: error" in bad, bad
