"""Instructions per call of the ext_bench probes, under callgrind: each row
runs in its own process at N and 2N calls, and the difference over N is
the per-call count (start-up and import cancel out). Needs valgrind and
bench/out/gosum, nbsum, pyo3bench (built by `make bench-ext`).

    python bench/ext/insns.py [-n 20000] [row ...]
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "bench", "out")

# row: (module, setup, call); x is a 1-element float64 array.
ROWS = {
    "floor": ("gosum", "f = m.raw_go_noop", "f()"),
    "noop": ("gosum", "f = m.noop_typed", "f()"),
    "fid": ("gosum", "f = m.fid_typed", "f(1.0)"),
    "method_fid": ("gosum", "o = m.Acc()", "o.fid(1.0)"),
    "kw": ("gosum", "f = m.kw_typed", "f(1.0, b=2.0)"),
    "sum": ("gosum", "f = m.sum_typed", "f(x)"),
    "touch": ("gosum", "f = m.touch_typed", "f(x)"),
    "method_sum": ("gosum", "o = m.Acc()", "o.sum(x)"),
    "ndim": ("gosum", "f = m.ndim_typed", "f(x)"),
    "rows3": ("gosum", "f = m.rows3; x = np.ones((1, 3))", "f(x)"),
    "nb_ndim": ("nbsum", "f = m.ndim", "f(x)"),
    "nb_rows3": ("nbsum", "f = m.rows3; x = np.ones((1, 3))", "f(x)"),
    "nb_sum": ("nbsum", "f = m.sum", "f(x)"),
    "bytes_out": ("gosum", "f = m.bytes_out_typed", "f()"),
    "bytes_in": ("gosum", "f = m.bytes_in_typed; b = bytes(1024)", "f(b)"),
    "pyo3_noop": ("pyo3bench", "f = m.noop", "f()"),
    "pyo3_fid": ("pyo3bench", "f = m.fid", "f(1.0)"),
    "pyo3_method_fid": ("pyo3bench", "o = m.Acc()", "o.fid(1.0)"),
    "pyo3_ndim": ("pyo3bench", "f = m.ndim", "f(x)"),
    "pyo3_bytes_out": ("pyo3bench", "f = m.bytes_out", "f()"),
}

DRIVER = """
import sys; sys.path.insert(0, {out!r})
import numpy as np, {mod} as m
x = np.ones(1)
{setup}
for _ in range({n}):
    {call}
"""


def count(row, n):
    mod, setup, call = ROWS[row]
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "drive.py")
        with open(src, "w") as f:
            f.write(DRIVER.format(out=OUT, mod=mod, setup=setup, n=n, call=call))
        # The main thread only: the Go runtime's own threads (sysmon, GC) run on a clock.
        # A fixed hash seed: the driver's name lookups then probe the same slots every run.
        out = os.path.join(d, "cg.out")
        r = subprocess.run(["valgrind", "--tool=callgrind", "--separate-threads=yes", "--callgrind-out-file=" + out,
                            sys.executable, src], capture_output=True, text=True,
                           env=dict(os.environ, GODEBUG="asyncpreemptoff=1", PYTHONHASHSEED="0"))
        try:
            with open(out + "-01") as f:
                return int(re.search(r"^totals: (\d+)", f.read(), re.M).group(1))
        except (OSError, AttributeError):
            raise RuntimeError(r.stderr[-2000:]) from None


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("-n", type=int, default=20000)
    p.add_argument("rows", nargs="*", default=list(ROWS))
    a = p.parse_args()
    for row in a.rows:
        c1, c2 = count(row, a.n), count(row, 2 * a.n)
        print(f"{row:12s} {(c2 - c1) / a.n:8.0f} instructions per call", flush=True)


if __name__ == "__main__":
    main()
