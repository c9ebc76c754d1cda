"""Exchange with the DLPack peers too large for CI's venv: PaddlePaddle and
TensorFlow (about 2.5 GB together). `make test-peers` installs them and runs
this file with GODLPACK_LARGE_PEERS=1 (tests/conftest.py leaves it out of
`make test` otherwise), Paddle's tests and TensorFlow's in separate processes:
importing paddle after tensorflow segfaults (tensorflow-cpu 2.21, paddlepaddle
3.3.1). Here a missing peer is a failure, not a skip: the target asked for it."""
from __future__ import annotations

import numpy as np
import pytest

import godlpack
from test_peers import both_ways, check_rows

# --- PaddlePaddle (make test-peers) --------------------------------------------------------
# Before TensorFlow: importing paddle after tensorflow segfaults (tensorflow-cpu 2.21,
# paddlepaddle 3.3.1); the other order works. mk/peers.mk runs them in separate processes too.


def test_paddle_both_ways_every_dtype():
    both_ways("paddle")


def test_paddle_zero_copy_views_0d_empty():
    import paddle
    x = paddle.to_tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    g = godlpack.from_dlpack(x)
    assert g.data_ptr == x.data_ptr() and g.tolist() == [[1, 2, 3], [4, 5, 6]]
    r = godlpack.from_dlpack(x[0][::-1])  # Paddle has negative-stride views
    assert r.strides == (-1,) and r.tolist() == [3.0, 2.0, 1.0]
    y = paddle.from_dlpack(godlpack.from_dlpack(np.arange(4.0)))
    assert y.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert paddle.from_dlpack(godlpack.full((), 5, "int32")).shape == []
    assert godlpack.from_dlpack(paddle.zeros([0, 2])).shape == (0, 2)


# --- TensorFlow (make test-peers) --------------------------------------------------------


def test_tensorflow_both_ways_every_dtype():
    both_ways("tensorflow")


def test_tensorflow_capsules_zero_copy_0d_empty():
    import tensorflow as tf
    dl = tf.experimental.dlpack
    g = godlpack.from_dlpack(np.arange(6, dtype=np.float32).reshape(2, 3))
    t = dl.from_dlpack(g.__dlpack__())  # TF takes legacy capsules only
    assert t.numpy().tolist() == [[0, 1, 2], [3, 4, 5]]
    back = godlpack.from_dlpack(dl.to_dlpack(t))
    assert back.data_ptr == g.data_ptr  # zero-copy both ways
    assert godlpack.from_dlpack(dl.to_dlpack(tf.constant(1.5))).tolist() == 1.5
    assert godlpack.from_dlpack(dl.to_dlpack(tf.zeros((0, 3)))).shape == (0, 3)
    with pytest.raises(Exception, match="dltensor"):  # a versioned capsule is refused
        dl.from_dlpack(g.__dlpack__(max_version=(1, 3)))




@pytest.mark.parametrize("name", ["paddle", "tensorflow"])
def test_check_large_peers(name):
    __import__(name)
    check_rows(name)
