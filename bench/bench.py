"""Per-call cost of godlpack's DLPack paths next to the native NumPy/PyTorch ones.

Everything runs in one process and is timed side by side: for each tensor size
every path is calibrated, then measured in interleaved rounds (one repeat of
each path per round), so drift and background load hit all paths alike. Each
figure is the cost of one whole exchange: producing the capsule, importing it
and, when the statement's result is dropped, running the deleters.

    PYTHONPATH=pyext .venv/bin/python bench/bench.py            # full run, ~1-2 min
    PYTHONPATH=pyext .venv/bin/python bench/bench.py --quick    # smoke run
    PYTHONPATH=pyext .venv/bin/python bench/bench.py --loop torch_from_gdl --seconds 5  # for perf

Writes bench/results/bench.json and bench/results/bench.png (bench-quick.* with --quick).
"""
from __future__ import annotations

import argparse
import datetime
import gc
import json
import os
import platform
import re
import statistics
import sys
import time
import timeit
from dataclasses import dataclass

import numpy as np
import torch

import godlpack

MIB = 1 << 20
DEFAULT_SIZES = "1,1KiB,1MiB,16MiB,256MiB"
ITEMSIZE = 4  # float32
MAX_VERSION = (1, 3)


@dataclass(frozen=True)
class Path:
    """One measured statement. stmt uses only the names set up by make_context."""

    key: str
    label: str
    kind: str  # "ours", "native" or "probe"
    stmt: str
    source: str | None  # context object whose data the result must alias (None: no data)


# Functions are bound to short local names (nf, gf, tf) so the timed loop pays
# LOAD_FAST, not attribute lookups. a: ndarray, t: torch tensor, g: godlpack
# view of a, z: Go-allocated godlpack.zeros, gdl/adl: bound __dlpack__ methods.
PATHS = [
    Path("gdl_from_np", "godlpack.from_dlpack(ndarray)", "ours", "gf(a)", "a"),
    Path("np_from_gdl", "np.from_dlpack(godlpack)", "ours", "nf(g)", "a"),
    Path("rt_np_gdl_np", "np -> godlpack -> np", "ours", "nf(gf(a))", "a"),
    Path("gdl_from_torch", "godlpack.from_dlpack(torch)", "ours", "gf(t)", "t"),
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
    # Probes for the cost of one C->Go call: the dtype getter asks Go for the
    # name (gdlDTypeName), the ndim getter is pure C; both return a new object.
    Path("probe_dtype", "Tensor.dtype (C getter + 1 C->Go call)", "probe", "g.dtype", None),
    Path("probe_ndim", "Tensor.ndim (C getter only)", "probe", "g.ndim", None),
]
BY_KEY = {p.key: p for p in PATHS}

# (ours, native baseline) pairs for the ratio table.
RATIOS = [
    ("gdl_from_np", "np_from_np"),
    ("np_from_gdl", "np_from_np"),
    ("gdl_from_torch", "np_from_torch"),
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
        raise argparse.ArgumentTypeError(f"bad size {tok!r}: use N (elements) or N KiB/MiB/GiB")
    n, unit = int(m.group(1)), (m.group(2) or "").upper().rstrip("IB")
    if not unit:
        return (f"{n} el", n)
    nbytes = n << {"K": 10, "M": 20, "G": 30}[unit]
    if nbytes % ITEMSIZE:
        raise argparse.ArgumentTypeError(f"{tok!r} is not a whole number of float32 elements")
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
    return dict(a=a, t=t, g=g, z=z, gdl=g.__dlpack__, adl=a.__dlpack__, mv=MAX_VERSION,
                nf=np.from_dlpack, gf=godlpack.from_dlpack, tf=torch.from_dlpack)


def check_zero_copy(ctx: dict, paths: list[Path]) -> dict[str, bool]:
    """Runs each statement once: its result must alias the source's memory."""
    ok = {}
    for p in paths:
        if p.source is None:
            continue
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
    q1, med, q3 = statistics.quantiles(samples_ns, n=4, method="inclusive")
    return {
        "median_ns": statistics.median(samples_ns),
        "q1_ns": q1,
        "q3_ns": q3,
        "iqr_ns": q3 - q1,
        "stdev_ns": statistics.stdev(samples_ns) if len(samples_ns) > 1 else 0.0,
        "min_ns": min(samples_ns),
    }


def measure_size(ctx: dict, paths: list[Path], repeat: int, target_s: float) -> dict[str, dict]:
    """Calibrates every path, then times `repeat` interleaved rounds of all of them."""
    timers = {p.key: make_timer(p.stmt, ctx) for p in paths}
    timers["_loop"] = make_timer("pass", ctx)  # the timing loop's own cost
    numbers = {k: calibrate(tm, target_s) for k, tm in timers.items()}
    samples: dict[str, list[float]] = {k: [] for k in timers}
    keys = list(timers)
    for r in range(repeat):
        # Rotate the order each round so no path always runs right after another.
        for k in keys[r % len(keys):] + keys[: r % len(keys)]:
            samples[k].append(timers[k].timeit(numbers[k]) / numbers[k] * 1e9)
    return {k: {**summarize(s), "number": numbers[k], "repeat": repeat, "samples_ns": s}
            for k, s in samples.items()}


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
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }


def fmt_ns(x: float) -> str:
    return f"{x:,.0f}" if x >= 100 else f"{x:.1f}"


def print_tables(res: dict, sizes: list[tuple[str, int]], paths: list[Path], ratios, flat) -> None:
    labels = [s for s, _ in sizes]
    w = max(len(p.label) for p in paths) + 2
    print(f"\nMedian ns per call [IQR], {res['config']['repeat']} repeats; timing loop overhead "
          + ", ".join(f"{fmt_ns(res['loop_overhead_ns'][s])}" for s in labels) + " ns (not subtracted)")
    print(" " * w + "".join(f"{s:>17}" for s in labels) + "  flatness")
    for kind in ("ours", "native", "probe"):
        print(f"-- {kind}")
        for p in (p for p in paths if p.kind == kind):
            cells = res["paths"][p.key]["results"]
            row = "".join(f"{fmt_ns(cells[s]['median_ns']) + ' [' + fmt_ns(cells[s]['iqr_ns']) + ']':>17}"
                          for s in labels)
            f = flat[p.key]
            print(f"{p.label:<{w}}{row}  {f:.3f}{'' if f <= FLATNESS_TARGET else ' !'}")
    print(f"\nRatio ours / native (median over median; < 1 is faster than native)")
    w2 = max(len(BY_KEY[o].label) + len(BY_KEY[n].label) for o, n in ratios) + 6
    print(" " * w2 + "".join(f"{s:>10}" for s in labels))
    for r in res["ratios"]:
        name = f"{BY_KEY[r['ours']].label}  vs  {BY_KEY[r['native']].label}"
        print(f"{name:<{w2}}" + "".join(f"{r['ratio'][s]:>10.2f}" for s in labels))
    print(f"\nFlatness = max/min median over sizes (target <= {FLATNESS_TARGET}; '!' marks a miss).")
    if res.get("cgo_probe_ns"):
        print("C->Go estimate, Tensor.dtype - Tensor.ndim (one cgo call + Go's DType.String + a str): "
              + ", ".join(f"{fmt_ns(res['cgo_probe_ns'][s])}" for s in labels) + " ns")


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
    ap.add_argument("--repeat", type=int, help="rounds per size (default 41, quick 7)")
    ap.add_argument("--target-ms", type=float, help="time per repeat of one path (default 12, quick 2)")
    ap.add_argument("--paths", help="regular expression selecting path keys (default all)")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"),
                    help="output folder (default bench/results)")
    ap.add_argument("--no-plot", action="store_true", help="skip the PNG")
    ap.add_argument("--loop", metavar="KEY", help="run one path untimed for --seconds (for perf/callgrind)")
    ap.add_argument("--seconds", type=float, default=5.0, help="duration of --loop")
    args = ap.parse_args()

    sizes = [parse_size(tok) for tok in args.sizes.split(",") if tok.strip()]
    if args.loop:
        if args.loop not in BY_KEY:
            ap.error(f"unknown path {args.loop!r}; one of {', '.join(BY_KEY)}")
        run_loop(args.loop, sizes[0], args.seconds)
        return 0
    paths = [p for p in PATHS if not args.paths or re.search(args.paths, p.key)]
    keys = {p.key for p in paths}
    ratios = [(o, n) for o, n in RATIOS if o in keys and n in keys]
    repeat = args.repeat or (7 if args.quick else 41)
    target_s = (args.target_ms or (2.0 if args.quick else 12.0)) / 1e3
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
    for label, n in sizes:
        ctx = make_context(n)
        zc = check_zero_copy(ctx, paths)
        res["zero_copy"][label] = zc
        cells = measure_size(ctx, paths, repeat, target_s)
        res["loop_overhead_ns"][label] = cells.pop("_loop")["median_ns"]
        for k, cell in cells.items():
            res["paths"][k]["results"][label] = cell
        bad = [k for k, ok in zc.items() if not ok]
        print(f"  {label:>8}: done in {time.perf_counter() - t0:5.1f} s; zero-copy "
              + ("OK on all paths" if not bad else "FAILED: " + ", ".join(bad)), flush=True)
        del ctx, cells
        gc.collect()  # frees this size's tensors before the next is allocated

    labels = [s for s, _ in sizes]
    res["ratios"] = [{"ours": o, "native": n, "ratio": {s: res["paths"][o]["results"][s]["median_ns"]
                                                        / res["paths"][n]["results"][s]["median_ns"]
                                                        for s in labels}} for o, n in ratios]
    flat = {}
    for p in paths:
        meds = [res["paths"][p.key]["results"][s]["median_ns"] for s in labels]
        flat[p.key] = max(meds) / min(meds)
    res["flatness"] = {"target": FLATNESS_TARGET, "max_over_min": flat}
    if {"probe_dtype", "probe_ndim"} <= keys:
        res["cgo_probe_ns"] = {s: res["paths"]["probe_dtype"]["results"][s]["median_ns"]
                               - res["paths"]["probe_ndim"]["results"][s]["median_ns"] for s in labels}
    res["elapsed_s"] = time.perf_counter() - t0
    print_tables(res, sizes, paths, ratios, flat)
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
