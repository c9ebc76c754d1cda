"""Per-call cost of a pyext extension built against the stable ABI (abi3,
Py_LIMITED_API=3.12) next to the same extension built for this Python
(bench/ext/gosum, both built here with tools/godlpack_build.py): calls with
no argument, a float, a keyword, 1 KiB of bytes in and out, a method, and a
NumPy float64 array of 1 and 1000 elements (docs/install.md#abi3). On
CPython 3.15 and later, the abi3t build (PEP 803, NAME.abi3t.so) too.

    python3.12 bench/abi3_bench.py [--rounds 7] [--cell-ms 20]

Each build runs in a child process of its own (two pyext modules of one
name cannot share a process); the children take turns, one cell round
each, --rounds times; a cell's figure is the median over rounds of the
least per-call time of its five batches (load on the machine only adds). Needs CPython >= 3.12 with NumPy.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import sysconfig

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOSUM = os.path.join(ROOT, "bench", "ext", "gosum")
OUT = os.path.join(ROOT, "bench", "out", "abi3")

# (name, how it is called): code run n times in a loop, with m the module.
CELLS = [  # the typed paths (what a //pyext: declaration makes), not gosum's reflection ones
    ("noop()", "f = m.noop_typed", "f()"),
    ("fid(1.0)", "f = m.fid_typed", "f(1.0)"),
    ("kw(1.0, b=2.0)", "f = m.kw_typed", "f(1.0, b=2.0)"),
    ("bytes_in(1 KiB)", "f = m.bytes_in_typed; b = bytes(1024)", "f(b)"),
    ("bytes_out() 1 KiB", "f = m.bytes_out_typed", "f()"),
    ("obj.fid(1.0)", "o = m.Acc()", "o.fid(1.0)"),
    ("ndim(t), 1 elem", "f = m.ndim_typed; import numpy; x = numpy.ones(1)", "f(x)"),
    ("sum(x), 1 elem", "f = m.sum_typed; import numpy; x = numpy.ones(1)", "f(x)"),
    ("sum(x), 1000 elem", "f = m.sum_typed; import numpy; x = numpy.ones(1000)", "f(x)"),
    ("sum_conv(x[::2]), 1000", "f = m.sum_conv; import numpy; x = numpy.ones(2000)[::2]", "f(x)"),
]

CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import gosum as m
assert m.__file__.endswith(sys.argv[2]), m.__file__
cells, cell_ms = json.loads(sys.argv[3]), float(sys.argv[4])
out = {}
for name, setup, call in cells:
    ns = {"m": m}
    exec(setup, ns)
    loop = compile(f"def run(n):\n    for _ in range(n):\n        {call}\n", "<cell>", "exec")
    exec(loop, ns)
    run, n = ns["run"], 1000
    while True:  # calibrate: one batch of about cell_ms / 5
        t = time.perf_counter_ns(); run(n); t = time.perf_counter_ns() - t
        if t > cell_ms * 2e5: break
        n *= 2
    per = []
    for _ in range(5):
        t = time.perf_counter_ns(); run(n); per.append((time.perf_counter_ns() - t) / n)
    out[name] = min(per)  # the least disturbed batch: other load only adds
print(json.dumps(out))
"""


SUFFIXES = {"default": sysconfig.get_config_var("EXT_SUFFIX"), "abi3": ".abi3.so", "abi3t": ".abi3t.so"}


def build(kind: str) -> str:
    folder = os.path.join(OUT, kind)
    suffix = SUFFIXES[kind]  # an abi3t build is one by its file's name (godlpack_build.build_go)
    env = dict(os.environ, GODLPACK_ABI3="1" if kind == "abi3" else "0", GOFLAGS="-buildvcs=false")
    subprocess.run([sys.executable, os.path.join(ROOT, "tools", "godlpack_build.py"),
                    os.path.join(folder, "gosum" + suffix), "."], cwd=GOSUM, env=env, check=True,
                   stdout=subprocess.DEVNULL)
    return folder


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--cell-ms", type=float, default=20)
    args = ap.parse_args()
    if sys.version_info < (3, 12):
        sys.exit("bench/abi3_bench.py needs CPython >= 3.12 (the stable ABI's floor here)")
    kinds = ("default", "abi3", "abi3t") if sys.version_info >= (3, 15) else ("default", "abi3")
    builds = {kind: build(kind) for kind in kinds}
    suffixes = SUFFIXES
    samples: dict[str, dict[str, list[float]]] = {k: {c[0]: [] for c in CELLS} for k in builds}
    for _ in range(args.rounds):
        for kind, folder in builds.items():
            r = subprocess.run([sys.executable, "-c", CHILD, folder, suffixes[kind], json.dumps(CELLS),
                                str(args.cell_ms)], capture_output=True, text=True, check=True)
            for name, v in json.loads(r.stdout).items():
                samples[kind][name].append(v)
    print(f"CPython {sys.version.split()[0]}, {args.rounds} rounds: median ns per call")
    print(f"{'call':26} {'version-specific':>16}" + "".join(f" {k:>8} {k + '/specific':>15}" for k in kinds[1:]))
    for name, _, _ in CELLS:
        d = statistics.median(samples["default"][name])
        row = [statistics.median(samples[k][name]) for k in kinds[1:]]
        print(f"{name:26} {d:16.1f}" + "".join(f" {a:8.1f} {a / d:15.2f}" for a in row))


if __name__ == "__main__":
    main()
