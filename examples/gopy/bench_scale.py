"""Scale 1M float32 in place through gopydl's DLPack path and through gopy's
own slice path (copy in, call, copy out). Build first (./build.sh), then:
    python bench_scale.py [N]
Prints the median and minimum of several runs per path."""
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "build"))
from vecgopy import go, gopydl, vecgopy  # noqa: E402


def timed(f, reps):
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts), min(ts)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    x = np.ones(n, np.float32)
    one = np.ones(1, np.float32)

    def dlpack():
        vecgopy.Scale(gopydl.to_go(x), 1.0)

    def dlpack_one():
        vecgopy.Scale(gopydl.to_go(one), 1.0)

    def from_go():
        np.from_dlpack(gopydl.from_go(vecgopy.Arange(n)))

    def numpy_inplace():
        np.multiply(x, 1.0, out=x)

    def slice_path():
        s = go.Slice_float32(x)  # gopy appends element by element
        vecgopy.ScaleSlice(s, 1.0)
        np.array(list(s), np.float32)  # and reads them back one by one

    rows = [("gopydl Scale(to_go(x)), n=%d" % n, dlpack, 200),
            ("gopydl Scale(to_go(x)), n=1 (per-call cost)", dlpack_one, 2000),
            ("np.from_dlpack(from_go(Arange(n)))", from_go, 100),
            ("NumPy x *= 1 in place (reference)", numpy_inplace, 200),
            ("gopy slice path: Slice_float32(x), ScaleSlice, list(s)", slice_path, 3)]
    for name, f, reps in rows:
        f()  # warm up
        med, lo = timed(f, reps)
        print(f"{name:58s} median {med * 1e3:10.3f} ms   min {lo * 1e3:10.3f} ms")


if __name__ == "__main__":
    main()
