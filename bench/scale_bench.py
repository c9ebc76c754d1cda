"""Scaling-out figures, ratios taken per round (median [IQR]) in one process:

1. pickle protocol 5 round trip (dumps with buffer_callback, loads with the
   buffers) of a godlpack.Tensor against the same NumPy array, 1 KiB and
   256 MiB: with out-of-band buffers the cost is flat in the size;
2. Dask on one LocalCluster (2 worker processes, 127.0.0.1): a map_blocks of
   a Go kernel (examples/vecmath's add, returning vecmath Tensors) and a sum,
   against the same map with NumPy's add. This part runs in a child process
   with vecmath alone (one Go runtime per process); vecmath is built into
   bench/out/vecmath first.

    PYTHONPATH=python python bench/scale_bench.py [--rounds N] [--no-dask]
"""
from __future__ import annotations

import argparse
import os
import pickle
import statistics
import subprocess
import sys
import sysconfig
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def median_iqr(xs):
    q = statistics.quantiles(xs, n=4) if len(xs) > 1 else [xs[0]] * 3
    return statistics.median(xs), q[2] - q[0]


def pickle_round_trip(obj, reps):
    t0 = time.perf_counter()
    for _ in range(reps):
        bufs = []
        s = pickle.dumps(obj, protocol=5, buffer_callback=bufs.append)
        pickle.loads(s, buffers=bufs)
    return (time.perf_counter() - t0) / reps


def bench_pickle(rounds):
    import random

    import numpy as np

    import godlpack

    print("pickle protocol 5 round trip (dumps + loads, out-of-band buffers), median ns [IQR of the ratio]")
    print("| size | godlpack | NumPy | godlpack / NumPy |")
    print("|---|---:|---:|---:|")
    for label, n in (("1 KiB", 1 << 10), ("256 MiB", 256 << 20)):
        a = np.ones(n // 8)
        t = godlpack.from_dlpack(np.ones(n // 8))
        reps = 2000
        g, m, r = [], [], []
        for _ in range(rounds):
            order = [("g", t), ("n", a)]
            random.shuffle(order)
            got = {k: pickle_round_trip(o, reps) for k, o in order}
            g.append(got["g"] * 1e9)
            m.append(got["n"] * 1e9)
            r.append(got["g"] / got["n"])
        rm, ri = median_iqr(r)
        print(f"| {label} | {statistics.median(g):,.0f} | {statistics.median(m):,.0f} | **{rm:.2f}** [{ri:.2f}] |")


DASK_CHILD = r"""
import random, statistics, sys, time
import numpy as np, dask.array as da
from distributed import Client, LocalCluster
import vecmath

def go_double(b):
    return vecmath.add(b, b)

def np_double(b):
    return np.add(b, b)

if __name__ == "__main__":
    rounds, n, chunk = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                           dashboard_address=None, worker_dashboard_address=None)
    try:
        client = Client(cluster, timeout=60)
        x = client.persist(da.arange(n, chunks=chunk, dtype=np.float64))
        def run(fn):
            y = x.map_blocks(fn, dtype=np.float64, meta=np.empty((0,), np.float64))
            t0 = time.perf_counter()
            s = client.compute(y.sum()).result(timeout=120)
            dt = time.perf_counter() - t0
            assert s == 2 * (n - 1) * n / 2, s
            return dt
        run(go_double), run(np_double)  # warm-up: imports in the workers
        g, m, r = [], [], []
        for _ in range(rounds):
            order = [("g", go_double), ("n", np_double)]
            random.shuffle(order)
            got = {k: run(f) for k, f in order}
            g.append(got["g"] * 1e3); m.append(got["n"] * 1e3); r.append(got["g"] / got["n"])
        q = statistics.quantiles(r, n=4)
        print(f"| map_blocks(add) + sum, {n:,} float64 in {n // chunk} chunks | {statistics.median(g):.1f} ms "
              f"| {statistics.median(m):.1f} ms | **{statistics.median(r):.2f}** [{q[2] - q[0]:.2f}] |")
        client.close(timeout=60)
    finally:
        cluster.close(timeout=60)
"""


def bench_dask(rounds):
    try:
        import distributed  # noqa: F401
    except ImportError:
        print("Dask: skipped (dask[distributed] is not installed)")
        return
    out = os.path.join(ROOT, "bench", "out", "vecmath")
    os.makedirs(out, exist_ok=True)
    so = os.path.join(out, "vecmath" + sysconfig.get_config_var("EXT_SUFFIX"))
    subprocess.run([sys.executable, os.path.join(ROOT, "tools", "godlpack_build.py"), so, "."],
                   cwd=os.path.join(ROOT, "examples", "vecmath"), check=True, capture_output=True, timeout=600)
    script = os.path.join(out, "dask_child.py")
    with open(script, "w") as f:
        f.write(DASK_CHILD)
    print("\nDask LocalCluster (2 worker processes): Go kernel (vecmath) against NumPy, median [IQR of the ratio]")
    print("| job | Go (vecmath) | NumPy | Go / NumPy |")
    print("|---|---:|---:|---:|")
    sys.stdout.flush()
    env = dict(os.environ, PYTHONPATH=out)
    r = subprocess.run([sys.executable, script, str(rounds), str(1 << 23), str(1 << 19)], env=env, cwd=out,
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        print(r.stdout + r.stderr[-3000:])
        raise SystemExit("the Dask bench failed")
    print(r.stdout.strip())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--no-dask", action="store_true")
    args = ap.parse_args()
    bench_pickle(args.rounds)
    if not args.no_dask:
        bench_dask(args.rounds)


if __name__ == "__main__":
    main()
