"""A module declared once with //pyext: directives (pyext/pyextgen): the
Python names, signatures, keyword-only and positional-only parameters,
read-only arrays unless declared written, several results, a class with its
constructor, methods, properties, protocols and a static method, all on the
compiled path, and the stub. Collected by the outer pytest run."""
import array
import inspect
import os
import subprocess
import sys

import numpy as np
import pytest

import declmod


def test_names_signatures_and_docstrings_come_from_the_go_source():
    assert str(inspect.signature(declmod.scale)) == "(x, /, a=2.0, *, twice=False)"
    assert declmod.scale.__doc__ == "Multiply x by a, in place; with twice, by 2a."
    assert str(inspect.signature(declmod.mean_range)) == "(x)"  # Go's name, snake-cased; Go's parameter name
    assert str(inspect.signature(declmod.dtype_of)) == "(t)"
    assert str(inspect.signature(declmod.Bag)) == "(label='', *, size=0)"
    assert declmod.Bag.__doc__ == "A bag of float64 values."
    assert declmod.Bag.extend.__doc__ == "Appends the values of x."


def test_positional_only_and_keyword_only_parameters():
    x = np.ones(2)
    declmod.scale(x, 3.0)
    declmod.scale(x, a=0.5, twice=True)
    assert x.tolist() == [3.0, 3.0]
    with pytest.raises(TypeError, match=r"^scale\(\) got some positional-only arguments passed as keyword arguments: 'x'"):
        declmod.scale(x=x)
    with pytest.raises(TypeError, match=r"^scale\(\) takes at most 2 positional arguments \(3 given\)"):
        declmod.scale(x, 1.0, True)
    with pytest.raises(TypeError, match=r"^scale\(\) got an unexpected keyword argument 'y'"):
        declmod.scale(x, y=1.0)
    assert x.tolist() == [3.0, 3.0]
    b = declmod.Bag("b", size=2)
    assert len(b) == 2 and b.label == "b"
    with pytest.raises(TypeError, match=r"takes at most 1 positional argument \(2 given\)"):
        declmod.Bag("b", 2)
    with pytest.raises(ValueError, match="size < 0"):
        declmod.Bag(size=-1)


def test_arrays_are_read_only_unless_declared_written():
    ro = np.arange(3.0)
    ro.setflags(write=False)
    assert declmod.total(ro) == 3.0
    assert declmod.total(memoryview(array.array("d", [1.0, 2.0])).toreadonly()) == 3.0  # a read-only buffer
    assert declmod.mean_range(ro) == (1.0, 2.0)
    with pytest.raises(BufferError, match=r"^scale\(\) argument 'x' is read-only, and scale may write to it"):
        declmod.scale(ro)
    b = declmod.Bag()
    b.extend(ro)
    with pytest.raises(BufferError, match=r"argument 'out' is read-only"):
        b.copy_to(ro)
    out = np.zeros(3)
    assert b.copy_to(out) == 3 and out.tolist() == [0.0, 1.0, 2.0]


def test_jax_arrays_are_read_not_written():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    y = jnp.array([[1.0, 2.0]], dtype=jnp.float32)
    assert declmod.dtype_of(y) == "float32"  # read: taken
    with jax.enable_x64():
        z = jnp.array([1.0, 2.0], dtype=jnp.float64)
        assert declmod.total(z) == 3.0
        with pytest.raises(BufferError, match=r"^scale\(\) argument 'x' is a .*immutable"):
            declmod.scale(z)  # written: refused


def test_several_results_errors_and_requirements():
    assert declmod.mean_range(np.array([1.0, 5.0])) == (3.0, 4.0)
    with pytest.raises(ValueError, match="mean_range: x is empty"):
        declmod.mean_range(np.array([]))
    assert declmod.check("OK") is None
    with pytest.raises(ValueError, match="not upper case"):
        declmod.check("no")
    with pytest.raises(BufferError, match=r"dtype_of\(\) argument 't': want ndim 2"):
        declmod.dtype_of(np.ones(3, np.float32))
    assert declmod.eight(1, 2, 3, 4, 5, 6, 7, h=8) == 36


def test_what_is_no_array_is_a_type_error_naming_the_argument():
    with pytest.raises(TypeError, match=r"^total\(\) argument 'x' must be an array or a bytes-like object, not str$"):
        declmod.total("abc")
    with pytest.raises(TypeError, match=r"^dtype_of\(\) argument 't' must be an array \(an object with __dlpack__\), "
                                        r"not list$"):
        declmod.dtype_of([[1.0, 2.0]])
    with pytest.raises(TypeError, match=r"^Bag.extend\(\) argument 'x' must be an array or a bytes-like object, not "
                                        r"NoneType$"):
        declmod.Bag().extend(None)


def test_the_refusal_of_what_is_no_array_leaves_no_other_error(monkeypatch):
    """The check for __dlpack__ runs with the first TypeError put aside:
    CPython 3.13+ reports an attribute lookup made while an error is set as
    an unraisable exception ("Exception ignored in PyObject_HasAttrString")."""
    seen = []
    monkeypatch.setattr(sys, "unraisablehook", seen.append)
    for f, arg in ((declmod.total, "abc"), (declmod.dtype_of, [[1.0]]), (declmod.Bag().extend, None)):
        with pytest.raises(TypeError, match="must be an array"):
            f(arg)
    assert [str(u.exc_value) for u in seen] == []


def test_none_as_a_default_of_a_pointer_parameter():
    assert declmod.at_least(1.0) == 1.0
    assert declmod.at_least(1.0, 2.0) == 2.0 and declmod.at_least(3.0, lo=2.0) == 3.0
    assert declmod.at_least(1.0, lo=None) == 1.0
    assert str(inspect.signature(declmod.at_least)) == "(x, lo=None)"


def test_the_class_protocols_and_static_method():
    b = declmod.Bag.zeros(2)
    assert b.extend(np.array([1.5, 2.5])) == 4
    assert len(b) == 4 and b[2] == 1.5 and b[-1] == 2.5 and 2.5 in b and 9.0 not in b
    assert list(b) == [0.0, 0.0, 1.5, 2.5]
    assert list(b + 1.0) == [1.0, 1.0, 2.5, 3.5]
    with pytest.raises(IndexError):
        b[4]
    b.label = "x"
    with pytest.raises(ValueError, match="label: empty"):
        b.label = ""
    with pytest.raises(TypeError, match=r"^Bag.label: the value must be str, not int$"):
        b.label = 5  # an assignment, not a call: no "argument 1"
    assert b.label == "x"
    with b as same:
        assert same is b and not b.closed
    assert b.closed
    import weakref

    assert weakref.ref(b)() is b


def test_every_declared_function_takes_the_compiled_path():
    """No declared function falls back to reflection: each definition in the
    generated file wraps its function in a typed wrapper."""
    gen = open(os.path.join(os.path.dirname(__file__), "pyext_gen.go")).read()
    defs = [line for line in gen.splitlines() if line.strip().startswith(("Def(", "Method(", "Init(", "StaticMethod("))]
    assert len(defs) >= 10
    for line in defs:
        assert "pyext.Func" in line or "pyext.Proc" in line, line


def test_the_stub_passes_mypy_strict(tmp_path):
    pytest.importorskip("mypy")
    stub = os.path.join(os.path.dirname(declmod.__file__), "declmod.pyi")
    text = open(stub).read()
    assert "def scale(x: SupportsDLPack | Buffer, /, a: float = 2.0, *, twice: bool = False) -> None:" in text
    assert "def mean_range(x: SupportsDLPack | Buffer) -> tuple[float, float]:" in text
    assert "def at_least(x: float, lo: float | None = None) -> float:" in text
    assert "def keyed(data: SupportsDLPack | Buffer, key: SupportsDLPack | Buffer | None = None) -> int:" in text
    (tmp_path / "use.py").write_text(
        "import numpy as np\nimport declmod\n"
        "m, r = declmod.mean_range(np.ones(2))\nf: float = m + r\n"
        "b = declmod.Bag('a', size=1)\nn: int = b.extend(np.ones(1))\n"
        "declmod.scale(np.ones(2), 2.0, twice=True)\nk: int = declmod.keyed(b'ab', None) + declmod.keyed(b'a')\n")
    (tmp_path / "bad.py").write_text("import numpy as np\nimport declmod\ndeclmod.scale(np.ones(2), twice=1.5)\n")
    env = dict(os.environ, MYPYPATH=os.path.dirname(stub))
    good = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "use.py"], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=300)
    assert good.returncode == 0, good.stdout + good.stderr
    bad = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "bad.py"], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=300)
    assert bad.returncode == 1 and 'Argument "twice" to "scale" has incompatible type "float"' in bad.stdout, bad.stdout


def test_a_read_argument_sharing_memory_with_a_written_one_is_read_as_passed():
    """Go may assume its slices do not alias: a read argument that overlaps a
    written one is copied first (NumPy's ufuncs do the same), so the result
    is what distinct arrays give."""
    b = bytearray(b"abcdef")
    assert declmod.reverse_into(b, b) == 6 and b == bytearray(b"fedcba")
    b = bytearray(b"abcdefgh")
    mv = memoryview(b)
    assert declmod.reverse_into(mv[:4], mv[2:6]) == 4 and b == bytearray(b"abdcbagh")
    x = np.arange(8, dtype=np.uint8)
    assert declmod.reverse_into(x[2:], x[:6]) == 6 and x.tolist() == [7, 6, 5, 4, 3, 2, 6, 7]
    apart = bytearray(b"xyz")
    declmod.reverse_into(b"abc", apart)  # no overlap: as before
    assert apart == bytearray(b"cba")
    x = np.arange(4.0)
    declmod.fan(x, x, np.zeros(4))  # src is a's memory: read as passed
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_two_written_arguments_that_share_memory_are_a_buffer_error():
    x = np.arange(6.0)
    with pytest.raises(BufferError, match=r"^fan\(\) argument 'a' and argument 'b' share memory, and fan writes both"):
        declmod.fan(np.zeros(3), x[:4], x[3:])
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]  # nothing written
    declmod.fan(np.ones(3), x[:3], x[3:])  # adjacent, not overlapping
    assert x.tolist() == [1.0] * 6


def test_the_copies_of_overlapping_arguments_are_freed():
    def rss_kib():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * 4

    b = bytearray(1 << 20)
    for _ in range(200):
        declmod.reverse_into(b, b)
    before = rss_kib()
    for _ in range(2000):  # 1 MiB copied a call: 2 GiB if the copies leaked
        declmod.reverse_into(b, b)
    assert rss_kib() - before < 65536


def test_a_slice_parameter_defaulting_to_none_takes_none_as_nil():
    """PyO3's Option<&[u8]>: `key=None` in the directive; None, or no
    argument, is a nil slice; anything else is taken as any slice is."""
    assert declmod.keyed(b"abc") == -1
    assert declmod.keyed(b"abc", None) == -1
    assert declmod.keyed(b"abc", key=None) == -1
    assert declmod.keyed(b"abc", b"xy") == 5
    assert declmod.keyed(b"abc", key=np.zeros(4, np.uint8)) == 7
    with pytest.raises(TypeError, match=r"^keyed\(\) argument 'data' must be an array or a bytes-like object, not NoneType"):
        declmod.keyed(None)  # data has no None default
    with pytest.raises(TypeError, match=r"^keyed\(\) argument 'key' must be an array or a bytes-like object, not str"):
        declmod.keyed(b"", "xy")


def test_an_any_parameter_and_result_on_the_compiled_path():
    """//pyext:function with any and map[string]any (pyext's anyconv.go):
    a value tree in and out, None its default, refusals naming the argument."""
    assert declmod.roundtrip({"a": [1, 2**70, b"x"]}, opts={"k": None}) == [{"a": [1, 2**70, b"x"]}, {"k": None}]
    assert declmod.roundtrip(opts={}) == [None, {}]
    with pytest.raises(TypeError, match=r"^roundtrip\(\) argument 'obj' item 1: unsupported type frozenset$"):
        declmod.roundtrip([0, frozenset()], opts={})
    with pytest.raises(TypeError, match=r"^roundtrip\(\) argument 'opts' must be dict, not list$"):
        declmod.roundtrip(1, opts=[])
    with pytest.raises(ValueError, match="^roundtrip: asked to fail$"):
        declmod.roundtrip(1, opts={"fail": True})
    assert str(inspect.signature(declmod.roundtrip)) == "(obj=None, *, opts)"
