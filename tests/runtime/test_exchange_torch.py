"""godlpack.from_dlpack on torch tensors: when PyTorch's C exchange table is
used, and that it never gives other results or other errors than __dlpack__."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import godlpack

torch = pytest.importorskip("torch")


@pytest.fixture
def dlpack_calls(monkeypatch):
    """Counts calls of torch.Tensor.__dlpack__ (the table is used when it stays 0)."""
    calls = []
    orig = torch.Tensor.__dlpack__

    def counting(self, *args, **kwargs):
        calls.append(type(self))
        return orig(self, *args, **kwargs)

    monkeypatch.setattr(torch.Tensor, "__dlpack__", counting)
    return calls


def test_plain_tensors_and_plain_subclasses_take_the_table(dlpack_calls):
    class Plain(torch.Tensor):
        pass

    for x in (torch.arange(4.0), torch.arange(4.0).as_subclass(Plain), torch.arange(4, dtype=torch.int32)):
        assert godlpack.from_dlpack(x).tolist() == x.tolist()
    assert dlpack_calls == []


def test_subclass_overriding_dlpack_is_not_bypassed():
    # Regression: the inherited __dlpack_c_exchange_api__
    # was used, so the override never ran.
    class Refusing(torch.Tensor):
        def __dlpack__(self, **kwargs):
            raise BufferError("Refusing exports nothing")

    with pytest.raises(BufferError, match="Refusing exports nothing"):
        godlpack.from_dlpack(torch.ones(3).as_subclass(Refusing))

    class Doubling(torch.Tensor):
        def __dlpack__(self, **kwargs):
            return (self.as_subclass(torch.Tensor) * 2).__dlpack__(**kwargs)

    assert godlpack.from_dlpack(torch.ones(3).as_subclass(Doubling)).tolist() == [2.0, 2.0, 2.0]


def test_subclass_hooking_attribute_access_is_not_bypassed():
    # A __getattribute__ that hands out another __dlpack__ is what
    # `x.__dlpack__` and np.from_dlpack see; the inherited table skips it.
    class Redirecting(torch.Tensor):
        def __getattribute__(self, name):
            if name == "__dlpack__":
                return torch.full((3,), 7.0).__dlpack__
            return super().__getattribute__(name)

    x = torch.ones(3).as_subclass(Redirecting)
    assert np.from_dlpack(x).tolist() == [7.0, 7.0, 7.0]
    for _ in range(3):
        assert godlpack.from_dlpack(x).tolist() == [7.0, 7.0, 7.0]


def test_wrapper_subclass_exports_through_its_dlpack():
    # A wrapper subclass has no storage of its own: the table says "NULL data".
    class Wrapper(torch.Tensor):
        @staticmethod
        def __new__(cls, inner):
            r = torch.Tensor._make_wrapper_subclass(cls, inner.shape, dtype=inner.dtype)
            r.inner = inner
            return r

        __torch_function__ = torch._C._disabled_torch_function_impl

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            raise NotImplementedError(func)

        def __dlpack__(self, **kwargs):
            return self.inner.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return self.inner.__dlpack_device__()

    inner = torch.arange(3.0)
    t = godlpack.from_dlpack(Wrapper(inner))
    assert t.tolist() == [0.0, 1.0, 2.0] and t.data_ptr == inner.data_ptr()


def test_subclass_intercepting_dlpack_in_torch_function_is_not_bypassed():
    class Guarded(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if func is torch.Tensor.__dlpack__:
                raise BufferError("Guarded refuses DLPack")
            return super().__torch_function__(func, types, args, kwargs or {})

    with pytest.raises(BufferError, match="Guarded refuses DLPack"):
        godlpack.from_dlpack(torch.ones(3).as_subclass(Guarded))


def test_read_only_wrapper_imports_read_only():
    # It overrides __dlpack__ and the table alike: its own table goes with its own __dlpack__.
    wrapper = getattr(torch.utils.dlpack, "ReadOnlyTensorWrapper", None)
    if wrapper is None:
        pytest.skip("this PyTorch has no ReadOnlyTensorWrapper")
    x = torch.arange(3.0)
    t = godlpack.from_dlpack(wrapper(x))
    assert t.readonly and t.tolist() == [0.0, 1.0, 2.0] and t.data_ptr == x.data_ptr()


def refused_tensors():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        made = {
            "bits8": lambda: torch.zeros(3, dtype=torch.uint8).view(torch.bits8),
            "quantized": lambda: torch.quantize_per_tensor(torch.ones(3), 0.1, 0, torch.qint8),
            "sparse_coo": lambda: torch.ones(3).to_sparse(),
            "sparse_csr": lambda: torch.ones(2, 2).to_sparse_csr(),
            "mkldnn": lambda: torch.ones(3).to_mkldnn(),
            "meta": lambda: torch.ones(3, device="meta"),
        }
        out = []
        for name, make in made.items():
            try:
                out.append(pytest.param(make(), id=name))
            except (RuntimeError, AttributeError) as e:  # e.g. a build without MKL-DNN
                out.append(pytest.param(None, id=name, marks=pytest.mark.skip(reason=f"cannot make: {e}")))
        return out


@pytest.mark.parametrize("x", refused_tensors())
def test_refusals_are_buffer_errors_on_every_path(x):
    # Regression: through the table these were RuntimeError
    # with a C++ backtrace.
    with pytest.raises(BufferError):
        x.__dlpack__(max_version=(1, 3))
    with pytest.raises(BufferError):
        godlpack.from_dlpack(x)
    with pytest.raises(BufferError):
        godlpack.from_dlpack(x, copy=False)  # the __dlpack__ path


@pytest.mark.parametrize("make", [
    lambda: torch._neg_view(torch.tensor([1.0, 2.0])),
    lambda: torch._neg_view(torch.tensor([1, 2], dtype=torch.int32)),
    lambda: torch.tensor([1 + 2j, 3 - 4j]).conj().imag,  # the public way to a negative view
    lambda: torch._neg_view(torch.tensor([1.0, 2.0])).detach(),  # not a view, still negative
])
def test_negative_views_are_refused_on_every_path(make):
    # PyTorch exports negative-bit tensors with the wrong sign (table and
    # __dlpack__ alike). Regression: via __dlpack__ (device=...) godlpack
    # imported them silently wrong.
    x = make()
    assert x.is_neg()
    for kwargs in ({}, {"device": (1, 0)}, {"copy": True}):
        with pytest.raises(BufferError, match="negative bit"):
            godlpack.from_dlpack(x, **kwargs)
    assert godlpack.from_dlpack(x.resolve_neg()).tolist() == x.tolist()


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
def test_conjugate_views_never_wrong(dtype):
    x = torch.tensor([1 + 2j, 3 - 4j], dtype=dtype).conj()
    for kwargs in ({}, {"device": (1, 0)}):
        with pytest.raises(BufferError, match="conjugate"):
            godlpack.from_dlpack(x, **kwargs)
    assert godlpack.from_dlpack(x.resolve_conj()).tolist() == x.tolist()
    # A real tensor's conj() is itself: no bit, imported as is.
    assert godlpack.from_dlpack(torch.arange(3.0).conj()).tolist() == [0.0, 1.0, 2.0]


def test_requires_grad_refused_like_dlpack():
    for dtype in (torch.float32, torch.bfloat16, torch.complex64):
        x = torch.ones(2, dtype=dtype, requires_grad=True)
        with pytest.raises(BufferError, match="gradient"):
            godlpack.from_dlpack(x)
        assert godlpack.from_dlpack(x.detach()).readonly is False


def test_alternating_types_keep_their_paths(dlpack_calls):
    # The per-type cache holds several types: alternating NumPy and torch
    # inputs still take the table for torch and give the right data.
    a, t = np.arange(4, dtype=np.float32), torch.arange(4.0)

    class Plain(torch.Tensor):
        pass

    s = torch.arange(4.0).as_subclass(Plain)
    for _ in range(50):
        for x in (a, t, s, godlpack.from_dlpack(a)):
            assert godlpack.from_dlpack(x).tolist() == [0.0, 1.0, 2.0, 3.0]
    assert dlpack_calls == []


def test_type_changes_are_seen():
    # The cache is keyed by the type's version tag: a __dlpack__ added to a
    # class later is honoured.
    class Late(torch.Tensor):
        pass

    x = torch.ones(2).as_subclass(Late)
    assert godlpack.from_dlpack(x).tolist() == [1.0, 1.0]

    def refuse(self, **kwargs):
        raise BufferError("late refusal")

    Late.__dlpack__ = refuse
    with pytest.raises(BufferError, match="late refusal"):
        godlpack.from_dlpack(x)
    del Late.__dlpack__
    assert godlpack.from_dlpack(x).tolist() == [1.0, 1.0]


def test_zero_size_and_every_plain_dtype_through_the_table(dlpack_calls):
    for dtype in (torch.bool, torch.int8, torch.uint8, torch.int64, torch.float16, torch.bfloat16,
                  torch.float64, torch.complex128, torch.float8_e4m3fn):
        x = torch.zeros(0, dtype=dtype)
        assert godlpack.from_dlpack(x).shape == (0,)
        y = torch.ones(3, dtype=dtype)
        assert godlpack.from_dlpack(y).data_ptr == y.data_ptr()
    assert dlpack_calls == []


def test_key_set_read_measured_and_per_call():
    # The negative/conjugate bits are read from the exported tensor's key set
    # once that read is measured (internal/cpython/exchange/torch_quirks.c); on any doubt the
    # methods are called instead. Either way the answer is per call: a bit set
    # in place after an import is seen by the next one.
    from godlpack import _godlpack

    x = torch.arange(3.0)
    assert godlpack.from_dlpack(x).tolist() == [0.0, 1.0, 2.0]
    assert _godlpack._torch_keyset() in (1, -1)
    torch._C._set_neg(x, True)
    try:
        with pytest.raises(BufferError, match="negative bit"):
            godlpack.from_dlpack(x)
    finally:
        torch._C._set_neg(x, False)
    z = torch.tensor([1 + 2j])
    assert godlpack.from_dlpack(z).tolist() == [1 + 2j]
    torch._C._set_conj(z, True)
    try:
        with pytest.raises(BufferError, match="conjugate"):
            godlpack.from_dlpack(z)
    finally:
        torch._C._set_conj(z, False)
    assert godlpack.from_dlpack(x).tolist() == [0.0, 1.0, 2.0]


def test_key_set_read_in_use_with_this_pytorch():
    # Not a correctness requirement (the methods are the fallback), but the
    # figures in the README assume it: a PyTorch that changes its layout
    # shows up here.
    from godlpack import _godlpack

    godlpack.from_dlpack(torch.ones(1))
    if _godlpack._torch_keyset() != 1:
        pytest.xfail(f"key-set read not usable with PyTorch {torch.__version__}: is_neg()/is_conj() are called")


def test_threads_mixing_types_and_refusals():
    # is_neg()/requires_grad release the GIL or run Python: other threads'
    # imports meanwhile must neither corrupt nor evict the entry in use.
    import threading

    a = np.arange(3, dtype=np.float32)
    good = [a, torch.arange(3.0), torch.arange(3, dtype=torch.int32), torch.arange(3.0).as_subclass(type("S", (torch.Tensor,), {}))]
    bad = [torch._neg_view(torch.arange(3.0)), torch.ones(3, requires_grad=True), torch.tensor([1j]).conj()]
    errors = []

    def work():
        try:
            for i in range(300):
                x = good[i % len(good)]
                assert godlpack.from_dlpack(x).tolist() == x.tolist()
                with pytest.raises(BufferError):
                    godlpack.from_dlpack(bad[i % len(bad)])
                # New types now and then (cache misses while others are busy).
                if i % 50 == 0:
                    y = torch.arange(3.0).as_subclass(type(f"T{i}", (torch.Tensor,), {}))
                    assert godlpack.from_dlpack(y).tolist() == [0.0, 1.0, 2.0]
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
