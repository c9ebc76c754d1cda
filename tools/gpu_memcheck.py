"""godlpack's own CUDA work, small enough to run under compute-sanitizer
(`make gpu-test` does, when compute-sanitizer is on PATH):

    compute-sanitizer --tool memcheck --leak-check full python tools/gpu_memcheck.py

NumPy only, no GPU library: the driver calls the sanitizer sees are godlpack's
(host-to-device, device-to-device and device-to-host copies of compact and
strided tensors, and the event hand-off of an export to another stream).
Checks every value it copies; exits 0 with a message when there is no driver.
"""
from __future__ import annotations

import sys

import numpy as np

import godlpack
from godlpack import _godlpack

CPU, CUDA = (1, 0), (2, 0)


def move(t, device):
    """t copied to device by its own export (Tensor.__dlpack__(dl_device=...))."""
    return godlpack.from_dlpack(t.__dlpack__(max_version=(1, 3), dl_device=device))


def main() -> int:
    ok, why = godlpack.cuda_status()
    if not ok:
        print(f"gpu_memcheck: no CUDA driver ({why})")
        return 0
    copies = 0
    for dtype in ("float32", "float64", "int8", "complex128"):
        for shape in [(), (0,), (7,), (64, 33), (1 << 18,)]:
            a = (np.arange(int(np.prod(shape))) % 101).reshape(shape).astype(dtype)
            views = [a] if a.ndim == 0 else [a, a.T, a[..., ::2]]
            for v in views:
                g = godlpack.from_dlpack(v)  # zero-copy host tensor: godlpack's own export copies it
                d = move(g, CUDA)
                d2 = godlpack.from_dlpack(d, copy=True)
                h = move(d2, CPU)
                copies += 3
                if not np.array_equal(np.asarray(h), v):
                    print(f"gpu_memcheck: {dtype} {shape} strides {v.strides}: wrong values after the round trip")
                    return 1
                d.__dlpack__(max_version=(1, 3), stream=2)  # the per-thread default stream waits (event)
    print(f"gpu_memcheck: {copies} copies checked")
    del g, d, d2, h
    # The pinned and device blocks kept for reuse are freed, so that the leak
    # check reports only what nothing would ever free.
    _godlpack._cuda_trim()
    return 0


if __name__ == "__main__":
    sys.exit(main())
