"""Run by tests/pyext/test_tensor_args.py in a process of its own."""
import numpy as np
import pytest

import tensormod


class Sub(np.ndarray):
    """A NumPy subclass: not an exact ndarray, so it takes the DLPack path."""


ARRAYS = [
    np.ones(3), np.ones((2, 3))[:, ::2], np.zeros(0), np.array(5.0), np.ones((2, 3)).T, np.ones(3, bool),
    np.ones(5)[::-1], np.ones((4, 1, 2), np.float32), np.arange(6, dtype=np.int16).reshape(2, 3)[::-1],
    np.ones(3, np.complex128), np.ones(3, np.float16), np.ones((2, 2, 2, 2, 2, 2, 2, 2, 2)),
    np.broadcast_to(np.ones(3), (4, 3)), np.ones(3, ">f8"), np.zeros(4, np.uint8).view("V2"),
]


@pytest.mark.parametrize("i", range(len(ARRAYS)))
@pytest.mark.parametrize("fn", [tensormod.info, tensormod.info_refl, tensormod.info_w])
def test_numpy_fields_match_dlpack(fn, i):
    x = ARRAYS[i]
    def call(a):
        try:
            return fn(a)
        except Exception as e:  # noqa: BLE001  the same refusal either way
            return f"{type(e).__name__}: {e}"
    assert call(x) == call(x.view(Sub))


def test_read_only():
    x = np.ones(3)
    x.flags.writeable = False
    assert tensormod.info(x) == tensormod.info(x.view(Sub))
    with pytest.raises(BufferError, match="read-only"):
        tensormod.info_w(x)


def test_several_and_values():
    a, b, c = np.ones(2), np.ones((2, 2)), np.ones(3)[::2]
    assert tensormod.info2(a, b, c) == tensormod.info2(a.view(Sub), b.view(Sub), c.view(Sub))
    assert tensormod.first(np.arange(3.0)[1:]) == 1.0


def test_kept_tensors_keep_their_shapes():
    """Tensors a function keeps keep their own shape and strides while later
    calls fill (and replace) the block C copies shapes into: thousands of
    calls of every rank to 9 (8 from NumPy's fields, 9 through __dlpack__),
    with and without the GIL, each checked after all of them."""
    import gc
    arrays = []
    for k in range(3000):
        nd = k % 10
        shape = tuple(1 + (k + j) % 3 for j in range(nd))
        x = np.zeros(shape, np.float32 if k % 3 else np.float64)
        if nd and k % 4 == 1:
            x = x[..., ::-1]
        arrays.append(x)
    want = [tensormod.info(x.view(Sub)) for x in arrays]
    for k, x in enumerate(arrays):
        (tensormod.keep_nogil if k % 5 == 4 else tensormod.keep)(x)
        if k % 500 == 0:
            gc.collect()  # a block only the kept Tensors hold must stay theirs
    assert tensormod.kept() == want


@pytest.mark.parametrize("sub", [False, True])
def test_a_result_aliasing_a_tensor_argument_is_refused(sub):
    """The check that a returned slice does not alias an argument sees a
    Tensor argument both as C's image of NumPy's fields and through DLPack."""
    x = np.arange(4.0)
    with pytest.raises(ValueError, match="aliases an argument's memory"):
        tensormod.alias(x.view(Sub) if sub else x)
