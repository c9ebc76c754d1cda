"""Per-call cost of godlpack's DLPack paths next to the native NumPy/PyTorch ones.

Everything runs in one process and is timed side by side: every (path, size)
cell is calibrated, then all cells are timed in rounds, each round running
every cell once in a fresh random order, so drift and background load hit all
paths and sizes alike. Each figure is the cost of one whole exchange: producing
the capsule, importing it and, when the statement's result is dropped, running
the deleters.

    PYTHONPATH=pyext .venv/bin/python bench/bench.py            # full run, about 1 min
    PYTHONPATH=pyext .venv/bin/python bench/bench.py --quick    # smoke run
    PYTHONPATH=pyext .venv/bin/python bench/bench.py --loop gdl_from_np --sizes 1KiB --seconds 20
        # one path untimed; attach a profiler to the pid it prints

Writes bench/results/bench.json and bench/results/bench.png (bench-quick.* with --quick).
"""
from __future__ import annotations

import argparse
import datetime
import gc
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

DEFAULT_SIZES = "1,1KiB,1MiB,16MiB,256MiB"
ITEMSIZE = 4  # float32
MAX_VERSION = (1, 3)


@dataclass(frozen=True)
class Path:
    """One measured statement. stmt uses only the names set up by make_context."""

    key: str
    label: str
    kind: str  # "ours" or "native"
    stmt: str
    source: str  # name of the context object whose data the result must alias


# Functions are bound to short local names (nf, gf, tf) so the timed loop pays
# LOAD_FAST, not attribute lookups. a: ndarray, t: torch tensor, g: godlpack
# view of a, z: Go-allocated godlpack.zeros, gdl/adl: bound __dlpack__ methods.
PATHS = [
    Path("gdl_from_np", "godlpack.from_dlpack(ndarray)", "ours", "gf(a)", "a"),
    Path("np_from_gdl", "np.from_dlpack(godlpack)", "ours", "nf(g)", "a"),
    Path("rt_np_gdl_np", "np -> godlpack -> np", "ours", "nf(gf(a))", "a"),
    Path("gdl_from_torch", "godlpack.from_dlpack(torch)", "ours", "gf(t)", "t"),
    Path("gdl_from_torch_dl", "godlpack.from_dlpack(torch) via __dlpack__", "ours", "gf(t, device=cpu)", "t"),
    Path("torch_from_gdl", "torch.from_dlpack(godlpack)", "ours", "tf(g)", "a"),
    Path("rt_torch_gdl_torch", "torch -> godlpack -> torch", "ours", "tf(gf(t))", "t"),
    Path("gdl_dlpack", "Tensor.__dlpack__()", "ours", "gdl()", "a"),
    Path("gdl_dlpack_v", "Tensor.__dlpack__(max_version=(1,3))", "ours", "gdl(max_version=mv)", "a"),
    Path("gdl_from_zeros", "godlpack.from_dlpack(zeros)", "ours", "gf(z)", "z"),
    Path("np_from_zeros", "np.from_dlpack(zeros)", "ours", "nf(z)", "z"),
    Path("torch_from_zeros", "torch.from_dlpack(zeros)", "ours", "tf(z)", "z"),
    Path("np_from_np", "np.from_dlpack(ndarray)", "native", "nf(a)", "a"),
    Path("np_dlpack", "ndarray.__dlpack__()", "native", "adl()", "a"),
    Path("np_dlpack_v", "ndarray.__dlpack__(max_version=(1,3))", "native", "adl(max_version=mv)", "a"),
    Path("torch_from_np", "torch.from_dlpack(ndarray)", "native", "tf(a)", "a"),
    Path("np_from_torch", "np.from_dlpack(torch)", "native", "nf(t)", "t"),
    Path("torch_from_torch", "torch.from_dlpack(torch)", "native", "tf(t)", "t"),
    Path("rt_np_np_np", "np -> np -> np", "native", "nf(nf(a))", "a"),
    Path("rt_torch_torch_torch", "torch -> torch -> torch", "native", "tf(tf(t))", "t"),
]
BY_KEY = {p.key: p for p in PATHS}

# (ours, native baseline) pairs for the ratio table.
RATIOS = [
    ("gdl_from_np", "np_from_np"),
    ("np_from_gdl", "np_from_np"),
    ("gdl_from_torch", "np_from_torch"),
    ("gdl_from_torch", "gdl_from_torch_dl"),  # the C exchange API against __dlpack__, same consumer
    ("gdl_from_torch_dl", "np_from_torch"),
    ("torch_from_gdl", "torch_from_np"),
    ("gdl_dlpack", "np_dlpack"),
    ("gdl_dlpack_v", "np_dlpack_v"),
    ("rt_np_gdl_np", "rt_np_np_np"),
    ("rt_torch_gdl_torch", "rt_torch_torch_torch"),
    ("rt_torch_gdl_torch", "rt_np_np_np"),
    ("gdl_from_zeros", "np_from_np"),
    ("np_from_zeros", "np_from_np"),
    ("torch_from_zeros", "torch_from_np"),
]
FLATNESS_TARGET = 1.10


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
    """Address of the first element of an ndarray, torch tensor, godlpack tensor or capsule."""
    if isinstance(x, np.ndarray):
        return x.__array_interface__["data"][0]
    if isinstance(x, torch.Tensor):
        return x.data_ptr()
    if isinstance(x, godlpack.Tensor):
        return x.data_ptr
    return godlpack.from_dlpack(x).data_ptr  # a capsule from __dlpack__


def make_context(n: int) -> dict:
    """Allocates one tensor of each kind with n float32 elements (touched, so resident)."""
    a = np.ones(n, dtype=np.float32)
    t = torch.ones(n, dtype=torch.float32)
    g = godlpack.from_dlpack(a)
    z = godlpack.zeros((n,), "float32")
    # device=cpu makes godlpack.from_dlpack take the __dlpack__ path, not the exchange API.
    return dict(a=a, t=t, g=g, z=z, gdl=g.__dlpack__, adl=a.__dlpack__, mv=MAX_VERSION, cpu=(1, 0),
                nf=np.from_dlpack, gf=godlpack.from_dlpack, tf=torch.from_dlpack)


def check_zero_copy(ctx: dict, paths: list[Path]) -> dict[str, bool]:
    """Runs each statement once: its result must alias the source's memory."""
    ok = {}
    for p in paths:
        result = eval(p.stmt, {}, ctx)  # noqa: S307 - our own fixed statements
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
        "godlpack": godlpack.__version__,
        "git": git_describe(),
        "extension_mtime": datetime.datetime.fromtimestamp(
            os.path.getmtime(godlpack._godlpack.__file__), datetime.timezone.utc).isoformat(timespec="seconds"),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }


def fmt_ns(x: float) -> str:
    return f"{x:,.0f}" if x >= 100 else f"{x:.1f}"


def print_tables(res: dict, sizes: list[tuple[str, int]], paths: list[Path]) -> None:
    labels = [s for s, _ in sizes]
    flat = res["flatness"]
    w = max(len(p.label) for p in paths) + 2
    print(f"\nMedian ns per call [IQR], {res['config']['repeat']} repeats; timing loop overhead "
          + ", ".join(f"{fmt_ns(res['loop_overhead_ns'][s])}" for s in labels) + " ns (not subtracted)")
    print(" " * w + "".join(f"{s:>17}" for s in labels) + "  flat(med) flat(p10)")
    for kind in ("ours", "native"):
        print(f"-- {kind}")
        for p in (p for p in paths if p.kind == kind):
            cells = res["paths"][p.key]["results"]
            row = "".join(f"{fmt_ns(cells[s]['median_ns']) + ' [' + fmt_ns(cells[s]['iqr_ns']) + ']':>17}"
                          for s in labels)
            fm, fp = flat["median"][p.key], flat["p10"][p.key]
            print(f"{p.label:<{w}}{row}  {fm:9.3f}{' ' if fm <= FLATNESS_TARGET else '!'}"
                  f"{fp:9.3f}{'' if fp <= FLATNESS_TARGET else '!'}")
    w2 = max(len(BY_KEY[r["ours"]].label) + len(BY_KEY[r["native"]].label) for r in res["ratios"]) + 6
    for stat in ("median", "p10"):
        print(f"\nRatio ours / native, {stat} over {stat} (< 1: faster than native)")
        print(" " * w2 + "".join(f"{s:>10}" for s in labels))
        for r in res["ratios"]:
            name = f"{BY_KEY[r['ours']].label}  vs  {BY_KEY[r['native']].label}"
            print(f"{name:<{w2}}" + "".join(f"{r[stat][s]:>10.2f}" for s in labels))
    print(f"\nFlatness = max/min over sizes of the median (flat(med)) and of the fastest decile "
          f"(flat(p10)); target <= {FLATNESS_TARGET}, '!' marks a miss.")


def plot(res: dict, sizes: list[tuple[str, int]], paths: list[Path], png: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    xs = [n * ITEMSIZE for _, n in sizes]
    colours = plt.get_cmap("tab20").colors
    styles = ["-", "--", "-.", ":"]
    fig, axes = plt.subplots(1, 2, figsize=(15, 8), sharey=True)
    for ax, kind in zip(axes, ("ours", "native")):
        for i, p in enumerate(p for p in paths if p.kind == kind):
            ys = [res["paths"][p.key]["results"][s]["median_ns"] for s, _ in sizes]
            ax.plot(xs, ys, marker="o", color=colours[(2 * i) % 20 + (i >= 10)], linestyle=styles[i % 4],
                    label=p.label)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(xs, [s for s, _ in sizes])
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        ax.set_xlabel("tensor size (float32; log scale)")
        ax.set_title("godlpack paths" if kind == "ours" else "native baselines")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=2)
    axes[0].set_ylabel("median ns per call")
    m = res["machine"]
    fig.suptitle(f"DLPack exchange cost per call — {m['cpu_model']}, {m['cpu_count']} cores, "
                 f"Python {m['python']}, NumPy {m['numpy']}, torch {m['torch']}")
    fig.tight_layout()
    fig.savefig(png, dpi=110, format="png")  # the .tmp name hides the type
    plt.close(fig)


def write_atomic(path: str, write) -> None:
    tmp = path + ".tmp"  # *.tmp in bench/results is git-ignored
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="few short repeats (smoke run), writes bench-quick.*")
    ap.add_argument("--sizes", default=DEFAULT_SIZES,
                    help=f"comma-separated: N elements or N KiB/MiB/GiB (default {DEFAULT_SIZES})")
    ap.add_argument("--repeat", type=int, help="rounds over all paths and sizes (default 101, quick 9)")
    ap.add_argument("--target-ms", type=float, help="time per repeat of one cell (default 4, quick 1)")
    ap.add_argument("--paths", help="regular expression selecting path keys (default all)")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"),
                    help="output folder (default bench/results)")
    ap.add_argument("--no-plot", action="store_true", help="skip the PNG")
    ap.add_argument("--loop", metavar="KEY", help="run one path untimed for --seconds (for perf/callgrind)")
    ap.add_argument("--seconds", type=float, default=5.0, help="duration of --loop")
    args = ap.parse_args()

    try:
        sizes = [parse_size(tok) for tok in args.sizes.split(",") if tok.strip()]
    except ValueError as e:
        ap.error(str(e))
    if args.loop:
        if args.loop not in BY_KEY:
            ap.error(f"unknown path {args.loop!r}; one of {', '.join(BY_KEY)}")
        run_loop(args.loop, sizes[0], args.seconds)
        return 0
    paths = [p for p in PATHS if not args.paths or re.search(args.paths, p.key)]
    keys = {p.key for p in paths}
    ratios = [(o, n) for o, n in RATIOS if o in keys and n in keys]
    repeat = args.repeat or (9 if args.quick else 101)
    target_s = (args.target_ms or (1.0 if args.quick else 4.0)) / 1e3
    if repeat < 2:
        ap.error("--repeat must be at least 2")

    res = {
        "machine": machine_info(),
        "config": {"repeat": repeat, "target_ms_per_repeat": target_s * 1e3, "quick": args.quick,
                   "dtype": "float32", "gc_disabled_while_timing": True,
                   "note": "per call = whole exchange incl. deleters; timing loop overhead not subtracted"},
        "sizes": [{"label": s, "elements": n, "bytes": n * ITEMSIZE} for s, n in sizes],
        "paths": {p.key: {"label": p.label, "kind": p.kind, "stmt": p.stmt, "results": {}} for p in paths},
        "loop_overhead_ns": {},
        "zero_copy": {},
    }
    print(f"godlpack bench: {len(paths)} paths x {len(sizes)} sizes, {repeat} repeats of ~{target_s * 1e3:g} ms; "
          f"{res['machine']['cpu_model']}, {res['machine']['cpu_count']} cores, load {res['machine']['load_average']}")
    t0 = time.perf_counter()
    # All sizes stay allocated (3 x 273 MiB at the default sizes) and are timed together.
    ctxs = {label: make_context(n) for label, n in sizes}
    for label, ctx in ctxs.items():
        res["zero_copy"][label] = check_zero_copy(ctx, paths)
    bad = [f"{k} at {s}" for s, zc in res["zero_copy"].items() for k, ok in zc.items() if not ok]
    print("  zero-copy: " + ("OK on all paths and sizes" if not bad else "FAILED: " + ", ".join(bad)), flush=True)
    for (label, key), cell in measure(ctxs, paths, repeat, target_s).items():
        if key == "_loop":
            res["loop_overhead_ns"][label] = cell["median_ns"]
        else:
            res["paths"][key]["results"][label] = cell
    del ctxs
    gc.collect()

    labels = [s for s, _ in sizes]
    cell = lambda key, label, stat: res["paths"][key]["results"][label][stat + "_ns"]
    res["ratios"] = [{"ours": o, "native": n,
                      **{stat: {s: cell(o, s, stat) / cell(n, s, stat) for s in labels} for stat in ("median", "p10")}}
                     for o, n in ratios]
    res["flatness"] = {"target": FLATNESS_TARGET,
                       **{stat: {p.key: max(cell(p.key, s, stat) for s in labels)
                                 / min(cell(p.key, s, stat) for s in labels) for p in paths}
                          for stat in ("median", "p10")}}
    res["elapsed_s"] = time.perf_counter() - t0
    print_tables(res, sizes, paths)
    all_zero_copy = all(all(zc.values()) for zc in res["zero_copy"].values())
    print(f"Zero-copy (result data pointer == source data pointer): {'yes, every path and size' if all_zero_copy else 'NO'}")

    os.makedirs(args.out, exist_ok=True)
    stem = os.path.join(args.out, "bench-quick" if args.quick else "bench")
    write_atomic(stem + ".json", lambda p: write_json(p, res))
    if not args.no_plot:
        write_atomic(stem + ".png", lambda p: plot(res, sizes, paths, p))
    print(f"Wrote {stem}.json" + ("" if args.no_plot else f" and {stem}.png")
          + f" ({res['elapsed_s']:.0f} s)")
    return 0 if all_zero_copy else 1


if __name__ == "__main__":
    sys.exit(main())
