"""Per-call cost of every DLPack path: godlpack next to its peers (NumPy,
PyTorch, JAX, apache-tvm-ffi) and a floor, side by side in one process.

Paths are grouped by what they do (import from NumPy, PyTorch or JAX; export to
NumPy, PyTorch or JAX; __dlpack__); in each group every library that offers the
path has a row, plus a "floor" row: the least work the path needs, done in C
by bench/floor.c (built here at bench time, no validation; for the torch import,
PyTorch's exchange table call and one Python object holding the tensor).

Everything runs in one process and is timed side by side: every (path, size)
cell is calibrated, then all cells are timed in rounds, each round running
every cell once in a fresh random order, so drift and background load hit all
paths and sizes alike. Each figure is the cost of one whole exchange: producing
the capsule, importing it and, when the statement's result is dropped, running
the deleters. Ratios are computed per round (same moment), then summarised as
median [IQR].

    PYTHONPATH=python .venv/bin/python bench/bench.py            # full run, a few minutes
    PYTHONPATH=python .venv/bin/python bench/bench.py --quick    # smoke run
    PYTHONPATH=python .venv/bin/python bench/bench.py --groups torch_import --sizes 256 --repeat 31
    PYTHONPATH=python .venv/bin/python bench/bench.py --loop gdl_from_np --sizes 1KiB --seconds 20
        # one path untimed; attach a profiler to the pid it prints

Writes bench/out/bench.json and bench/out/bench.png (bench-quick.* with
--quick; git-ignored); --update writes the committed bench/results/ instead.
Peers that are not installed (JAX, tvm-ffi) are left out, and say so.
"""
from __future__ import annotations

import argparse
import datetime
import gc
import importlib
import json
import os
import platform
import random
import re
import statistics
import subprocess
import sys
import time
import timeit
from dataclasses import dataclass

import numpy as np
import torch

import godlpack

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import floor  # noqa: E402  (bench/floor.py)

DEFAULT_SIZES = "1,1KiB,1MiB,16MiB,256MiB"
ITEMSIZE = 4  # float32
MAX_VERSION = (1, 3)
OUT = os.path.join(HERE, "out")
RESULTS = os.path.join(HERE, "results")


def optional(name: str):
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


jnp = optional("jax.numpy")
tvm_ffi = optional("tvm_ffi")


@dataclass(frozen=True)
class Path:
    """One measured statement. stmt uses only the names set up by make_context."""

    key: str
    label: str
    impl: str  # "godlpack", "godlpack*" (a variant), a peer's name, or "floor"
    stmt: str
    source: str  # name of the context object whose data the result must alias
    needs: str = ""  # "jax", "tvm" or "" (always available)


# Functions are bound to short local names so the timed loop pays LOAD_FAST,
# not attribute lookups. Sources (one float32 buffer each, 64-byte aligned):
# a ndarray, t torch tensor, j JAX array, z godlpack.zeros; views of a:
# g godlpack, v tvm-ffi, p floor Producer. gf/nf/tf/jf/vf/fc/ft: from_dlpack
# of godlpack, NumPy, torch, JAX, tvm-ffi, floor (capsule), floor (table).
P = Path
PATHS = [
    # import from NumPy: X.from_dlpack(ndarray)
    P("gdl_from_np", "godlpack.from_dlpack(ndarray)", "godlpack", "gf(a)", "a"),
    P("tvm_from_np", "tvm_ffi.from_dlpack(ndarray)", "tvm-ffi", "vf(a)", "a", "tvm"),
    P("np_from_np", "np.from_dlpack(ndarray)", "NumPy", "nf(a)", "a"),
    P("torch_from_np", "torch.from_dlpack(ndarray)", "PyTorch", "tf(a)", "a"),
    P("jax_from_np", "jnp.from_dlpack(ndarray)", "JAX", "jf(a)", "a", "jax"),
    P("floor_from_np", "floor: ndarray.__dlpack__ + take + holder", "floor", "fc(a)", "a"),
    # import from PyTorch
    P("gdl_from_torch", "godlpack.from_dlpack(torch)", "godlpack", "gf(t)", "t"),
    P("gdl_from_torch_dl", "godlpack.from_dlpack(torch) via __dlpack__", "godlpack*", "gf(t, device=cpu)", "t"),
    P("tvm_from_torch", "tvm_ffi.from_dlpack(torch)", "tvm-ffi", "vf(t)", "t", "tvm"),
    P("np_from_torch", "np.from_dlpack(torch)", "NumPy", "nf(t)", "t"),
    P("torch_from_torch", "torch.from_dlpack(torch)", "PyTorch", "tf(t)", "t"),
    P("jax_from_torch", "jnp.from_dlpack(torch)", "JAX", "jf(t)", "t", "jax"),
    P("floor_from_torch", "floor: torch exchange table + holder", "floor", "ft(t)", "t"),
    # import from JAX
    P("gdl_from_jax", "godlpack.from_dlpack(jax)", "godlpack", "gf(j)", "j", "jax"),
    P("tvm_from_jax", "tvm_ffi.from_dlpack(jax)", "tvm-ffi", "vf(j)", "j", "jax tvm"),
    P("np_from_jax", "np.from_dlpack(jax)", "NumPy", "nf(j)", "j", "jax"),
    P("torch_from_jax", "torch.from_dlpack(jax)", "PyTorch", "tf(j)", "j", "jax"),
    P("jax_from_jax", "jnp.from_dlpack(jax)", "JAX", "jf(j)", "j", "jax"),
    P("floor_from_jax", "floor: jax.__dlpack__ + take + holder", "floor", "fc(j)", "j", "jax"),
    # export to NumPy: np.from_dlpack(X)
    P("np_from_gdl", "np.from_dlpack(godlpack)", "godlpack", "nf(g)", "a"),
    P("np_from_zeros", "np.from_dlpack(godlpack.zeros)", "godlpack*", "nf(z)", "z"),
    P("np_from_tvm", "np.from_dlpack(tvm_ffi)", "tvm-ffi", "nf(v)", "a", "tvm"),
    P("floor_np_from", "floor: np.from_dlpack(C producer)", "floor", "nf(p)", "a"),
    # export to PyTorch: torch.from_dlpack(X)
    P("torch_from_gdl", "torch.from_dlpack(godlpack)", "godlpack", "tf(g)", "a"),
    P("torch_from_zeros", "torch.from_dlpack(godlpack.zeros)", "godlpack*", "tf(z)", "z"),
    P("torch_from_tvm", "torch.from_dlpack(tvm_ffi)", "tvm-ffi", "tf(v)", "a", "tvm"),
    P("floor_torch_from", "floor: torch.from_dlpack(C producer)", "floor", "tf(p)", "a"),
    # export to JAX: jnp.from_dlpack(X)
    P("jax_from_gdl", "jnp.from_dlpack(godlpack)", "godlpack", "jf(g)", "a", "jax"),
    P("jax_from_tvm", "jnp.from_dlpack(tvm_ffi)", "tvm-ffi", "jf(v)", "a", "jax tvm"),
    P("floor_jax_from", "floor: jnp.from_dlpack(C producer)", "floor", "jf(p)", "a", "jax"),
    # X.__dlpack__(max_version=(1, 3)) and X.__dlpack__()
    P("gdl_dlpack_v", "godlpack Tensor.__dlpack__(max_version=(1,3))", "godlpack", "gdl(max_version=mv)", "a"),
    P("tvm_dlpack_v", "tvm_ffi Tensor.__dlpack__(max_version=(1,3))", "tvm-ffi", "vdl(max_version=mv)", "a", "tvm"),
    P("np_dlpack_v", "ndarray.__dlpack__(max_version=(1,3))", "NumPy", "adl(max_version=mv)", "a"),
    P("torch_dlpack_v", "torch Tensor.__dlpack__(max_version=(1,3))", "PyTorch", "tdl(max_version=mv)", "t"),
    P("floor_dlpack_v", "floor: C producer __dlpack__(max_version=(1,3))", "floor", "pdl(max_version=mv)", "a"),
    P("gdl_dlpack", "godlpack Tensor.__dlpack__()", "godlpack", "gdl()", "a"),
    P("tvm_dlpack", "tvm_ffi Tensor.__dlpack__()", "tvm-ffi", "vdl()", "a", "tvm"),
    P("np_dlpack", "ndarray.__dlpack__()", "NumPy", "adl()", "a"),
    P("torch_dlpack", "torch Tensor.__dlpack__()", "PyTorch", "tdl()", "t"),
    P("jax_dlpack", "jax Array.__dlpack__()", "JAX", "jdl()", "j", "jax"),
    P("floor_dlpack", "floor: C producer __dlpack__()", "floor", "pdl()", "a"),
    # alternating NumPy and PyTorch inputs (one call of each)
    P("gdl_alt", "godlpack.from_dlpack: ndarray, torch", "godlpack", "gf(a); gf(t)", "t"),
    P("tvm_alt", "tvm_ffi.from_dlpack: ndarray, torch", "tvm-ffi", "vf(a); vf(t)", "t", "tvm"),
    P("floor_alt", "floor: ndarray, torch", "floor", "fc(a); ft(t)", "t"),
    # round trips
    P("rt_np_gdl_np", "np -> godlpack -> np", "godlpack", "nf(gf(a))", "a"),
    P("rt_np_tvm_np", "np -> tvm_ffi -> np", "tvm-ffi", "nf(vf(a))", "a", "tvm"),
    P("rt_np_np_np", "np -> np -> np", "NumPy", "nf(nf(a))", "a"),
    P("rt_torch_gdl_torch", "torch -> godlpack -> torch", "godlpack", "tf(gf(t))", "t"),
    P("rt_torch_tvm_torch", "torch -> tvm_ffi -> torch", "tvm-ffi", "tf(vf(t))", "t", "tvm"),
    P("rt_torch_torch_torch", "torch -> torch -> torch", "PyTorch", "tf(tf(t))", "t"),
]
BY_KEY = {p.key: p for p in PATHS}

# Groups of paths doing the same thing; the first godlpack row is compared with
# the fastest peer (by median) and with the floor.
GROUPS = {
    "np_import": ("import from NumPy", ["gdl_from_np", "tvm_from_np", "np_from_np", "torch_from_np",
                                        "jax_from_np", "floor_from_np"]),
    "torch_import": ("import from PyTorch", ["gdl_from_torch", "gdl_from_torch_dl", "tvm_from_torch",
                                             "np_from_torch", "torch_from_torch", "jax_from_torch",
                                             "floor_from_torch"]),
    "jax_import": ("import from JAX", ["gdl_from_jax", "tvm_from_jax", "np_from_jax", "torch_from_jax",
                                       "jax_from_jax", "floor_from_jax"]),
    # Export groups compare producers: "key:Impl" names the producer.
    "np_export": ("export to NumPy: np.from_dlpack(X)", ["np_from_gdl", "np_from_zeros", "np_from_tvm",
                                                         "np_from_np", "np_from_torch:PyTorch",
                                                         "np_from_jax:JAX", "floor_np_from"]),
    "torch_export": ("export to PyTorch: torch.from_dlpack(X)", ["torch_from_gdl", "torch_from_zeros",
                                                                 "torch_from_tvm", "torch_from_np:NumPy",
                                                                 "torch_from_torch", "torch_from_jax:JAX",
                                                                 "floor_torch_from"]),
    "jax_export": ("export to JAX: jnp.from_dlpack(X)", ["jax_from_gdl", "jax_from_tvm", "jax_from_np:NumPy",
                                                         "jax_from_torch:PyTorch", "jax_from_jax",
                                                         "floor_jax_from"]),
    "dlpack_v": ("X.__dlpack__(max_version=(1, 3))", ["gdl_dlpack_v", "tvm_dlpack_v", "np_dlpack_v",
                                                      "torch_dlpack_v", "floor_dlpack_v"]),
    "dlpack": ("X.__dlpack__()", ["gdl_dlpack", "tvm_dlpack", "np_dlpack", "torch_dlpack", "jax_dlpack",
                                  "floor_dlpack"]),
    "alternating": ("alternating ndarray and torch inputs", ["gdl_alt", "tvm_alt", "floor_alt"]),
    "rt_np": ("round trip through X, NumPy at both ends", ["rt_np_gdl_np", "rt_np_tvm_np", "rt_np_np_np"]),
    "rt_torch": ("round trip through X, PyTorch at both ends", ["rt_torch_gdl_torch", "rt_torch_tvm_torch",
                                                               "rt_torch_torch_torch"]),
}
FLATNESS_TARGET = 1.10


def group_rows(keys: list[str], present) -> list[tuple[Path, str]]:
    """(path, implementation) for a group's entries ("key" or "key:Impl") that are present."""
    rows = []
    for entry in keys:
        key, _, impl = entry.partition(":")
        if present(key):
            rows.append((BY_KEY[key], impl or BY_KEY[key].impl))
    return rows


def available(p: Path) -> bool:
    return ("jax" not in p.needs or jnp is not None) and ("tvm" not in p.needs or tvm_ffi is not None)


def parse_size(tok: str) -> tuple[str, int]:
    """'256' is a count of float32 elements; '1KiB', '16MiB', '1GiB' are bytes."""
    m = re.fullmatch(r"\s*(\d+)\s*(KiB|MiB|GiB|K|M|G)?\s*", tok, re.IGNORECASE)
    if not m:
        raise ValueError(f"bad size {tok!r}: use N (elements) or N KiB/MiB/GiB")
    n, unit = int(m.group(1)), (m.group(2) or "").upper().rstrip("IB")
    if not unit:
        return (f"{n} el", n)
    nbytes = n << {"K": 10, "M": 20, "G": 30}[unit]
    if nbytes % ITEMSIZE:
        raise ValueError(f"{tok!r} is not a whole number of float32 elements")
    return (f"{n} {unit}iB", nbytes // ITEMSIZE)


def data_ptr(x) -> int:
    """Address of the first element of whatever a path returns."""
    if isinstance(x, np.ndarray):
        return x.__array_interface__["data"][0]
    if isinstance(x, torch.Tensor):
        return x.data_ptr()
    if isinstance(x, godlpack.Tensor) or (COMPARE is not None and isinstance(x, COMPARE.Tensor)):
        return x.data_ptr
    if isinstance(x, FLOOR.Held):
        return FLOOR.held_data_ptr(x)
    if isinstance(x, FLOOR.Producer):
        return x.data_ptr
    if tvm_ffi is not None and isinstance(x, tvm_ffi.Tensor):
        return x.data_ptr()
    if jnp is not None and hasattr(x, "unsafe_buffer_pointer"):
        return x.unsafe_buffer_pointer()
    return godlpack.from_dlpack(x).data_ptr  # a capsule from __dlpack__


def aligned_ones(n: int) -> np.ndarray:
    """n float32 ones, 64-byte aligned (JAX copies less aligned CPU buffers)."""
    buf = np.empty(n + 16, dtype=np.float32)
    off = (-buf.ctypes.data % 64) // ITEMSIZE
    a = buf[off:off + n]
    a[:] = 1
    return a


def make_context(n: int) -> dict:
    """Allocates one tensor of each kind with n float32 elements (touched, so resident)."""
    a = aligned_ones(n)
    t = torch.ones(n, dtype=torch.float32)
    g = godlpack.from_dlpack(a)
    z = godlpack.zeros((n,), "float32")
    p = FLOOR.Producer(a)
    # device=cpu makes godlpack.from_dlpack take the __dlpack__ path, not the exchange API.
    ctx = dict(a=a, t=t, g=g, z=z, p=p, gdl=g.__dlpack__, adl=a.__dlpack__, tdl=t.__dlpack__, pdl=p.__dlpack__,
               mv=MAX_VERSION, cpu=(1, 0), nf=np.from_dlpack, gf=godlpack.from_dlpack, tf=torch.from_dlpack,
               fc=FLOOR.import_capsule, ft=FLOOR.import_table)
    if jnp is not None:
        j = jnp.asarray(np.ones(n, dtype=np.float32))
        j.block_until_ready()
        ctx.update(j=j, jdl=j.__dlpack__, jf=jnp.from_dlpack)
    if COMPARE is not None:
        ctx.update(cf=COMPARE.from_dlpack)
    if tvm_ffi is not None:
        v = tvm_ffi.from_dlpack(a)
        ctx.update(v=v, vdl=v.__dlpack__, vf=tvm_ffi.from_dlpack)
    return ctx


def check_zero_copy(ctx: dict, paths: list[Path]) -> dict[str, bool]:
    """Runs each statement once: its (last) result must alias the source's memory."""
    ok = {}
    for p in paths:
        result = eval(p.stmt.split(";")[-1].strip(), {}, ctx)  # noqa: S307 - our own fixed statements
        ok[p.key] = data_ptr(result) == data_ptr(ctx[p.source])
        del result
    return ok


def make_timer(stmt: str, ctx: dict) -> timeit.Timer:
    # The setup copies the context into the timing function's locals.
    setup = "; ".join(f"{k} = _ctx[{k!r}]" for k in ctx)
    return timeit.Timer(stmt, setup=setup, globals={"_ctx": ctx})


def calibrate(timer: timeit.Timer, target_s: float) -> int:
    """Loop count so that one repeat takes about target_s (also warms the path up)."""
    number = 1
    while True:
        elapsed = timer.timeit(number)
        if elapsed >= target_s / 4:
            return max(1, int(number * target_s / elapsed))
        number *= 4 if elapsed < target_s / 40 else 2


def summarize(samples_ns: list[float]) -> dict:
    q1, _, q3 = statistics.quantiles(samples_ns, n=4, method="inclusive")
    return {
        "median_ns": statistics.median(samples_ns),
        "q1_ns": q1,
        "q3_ns": q3,
        "iqr_ns": q3 - q1,
        "stdev_ns": statistics.stdev(samples_ns) if len(samples_ns) > 1 else 0.0,
        # The fastest decile: on a shared machine the median drifts with other
        # processes' load, while the quiet repeats stay put.
        "p10_ns": statistics.quantiles(samples_ns, n=10, method="inclusive")[0],
        "min_ns": min(samples_ns),
    }


def measure(ctxs: dict[str, dict], paths: list[Path], repeat: int, target_s: float) -> dict:
    """Calibrates every (size, path) cell, then times `repeat` rounds of all cells.

    Each round runs every cell once in a fresh random order, so drift and other
    processes' load spread over all paths and sizes alike, and a difference
    between sizes is not a difference between moments.
    """
    timers = {}
    for label, ctx in ctxs.items():
        timers[(label, "_loop")] = make_timer("pass", ctx)  # the timing loop's own cost
        for p in paths:
            timers[(label, p.key)] = make_timer(p.stmt, ctx)
    numbers = {c: calibrate(tm, target_s) for c, tm in timers.items()}
    samples: dict[tuple, list[float]] = {c: [] for c in timers}
    order = list(timers)
    rng = random.Random(0)
    for r in range(repeat):
        rng.shuffle(order)
        for c in order:
            samples[c].append(timers[c].timeit(numbers[c]) / numbers[c] * 1e9)
        if (r + 1) % max(1, repeat // 4) == 0:
            print(f"  round {r + 1}/{repeat}", flush=True)
    return {c: {**summarize(s), "number": numbers[c], "repeat": repeat,
                "samples_ns": [round(x, 1) for x in s]} for c, s in samples.items()}


def git_describe() -> str:
    """HEAD's commit, with '+dirty' when the tree has changes (the build measured may differ)."""
    try:
        run = lambda *a: subprocess.run(["git", *a], capture_output=True, text=True, timeout=10,
                                        cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip()
        return run("rev-parse", "--short", "HEAD") + ("+dirty" if run("status", "--porcelain") else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def machine_info() -> dict:
    model = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {
        "cpu_model": model,
        "cpu_count": os.cpu_count(),
        "cpu_affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "load_average": os.getloadavg(),
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "torch": torch.__version__,
        "jax": getattr(optional("jax"), "__version__", None),
        "tvm_ffi": getattr(tvm_ffi, "__version__", None),
        "godlpack": godlpack.__version__,
        "git": git_describe(),
        "extension_mtime": datetime.datetime.fromtimestamp(
            os.path.getmtime(godlpack._godlpack.__file__), datetime.timezone.utc).isoformat(timespec="seconds"),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }


def fmt_ns(x: float) -> str:
    return f"{x:,.0f}" if x >= 100 else f"{x:.1f}"


def ratio_summary(num: list[float], den: list[float]) -> dict:
    """Per-round ratios (both timed in the same round), as median and IQR."""
    r = [x / y for x, y in zip(num, den)]
    q1, med, q3 = statistics.quantiles(r, n=4, method="inclusive")
    # The ratio of the minima: on a loaded machine, the least disturbed rounds.
    return {"median": med, "q1": q1, "q3": q3, "iqr": q3 - q1, "min_ratio": min(num) / min(den)}


def compute_ratios(res: dict, groups: dict, labels: list[str], samples: dict) -> dict:
    """Per group: godlpack against tvm-ffi, against the fastest peer and against the floor."""
    out = {}
    for g, (title, keys) in groups.items():
        rows = group_rows(keys, lambda k: k in res["paths"])
        ours = next((p for p, impl in rows if impl == "godlpack"), None)
        if ours is None:
            continue
        peers = [(p, impl) for p, impl in rows if impl not in ("godlpack", "godlpack*", "godlpack-cmp", "floor")]
        med = lambda row: statistics.median(res["paths"][row[0].key]["results"][s]["median_ns"] for s in labels)
        against = {}
        if peers:
            against["fastest peer"] = min(peers, key=med)
        tvm = next((row for row in peers if row[1] == "tvm-ffi"), None)
        if tvm is not None:
            against["tvm-ffi"] = tvm
        cmp = next((row for row in rows if row[1] == "godlpack-cmp"), None)
        if cmp is not None:
            against["other build"] = cmp
        fl = next((row for row in rows if row[1] == "floor"), None)
        if fl is not None:
            against["floor"] = fl
        out[g] = {"title": title, "ours": ours.key,
                  "vs": {name: {"key": p.key, "impl": impl,
                                "sizes": {s: ratio_summary(samples[(s, ours.key)], samples[(s, p.key)])
                                          for s in labels}}
                         for name, (p, impl) in against.items()}}
    return out


def print_tables(res: dict, sizes: list[tuple[str, int]], paths: list[Path]) -> None:
    labels = [s for s, _ in sizes]
    flat = res["flatness"]
    w = max(len(p.label) for p in paths) + 2
    print(f"\nMedian ns per call [IQR], {res['config']['repeat']} rounds; timing loop overhead "
          + ", ".join(f"{fmt_ns(res['loop_overhead_ns'][s])}" for s in labels) + " ns (not subtracted)")
    for g, (title, keys) in GROUPS.items():
        if g not in res["config"]["groups"]:
            continue
        rows = group_rows(keys, lambda k: k in res["paths"])
        if not rows:
            continue
        print(f"\n== {title}")
        print(" " * w + f"{'':13}" + "".join(f"{s:>19}" for s in labels) + "  flat(med)")
        for p, impl in rows:
            cells = res["paths"][p.key]["results"]
            row = "".join(f"{fmt_ns(cells[s]['median_ns']) + ' [' + fmt_ns(cells[s]['iqr_ns']) + ']':>19}"
                          for s in labels)
            fm = flat["median"][p.key]
            print(f"{p.label:<{w}}{impl:<13}{row}  {fm:9.3f}{'' if fm <= FLATNESS_TARGET else ' !'}")
        r = res["ratios"].get(g)
        if r:
            for name, v in r["vs"].items():
                cells = "".join(f"{x['median']:>7.2f} [{x['iqr']:.2f}] {x['min_ratio']:.2f}" for x in v["sizes"].values())
                print(f"{'  godlpack / ' + name + ' (' + v['impl'] + ')':<{w + 13}}{cells}")
    print(f"\nRatios: per round (same moment), median [IQR], then min/min (the least disturbed rounds); "
          f"< 1: godlpack faster. Flatness = max/min "
          f"over sizes of the median; target <= {FLATNESS_TARGET}, '!' marks a miss.")
    missing = [p.key for p in PATHS if not available(p)]
    if missing:
        print("Left out (peer not installed): " + ", ".join(missing))


def plot(res: dict, sizes: list[tuple[str, int]], paths: list[Path], png: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    xs = [n * ITEMSIZE for _, n in sizes]
    groups = [(title, group_rows(keys, lambda k: k in res["paths"])) for g, (title, keys) in GROUPS.items()
              if g in res["config"]["groups"]]
    groups = [(t, rows) for t, rows in groups if rows]
    ncol = 3
    nrow = (len(groups) + ncol - 1) // ncol
    fig, axes = plt.subplots(nrow, ncol, figsize=(6 * ncol, 4.5 * nrow), squeeze=False)
    styles = {"godlpack": ("tab:blue", "-"), "godlpack*": ("tab:cyan", "--"), "godlpack-cmp": ("tab:gray", "--"),
              "tvm-ffi": ("tab:red", "-"),
              "NumPy": ("tab:green", "-."), "PyTorch": ("tab:orange", "-."), "JAX": ("tab:purple", "-."),
              "floor": ("black", ":")}
    for ax, (title, rows) in zip(axes.flat, groups):
        for p, impl in rows:
            colour, style = styles[impl]
            ys = [res["paths"][p.key]["results"][s]["median_ns"] for s, _ in sizes]
            ax.plot(xs, ys, marker="o", color=colour, linestyle=style, label=f"{impl}: {p.label}")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(xs, [s for s, _ in sizes])
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        ax.set_title(title, fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=6)
    for ax in list(axes.flat)[len(groups):]:
        ax.axis("off")
    m = res["machine"]
    fig.suptitle(f"DLPack exchange cost per call (median ns, float32) — {m['cpu_model']}, {m['cpu_count']} cores, "
                 f"Python {m['python']}, NumPy {m['numpy']}, torch {m['torch']}, JAX {m['jax']}, "
                 f"tvm-ffi {m['tvm_ffi']}")
    fig.tight_layout()
    fig.savefig(png, dpi=100, format="png")  # the .tmp name hides the type
    plt.close(fig)


def write_atomic(path: str, write) -> None:
    tmp = path + ".tmp"  # *.tmp in bench/results is git-ignored (bench/out entirely)
    write(tmp)
    os.replace(tmp, path)


def write_json(path: str, obj) -> None:
    with open(path, "w") as f:
        json.dump(obj, f, indent=1)
        f.write("\n")


def run_loop(key: str, size: tuple[str, int], seconds: float) -> None:
    """Runs one path in a tight loop, untimed, for an external profiler."""
    ctx = make_context(size[1])
    timer = make_timer(BY_KEY[key].stmt, ctx)
    number = calibrate(timer, 0.05)
    # Printed once warm, so a profiler can attach now: perf record -p PID.
    print(f"looping {key} at {size[0]} for {seconds:g} s in pid {os.getpid()}", flush=True)
    end = time.perf_counter() + seconds
    calls = 0
    while time.perf_counter() < end:
        timer.timeit(number)
        calls += number
    print(f"{key} at {size[0]}: {calls} calls in {seconds:g} s")


FLOOR = None  # bench/floor.c, built in main()
COMPARE = None  # --compare-build: the other build's godlpack package


def add_compare_build(src: str) -> None:
    """Loads another godlpack build as godlpack_cmp (a second Go runtime in the
    process: fine for these C-only import paths) and adds its import rows."""
    global COMPARE
    import shutil

    dst = os.path.join(OUT, "compare")
    shutil.rmtree(dst, ignore_errors=True)
    # Without its C headers: the Makefile would take them for sources of the extension.
    shutil.copytree(os.path.join(src, "godlpack"), os.path.join(dst, "godlpack_cmp"),
                    ignore=shutil.ignore_patterns("include", "__pycache__"))
    sys.path.insert(0, dst)
    COMPARE = importlib.import_module("godlpack_cmp")
    extra = [P("cmp_from_np", "other build: from_dlpack(ndarray)", "godlpack-cmp", "cf(a)", "a"),
             P("cmp_from_torch", "other build: from_dlpack(torch)", "godlpack-cmp", "cf(t)", "t"),
             P("cmp_alt", "other build: from_dlpack: ndarray, torch", "godlpack-cmp", "cf(a); cf(t)", "t")]
    for p, g in zip(extra, ("np_import", "torch_import", "alternating")):
        PATHS.append(p)
        BY_KEY[p.key] = p
        GROUPS[g][1].insert(1, p.key)


def main() -> int:
    global FLOOR
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="few short repeats (smoke run), writes bench-quick.*")
    ap.add_argument("--sizes", default=DEFAULT_SIZES,
                    help=f"comma-separated: N elements or N KiB/MiB/GiB (default {DEFAULT_SIZES})")
    ap.add_argument("--repeat", type=int, help="rounds over all paths and sizes (default 101, quick 7)")
    ap.add_argument("--target-ms", type=float, help="time per repeat of one cell (default 4, quick 1)")
    ap.add_argument("--paths", help="regular expression selecting path keys (default all)")
    ap.add_argument("--groups", help="comma-separated groups (default all): " + ", ".join(GROUPS))
    ap.add_argument("--out", help="output folder (default bench/out, git-ignored)")
    ap.add_argument("--update", action="store_true", help="write the committed bench/results/ (make bench UPDATE=1)")
    ap.add_argument("--compare-build", metavar="DIR",
                    help="also time another godlpack build (DIR holds its godlpack/ package, e.g. a copy of "
                         "python/godlpack from an older commit) on the import paths, in the same process")
    ap.add_argument("--no-plot", action="store_true", help="skip the PNG")
    ap.add_argument("--loop", metavar="KEY", help="run one path untimed for --seconds (for perf/callgrind)")
    ap.add_argument("--seconds", type=float, default=5.0, help="duration of --loop")
    args = ap.parse_args()
    out = args.out or (RESULTS if args.update else OUT)
    FLOOR = floor.build(OUT)
    if args.compare_build:
        add_compare_build(args.compare_build)

    try:
        sizes = [parse_size(tok) for tok in args.sizes.split(",") if tok.strip()]
    except ValueError as e:
        ap.error(str(e))
    if args.loop:
        if args.loop not in BY_KEY or not available(BY_KEY[args.loop]):
            ap.error(f"unknown or unavailable path {args.loop!r}; one of {', '.join(BY_KEY)}")
        run_loop(args.loop, sizes[0], args.seconds)
        return 0
    groups = GROUPS
    if args.groups:
        unknown = [g for g in args.groups.split(",") if g not in GROUPS]
        if unknown:
            ap.error(f"unknown group(s) {unknown}; one of {', '.join(GROUPS)}")
        groups = {g: GROUPS[g] for g in args.groups.split(",")}
    wanted = {k.partition(":")[0] for _, keys in groups.values() for k in keys}
    paths = [p for p in PATHS if p.key in wanted and available(p) and (not args.paths or re.search(args.paths, p.key))]
    repeat = args.repeat or (7 if args.quick else 101)
    target_s = (args.target_ms or (1.0 if args.quick else 4.0)) / 1e3
    if repeat < 2:
        ap.error("--repeat must be at least 2")

    res = {
        "machine": machine_info(),
        "config": {"repeat": repeat, "target_ms_per_repeat": target_s * 1e3, "quick": args.quick,
                   "dtype": "float32", "gc_disabled_while_timing": True, "groups": list(groups),
                   "note": "per call = whole exchange incl. deleters; timing loop overhead not subtracted; "
                           "ratios per round, median [IQR]"},
        "sizes": [{"label": s, "elements": n, "bytes": n * ITEMSIZE} for s, n in sizes],
        "paths": {p.key: {"label": p.label, "impl": p.impl, "stmt": p.stmt, "results": {}} for p in paths},
        "loop_overhead_ns": {},
        "zero_copy": {},
    }
    print(f"godlpack bench: {len(paths)} paths x {len(sizes)} sizes, {repeat} rounds of ~{target_s * 1e3:g} ms; "
          f"{res['machine']['cpu_model']}, {res['machine']['cpu_count']} cores, load {res['machine']['load_average']}")
    t0 = time.perf_counter()
    # All sizes stay allocated (4 x 256 MiB at the largest default size) and are timed together.
    ctxs = {label: make_context(n) for label, n in sizes}
    for label, ctx in ctxs.items():
        res["zero_copy"][label] = check_zero_copy(ctx, paths)
    bad = [f"{k} at {s}" for s, zc in res["zero_copy"].items() for k, ok in zc.items() if not ok]
    print("  zero-copy: " + ("OK on all paths and sizes" if not bad else "copies: " + ", ".join(bad)), flush=True)
    cells = measure(ctxs, paths, repeat, target_s)
    for (label, key), c in cells.items():
        if key == "_loop":
            res["loop_overhead_ns"][label] = c["median_ns"]
        else:
            res["paths"][key]["results"][label] = c
    del ctxs
    gc.collect()

    labels = [s for s, _ in sizes]
    cell = lambda key, label, stat: res["paths"][key]["results"][label][stat + "_ns"]
    res["ratios"] = compute_ratios(res, groups, labels, {c: v["samples_ns"] for c, v in cells.items()})
    res["flatness"] = {"target": FLATNESS_TARGET,
                       **{stat: {p.key: max(cell(p.key, s, stat) for s in labels)
                                 / min(cell(p.key, s, stat) for s in labels) for p in paths}
                          for stat in ("median", "p10")}}
    res["elapsed_s"] = time.perf_counter() - t0
    print_tables(res, sizes, paths)
    ours_copy = [b for b in bad if BY_KEY[b.split(" at ")[0]].impl in ("godlpack", "godlpack*")]
    print("Zero-copy (result data pointer == source data pointer): "
          + ("every godlpack path and size" if not ours_copy else "NO: " + ", ".join(ours_copy))
          + ("" if len(bad) == len(ours_copy) else f"; peers copied on {len(bad) - len(ours_copy)} cells"))

    os.makedirs(out, exist_ok=True)
    stem = os.path.join(out, "bench-quick" if args.quick else "bench")
    write_atomic(stem + ".json", lambda p: write_json(p, res))
    if not args.no_plot:
        write_atomic(stem + ".png", lambda p: plot(res, sizes, paths, p))
    print(f"Wrote {stem}.json" + ("" if args.no_plot else f" and {stem}.png")
          + f" ({res['elapsed_s']:.0f} s)")
    return 0 if not ours_copy else 1


if __name__ == "__main__":
    sys.exit(main())
