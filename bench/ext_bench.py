"""Per-call cost of a Go extension function (package pyext) next to PyO3,
nanobind and gopy: sum(x) of one NumPy float64 array returning a float, at 1,
1K and 1M elements, a call with a keyword argument (kw(1.0, b=2.0)), method
calls on an object of a class (obj.fid(1.0), obj.sum(x)) and bytes both ways
(bytes_in(1 KiB), bytes_out() -> 1 KiB) (`make bench-ext`).

    python bench/ext_bench.py [--rounds 41] [--sizes 1,1000,1000000] [--no-gopy]
    python bench/ext_bench.py --summary bench/out/ext_bench.json   # the targets again

Builds the probes first (bench/ext/: gosum with tools/godlpack_build.py,
nbsum from nanobind's sources with $CXX, pyo3bench with maturin and cargo
(its cargo cache in bench/ext/pyo3bench/target; without cargo or maturin one
sentence says so and the PyO3 column is empty), gopysum with the gopy pinned
in examples/gopy/tools), into bench/out/, each only when its sources are
newer than the module. godlpack, PyO3 and nanobind run in this process:
every (function, size) cell is calibrated to about --cell-ms per batch, then
all cells are timed in --rounds rounds, each in a fresh random order, so load
and drift hit all alike; the table gives the median and IQR (p25-p75) per
call in ns and the ratios godlpack/PyO3 and godlpack/nanobind of the medians.
gopy runs in a child process (a gopy module is a second Go runtime, which
the one-runtime rule keeps out of godlpack's process) with nanobind's sum
again as its in-process reference. Samples and the table go to
bench/out/ext_bench.json and bench/out/ext_bench.txt; the table ends with
issue 32's targets as ratios to the floor ("C + 1 cgo call to empty Go
func") and to nanobind, and issue 39's: (pyext - floor) / PyO3 per row (what
pyext adds above Go's own price for the crossing, against PyO3's whole call).
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import sysconfig
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXT = os.path.join(ROOT, "bench", "ext")
OUT = os.path.join(ROOT, "bench", "out")
SUFFIX = sysconfig.get_config_var("EXT_SUFFIX")
GOPY_BUILD = os.path.join(EXT, "gopysum", "build")  # inside its Go module, as gopy needs
PYO3 = os.path.join(EXT, "pyo3bench")


# ---- building the probes ---------------------------------------------------

def _newest(*dirs):
    t = 0.0
    for d in dirs:
        for base, _, files in os.walk(d):
            if "/build" in base[len(d):]:
                continue
            for f in files:
                t = max(t, os.path.getmtime(os.path.join(base, f)))
    return t


def _stale(target, *sources):
    return not os.path.exists(target) or os.path.getmtime(target) < _newest(*sources)


def _run(cmd, cwd, env=None):
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{(r.stdout + r.stderr)[-2000:]}")


def build_gosum():
    so = os.path.join(OUT, "gosum" + SUFFIX)
    if _stale(so, os.path.join(EXT, "gosum"), os.path.join(ROOT, "pyext"), os.path.join(ROOT, "internal"), os.path.join(ROOT, "core")):
        _run([sys.executable, os.path.join(ROOT, "tools", "godlpack_build.py"), so, "."],
             cwd=os.path.join(EXT, "gosum"))


def build_nbsum():
    import nanobind  # pip install nanobind

    nb = os.path.dirname(nanobind.__file__)
    so = os.path.join(OUT, "nbsum" + SUFFIX)
    src = os.path.join(EXT, "nbsum", "nbsum.cpp")
    if os.path.exists(so) and os.path.getmtime(so) >= max(os.path.getmtime(src), os.path.getmtime(nanobind.__file__)):
        return
    # nanobind without CMake: its whole library is one translation unit.
    cxx = os.environ.get("CXX") or shutil.which("c++") or "g++"
    _run([cxx, "-std=c++17", "-O2", "-DNDEBUG", "-fPIC", "-shared", "-fvisibility=hidden", "-fno-strict-aliasing",
          "-I" + nanobind.include_dir(), "-I" + os.path.join(nb, "ext", "robin_map", "include"),
          "-I" + sysconfig.get_paths()["include"],
          os.path.join(nanobind.source_dir(), "nb_combined.cpp"), src, "-o", so], cwd=OUT)


class Unavailable(Exception):
    """A peer that cannot be built here: its column is left empty, the sentence printed."""


def _pyo3_sources():
    files = [os.path.join(PYO3, f) for f in ("Cargo.toml", "Cargo.lock", "pyproject.toml")]
    for base, _, names in os.walk(os.path.join(PYO3, "src")):
        files += [os.path.join(base, f) for f in names]
    return [f for f in files if os.path.exists(f)]


def build_pyo3bench():
    """maturin build --release (cargo's cache in bench/ext/pyo3bench/target), then the
    module out of the wheel into bench/out/; nothing when the module is newer than its sources."""
    import importlib.util
    import zipfile

    so = os.path.join(OUT, "pyo3bench" + SUFFIX)
    if os.path.exists(so) and os.path.getmtime(so) >= max(os.path.getmtime(f) for f in _pyo3_sources()):
        return
    if os.path.exists(so):  # older than its sources: never timed in place of the code it no longer is
        os.remove(so)
    if shutil.which("cargo") is None:
        raise Unavailable("PyO3 column skipped: cargo is not on PATH "
                          "(install Rust, e.g. with rustup, to build bench/ext/pyo3bench).")
    if importlib.util.find_spec("maturin") is None:
        raise Unavailable("PyO3 column skipped: maturin is not installed in this Python "
                          f"({sys.executable} -m pip install maturin).")
    wheels = os.path.join(PYO3, "target", "wheels")
    shutil.rmtree(wheels, ignore_errors=True)
    _run([sys.executable, "-m", "maturin", "build", "--release", "--interpreter", sys.executable, "--out", wheels],
         cwd=PYO3)
    (whl,) = [os.path.join(wheels, f) for f in os.listdir(wheels) if f.endswith(".whl")]
    with zipfile.ZipFile(whl) as z:
        (member,) = [n for n in z.namelist() if os.path.basename(n).startswith("pyo3bench") and n.endswith(SUFFIX)]
        with z.open(member) as src, open(so + ".tmp", "wb") as dst:
            shutil.copyfileobj(src, dst)
    os.replace(so + ".tmp", so)


def pyo3_version():
    """PyO3's and rust-numpy's versions in Cargo.lock (what the module was built with)."""
    try:
        with open(os.path.join(PYO3, "Cargo.lock")) as f:
            text = f.read()
    except OSError:
        return None
    got = dict(re.findall(r'name = "(pyo3|numpy)"\nversion = "([^"]+)"', text))
    return got or None


def build_gopysum():
    """gopy and goimports from examples/gopy/tools (its pinned versions)."""
    out = os.path.join(GOPY_BUILD, "gopysum")
    if not _stale(os.path.join(out, "gopysum.py"), os.path.join(EXT, "gopysum"), os.path.join(ROOT, "gopydl")):
        return
    try:
        import pybindgen  # noqa: F401  gopy's generator
    except ImportError:
        _run([sys.executable, "-m", "pip", "install", "-q", "pybindgen"], cwd=ROOT)
    tools = os.path.join(ROOT, "examples", "gopy", "tools")
    bindir = os.path.join(ROOT, "examples", "gopy", ".bin")  # examples/gopy/build.sh's, when built
    if not all(os.access(os.path.join(bindir, t), os.X_OK) for t in ("gopy", "goimports")):
        bindir = os.path.join(OUT, ".bin")
        for name, pkg in (("gopy", "github.com/go-python/gopy"), ("goimports", "golang.org/x/tools/cmd/goimports")):
            if not os.access(os.path.join(bindir, name), os.X_OK):
                _run(["go", "build", "-o", os.path.join(bindir, name), pkg], cwd=tools)
    env = dict(os.environ, PATH=bindir + os.pathsep + os.environ["PATH"])
    env.setdefault("GOFLAGS", "-buildvcs=false")
    shutil.rmtree(out, ignore_errors=True)
    _run(["gopy", "build", "-vm=" + sys.executable, "-output=" + out, "-name=gopysum", "./gopysum"],
         cwd=os.path.join(EXT, "gopysum"), env=env)
    open(os.path.join(out, "__init__.py"), "w").close()
    shutil.copy(os.path.join(ROOT, "gopydl", "python", "gopydl.py"), out)


# ---- timing ----------------------------------------------------------------

def _loop0(f, n):
    t0 = time.perf_counter_ns()
    for _ in itertools.repeat(None, n):
        f()
    return time.perf_counter_ns() - t0


def _loop1(f, a, n):
    t0 = time.perf_counter_ns()
    for _ in itertools.repeat(None, n):
        f(a)
    return time.perf_counter_ns() - t0


def _loop_kw(f, a, n):
    t0 = time.perf_counter_ns()
    for _ in itertools.repeat(None, n):
        f(a, b=2.0)
    return time.perf_counter_ns() - t0


def _loop3(f, a, n):
    t0 = time.perf_counter_ns()
    for _ in itertools.repeat(None, n):
        f(a, a, a)
    return time.perf_counter_ns() - t0


def _loop6(f, a, n):
    t0 = time.perf_counter_ns()
    for _ in itertools.repeat(None, n):
        f(a, a, a, a, a, a)
    return time.perf_counter_ns() - t0


def _loop_sum_method(o, a, n):
    t0 = time.perf_counter_ns()
    for _ in itertools.repeat(None, n):
        o.sum(a)
    return time.perf_counter_ns() - t0


def _loop_sum_r_method(o, a, n):
    t0 = time.perf_counter_ns()
    for _ in itertools.repeat(None, n):
        o.sum_r(a)
    return time.perf_counter_ns() - t0


def _loop_fid_method(o, a, n):
    t0 = time.perf_counter_ns()
    for _ in itertools.repeat(None, n):
        o.fid(a)
    return time.perf_counter_ns() - t0


class Cell:
    def __init__(self, key, size, f, arg=None, nargs=1, loop=None):
        self.key, self.size, self.f, self.arg, self.nargs, self.loop = key, size, f, arg, nargs, loop
        self.n, self.samples = 1, []

    def batch(self, n):
        if self.loop is not None:
            return self.loop(self.f, self.arg, n)
        return _loop0(self.f, n) if self.nargs == 0 else _loop1(self.f, self.arg, n)

    def calibrate(self, cell_ns):
        self.batch(1)  # warm-up
        n = 1
        while True:
            t = self.batch(n)
            if t >= cell_ns / 4 or n >= 1 << 24:
                break
            n *= 4
        self.n = max(1, int(n * cell_ns / max(t, 1)))
        self.per_call = t / n

    def run(self):
        self.samples.append(self.batch(self.n) / self.n)


def timed_rounds(cells, rounds, cell_ms, slow_ms, slow_rounds):
    for c in cells:
        c.calibrate(cell_ms * 1e6)
    for r in range(rounds):
        order = list(cells)
        random.shuffle(order)
        for c in order:
            if r < slow_rounds or c.per_call < slow_ms * 1e6:  # very slow cells: a few rounds
                c.run()


def stats(samples):
    q = statistics.quantiles(samples, n=4) if len(samples) > 1 else [samples[0]] * 3
    return {"median": statistics.median(samples), "p25": q[0], "p75": q[2], "n": len(samples)}


# ---- the two processes -----------------------------------------------------

def cells_main(sizes):
    import numpy as np

    import gosum
    cells = [Cell(("python", "raw_c_noop"), 0, gosum.raw_c_noop, nargs=0)]
    try:
        import nbsum
    except ImportError as e:
        nbsum = None
        print(f"nanobind rows unavailable: {e}", file=sys.stderr)
    try:
        import pyo3bench
    except ImportError as e:
        pyo3bench = None
        print(f"PyO3 rows unavailable: {e}", file=sys.stderr)
    peers = (("godlpack", gosum), ("nanobind", nbsum), ("pyo3", pyo3bench))
    kib = bytes(range(256)) * 4
    for lib, m in peers:
        if m is None:
            continue
        cells += [Cell((lib, "noop"), 0, m.noop, nargs=0), Cell((lib, "fid"), 0, m.fid, 1.0)]
        # bytes both ways: 1 KiB in (a byte slice), 1 KiB out (a bytes object)
        cells += [Cell((lib, "bytes_in"), 0, m.bytes_in, kib), Cell((lib, "bytes_out"), 0, m.bytes_out, nargs=0)]
        # keyword arguments, kw(1.0, b=2.0); methods of a class, obj.fid(1.0)
        cells += [Cell((lib, "add3"), 0, m.add3, 1.0, loop=_loop3), Cell((lib, "add6"), 0, m.add6, 1.0, loop=_loop6)]
        cells += [Cell((lib, "kw"), 0, m.kw, 1.0, loop=_loop_kw),
                  Cell((lib, "method_fid"), 0, m.Acc(), 1.0, loop=_loop_fid_method)]
        if lib == "godlpack":
            cells += [Cell((lib, "noop_typed"), 0, m.noop_typed, nargs=0), Cell((lib, "fid_typed"), 0, m.fid_typed, 1.0),
                      Cell((lib, "kw_typed"), 0, m.kw_typed, 1.0, loop=_loop_kw),
                      Cell((lib, "add3_typed"), 0, m.add3_typed, 1.0, loop=_loop3),
                      Cell((lib, "add6_typed"), 0, m.add6_typed, 1.0, loop=_loop6),
                      Cell((lib, "bytes_in_typed"), 0, m.bytes_in_typed, kib),
                      Cell((lib, "bytes_out_typed"), 0, m.bytes_out_typed, nargs=0)]
    cells.append(Cell(("godlpack", "raw_go_noop"), 0, gosum.raw_go_noop, nargs=0))
    for n in sizes:
        x = np.ones(n, np.float64)
        for lib, m in peers:
            if m is None:
                continue
            for fn in ("sum", "sum_nogil", "touch", "ndim"):
                cells.append(Cell((lib, fn), n, getattr(m, fn), x))
            cells.append(Cell((lib, "method_sum"), n, m.Acc(), x, loop=_loop_sum_method))
            if lib == "godlpack":
                cells += [Cell((lib, fn), n, getattr(m, fn), x) for fn in ("sum_typed", "touch_typed", "ndim_typed")]
                cells.append(Cell((lib, "method_sum_r"), n, m.Acc(), x, loop=_loop_sum_r_method))
            # Requirements: a (n, 3) array; a strided x converted into a temporary (nanobind converts by
            # default; PyO3's sum, a rust-numpy view, reads it in place).
            cells += [Cell((lib, "rows3"), n, m.rows3, np.ones((n, 3))),
                      Cell((lib, "sum_conv"), n, m.sum_conv if lib == "godlpack" else m.sum, np.ones(2 * n)[::2])]
        cells += [Cell(("godlpack", fn), n, getattr(gosum, fn), x)
                  for fn in ("raw_dl_sum", "raw_dl0_sum", "raw_dlv_sum", "raw_dlrs_sum", "raw_dlrc_sum", "raw_dlr_sum")]
        cells += [
                  Cell(("godlpack", "raw_buf_sum"), n, gosum.raw_buf_sum, x),
                  Cell(("numpy", "x.__dlpack__"), n, lambda x: x.__dlpack__(max_version=(1, 0)), x)]
    for c in cells:  # every probe computes the right thing before it is timed
        if c.key[1] in ("method_sum", "method_sum_r"):
            assert getattr(c.f, c.key[1].removeprefix("method_"))(c.arg) == float(c.size), c.key
        elif c.key[1].startswith("kw"):
            assert c.f(c.arg, b=2.0) == 3.0 and c.f(c.arg) == 2.0, c.key
        elif c.key[1].startswith("bytes_in"):
            assert c.f(c.arg) == len(c.arg) == 1024, c.key
        elif c.key[1].startswith("bytes_out"):
            r = c.f()
            assert type(r) is bytes and len(r) == 1024, c.key
        elif c.key[1] == "method_fid":
            assert c.f.fid(c.arg) == c.arg, c.key
        elif c.key[1].startswith("add"):
            n = int(c.key[1][3])
            assert c.f(*[c.arg] * n) == n * c.arg, c.key
        elif "sum" in c.key[1]:
            assert c.f(c.arg) == float(c.size), c.key
    return cells


def cells_gopy(sizes):
    import numpy as np

    import nbsum
    sys.path.insert(0, GOPY_BUILD)
    from gopysum import go, gopydl, gopysum
    slice_sum = lambda x: gopysum.SumSlice(go.Slice_float64(x))  # noqa: E731
    dl_sum = lambda x: gopysum.Sum(gopydl.to_go(x))  # noqa: E731
    cells = []
    for n in sizes:
        x = np.ones(n, np.float64)
        cells += [Cell(("nanobind", "sum"), n, nbsum.sum, x), Cell(("gopy", "slice sum"), n, slice_sum, x),
                  Cell(("gopy", "gopydl sum"), n, dl_sum, x)]
    for c in cells:
        assert c.f(c.arg) == float(c.size), c.key
    return cells


def measure(which, args):
    sys.path.insert(0, OUT)
    cells = cells_main(args.sizes) if which == "main" else cells_gopy(args.sizes)
    timed_rounds(cells, args.rounds, args.cell_ms, slow_ms=20, slow_rounds=args.slow_rounds)
    return [{"lib": c.key[0], "fn": c.key[1], "size": c.size, **stats(c.samples), "samples": c.samples}
            for c in cells]


# ---- the table ---------------------------------------------------------------

LABELS = {
    "sum": "sum(x) -> float", "sum_nogil": "sum(x), GIL released", "touch": "touch(x) -> None ([]float64 arg)",
    "ndim": "ndim(x) -> int (Tensor arg)", "noop": "noop()", "fid": "fid(1.0) -> float",
    "noop_typed": "noop(), pyext.Proc0", "fid_typed": "fid(1.0), pyext.Func1", "sum_typed": "sum(x), pyext.Func1",
    "touch_typed": "touch(x), pyext.Proc1", "ndim_typed": "ndim(x), pyext.Func1",
    "rows3": "rows3(x (n, 3)), NDArray + Shape", "sum_conv": "sum(x[::2]), converted (Convert)",
    "raw_c_noop": "C METH_NOARGS, no Go (floor)", "raw_go_noop": "C + 1 cgo call to empty Go func",
    "raw_dl_sum": "C __dlpack__(max_version) + cgo sum + del",
    "raw_dl0_sum": "  same, legacy __dlpack__() (nanobind ro)", "raw_dlv_sum": "  + Go ValidateVersioned again",
    "raw_dlrs_sum": "  + reflect slice (ArrayOf/NewAt/Convert)", "raw_dlrc_sum": "  + reflect.Call (plain slice)",
    "raw_dlr_sum": "  + both (as pyext)", "raw_buf_sum": "C buffer protocol + 1 cgo sum",
    "x.__dlpack__": "x.__dlpack__(max_version) alone", "slice sum": "SumSlice(go.Slice_float64(x))",
    "gopydl sum": "Sum(gopydl.to_go(x))",
    "add3": "add3(1.0, 1.0, 1.0) -> float", "add3_typed": "add3(...), pyext.Func3 (generated)",
    "add6": "add6(1.0 x 6) -> float", "add6_typed": "add6(...), pyext.Func6 (generated)",
    "kw": "kw(1.0, b=2.0), pyext.Args", "kw_typed": "kw(1.0, b=2.0), Func2 + Args",
    "method_fid": "obj.fid(1.0), class method, Func2", "method_sum": "obj.sum(x), class method, Func2",
    "method_sum_r": "obj.sum(x), class method, reflection",
    "bytes_in": "bytes_in(1 KiB bytes) -> int", "bytes_in_typed": "bytes_in(b []byte), pyext.Func1",
    "bytes_out": "bytes_out() -> 1 KiB bytes", "bytes_out_typed": "bytes_out() []byte, pyext.Func0",
}


def fmt_ns(v):
    return f"{v / 1e6:.2f} ms" if v >= 1e6 else f"{v / 1e3:.2f} us" if v >= 1e4 else f"{v:.0f} ns"


def table(rows, gopy_rows, gopy_note, rounds):
    idx = {(r["lib"], r["fn"], r["size"]): r for r in rows}
    sizes = sorted({r["size"] for r in rows if r["size"]})
    lines = ["per call, median [p25-p75]; /PyO3, /nb = godlpack / PyO3, godlpack / nanobind (medians)", ""]
    head = (f"{'function':38s} {'size':>8s} {'godlpack (pyext)':>26s} {'PyO3':>26s} {'nanobind':>26s}"
            f" {'/PyO3':>6s} {'/nb':>6s}")
    lines += [head, "-" * len(head)]

    def cell(r):
        return f"{fmt_ns(r['median'])} [{fmt_ns(r['p25'])}-{fmt_ns(r['p75'])}]" if r else "-"

    for fn, szs in (("noop", [0]), ("noop_typed", [0]), ("fid", [0]), ("fid_typed", [0]), ("add3", [0]),
                    ("add3_typed", [0]), ("add6", [0]), ("add6_typed", [0]), ("bytes_in", [0]),
                    ("bytes_in_typed", [0]), ("bytes_out", [0]), ("bytes_out_typed", [0]), ("sum", sizes),
                    ("sum_typed", sizes), ("sum_nogil", sizes), ("touch", sizes), ("touch_typed", sizes),
                    ("ndim", sizes), ("ndim_typed", sizes), ("rows3", sizes), ("sum_conv", sizes), ("kw", [0]),
                    ("kw_typed", [0]), ("method_fid", [0]), ("method_sum", sizes), ("method_sum_r", sizes)):
        for n in szs:
            ref = fn.removesuffix("_typed").removesuffix("_r")
            g, o, b = (idx.get(("godlpack", fn, n)), idx.get(("pyo3", ref, n)), idx.get(("nanobind", ref, n)))
            ro, rb = (f"{g['median'] / r['median']:.2f}" if g and r else "-" for r in (o, b))
            lines.append(f"{LABELS[fn]:38s} {n or '':>8} {cell(g):>26s} {cell(o):>26s} {cell(b):>26s}"
                         f" {ro:>6s} {rb:>6s}")
    lines += ["", "breakdown probes (same process)", ""]
    for lib, fn, szs in (("python", "raw_c_noop", [0]), ("godlpack", "raw_go_noop", [0]),
                         ("godlpack", "raw_dl_sum", sizes), ("godlpack", "raw_dl0_sum", sizes),
                         ("godlpack", "raw_dlv_sum", sizes), ("godlpack", "raw_dlrs_sum", sizes),
                         ("godlpack", "raw_dlrc_sum", sizes), ("godlpack", "raw_dlr_sum", sizes),
                         ("godlpack", "raw_buf_sum", sizes),
                         ("numpy", "x.__dlpack__", sizes)):
        for n in szs:
            r = idx.get((lib, fn, n))
            lines.append(f"{LABELS[fn]:38s} {n or '':>8} {cell(r):>30s}")
    for lib in ("godlpack", "nanobind"):
        t = [idx[(lib, "touch", n)]["median"] for n in sizes if (lib, "touch", n) in idx]
        if t:
            lines.append(f"flatness of {lib} touch(x) over sizes (max/min of medians): {max(t) / min(t):.2f}")
    lines += ["", "gopy (child process; nanobind sum again as the in-process reference)", ""]
    if gopy_rows is None:
        lines.append(f"unavailable: {gopy_note}")
    else:
        gi = {(r["lib"], r["fn"], r["size"]): r for r in gopy_rows}
        head = f"{'function':38s} {'size':>8s} {'gopy':>34s} {'nanobind sum':>30s} {'ratio':>8s}"
        lines += [head, "-" * len(head)]
        for fn in ("slice sum", "gopydl sum"):
            for n in sizes:
                g, b = gi.get(("gopy", fn, n)), gi.get(("nanobind", "sum", n))
                ratio = f"{g['median'] / b['median']:.1f}" if g and b else "-"
                note = f" (n={g['n']})" if g and g["n"] < rounds else ""
                lines.append(f"{LABELS[fn]:38s} {n:>8} {cell(g):>34s} {cell(b):>30s} {ratio:>8s}{note}")
    return "\n".join(lines)


# Issue 32's targets: (row, label, limit over the floor, limit over nanobind, loops); the floor
# is the row "C + 1 cgo call to empty Go func" of the same run. The targets are for the cost of a
# call: a row whose function loops over the elements (loops) is held to it at one element, and
# its larger sizes are shown as "loop" (they time Go's summing loop against C++'s, the same
# scalar loop in both: ratios near 1.0); rows that do not loop (ndim, touch) are held at every
# size.
TARGETS = (
    ("noop_typed", "noop(), Proc0", 1.25, None, False),
    ("method_fid", "obj.fid(1.0), method Func2", 1.5, None, False),
    ("kw_typed", "kw(1.0, b=2.0), Func2 + Args", 1.8, None, False),
    ("ndim_typed", "ndim(t godlpack.Tensor), Func1", None, 1.0, False),
    ("rows3", "rows3, NDArray + Require", None, 1.0, True),
    ("sum_typed", "sum(x []float64), Func1", None, 0.9, True),
    ("touch_typed", "touch(x []float64), Proc1", None, 0.9, False),
    ("method_sum", "obj.sum(x), method Func2", None, 0.9, True),
)


def summary(rows):
    """Each target row's ratio to the floor and to nanobind (medians), and whether it holds."""
    idx = {(r["lib"], r["fn"], r["size"]): r["median"] for r in rows}
    floor = idx.get(("godlpack", "raw_go_noop", 0))
    if not floor:
        return "targets: no floor row"
    lines = [f"targets (floor: C + 1 cgo call to empty Go func, {fmt_ns(floor)})", "",
             f"{'call':34s} {'size':>8s} {'ns':>9s} {'/floor':>7s} {'target':>7s} {'/nb':>6s} {'target':>7s}  holds"]
    lines.append("-" * len(lines[-1]))
    held = []
    for fn, label, lim_floor, lim_nb, loops in TARGETS:
        ref = fn.removesuffix("_typed")
        for n in sorted({r["size"] for r in rows if r["fn"] == fn and r["lib"] == "godlpack"}):
            g, b = idx[("godlpack", fn, n)], idx.get(("nanobind", ref, n))
            rf, rb = g / floor, (g / b if b else None)
            ok = (lim_floor is None or rf <= lim_floor) and (lim_nb is None or (rb is not None and rb <= lim_nb))
            verdict = "loop" if loops and n > 1 else "yes" if ok else "NO"
            if verdict != "loop":
                held.append(ok)
            lines.append(f"{label:34s} {n or '':>8} {g:9.0f} {rf:6.2f}x {lim_floor or '':>7} "
                         f"{f'{rb:.2f}x' if rb else '-':>6s} {lim_nb or '':>7}  {verdict}")
    lines.append(f"\n{sum(held)} of {len(held)} targets hold"
                 " (\"loop\": the function's loop over the elements, timed for reference, no target)")
    return "\n".join(lines)


# Issue 39's targets: (pyext row, peer row, label, limit of (pyext - floor) / PyO3, loops). The floor
# (an empty //export-ed Go function called from C: "C + 1 cgo call to empty Go func") is Go's own
# price for the crossing; what pyext adds above it is held against PyO3's whole call, medians of
# the same run. A row whose function loops over the elements is held at 1 and 1000 elements (its
# larger sizes time Go's loop against Rust's: "loop"); rows that do not loop at every size.
TARGETS_PYO3 = (
    ("noop_typed", "noop", "noop(), Proc0", 1.0, False),
    ("fid_typed", "fid", "fid(1.0), Func1", 1.0, False),
    ("kw_typed", "kw", "kw(1.0, b=2.0), Func2 + Args", 1.0, False),
    ("add6_typed", "add6", "add6(1.0 x 6), Func6", 1.0, False),
    ("method_fid", "method_fid", "obj.fid(1.0), method Func2", 1.0, False),
    ("sum_typed", "sum", "sum(x []float64), Func1", 1.0, True),
    ("bytes_in_typed", "bytes_in", "bytes_in(1 KiB), Func1 []byte", 1.0, False),
    ("bytes_out_typed", "bytes_out", "bytes_out() 1 KiB, Func0 []byte", 1.0, False),
    ("ndim_typed", "ndim", "ndim(t godlpack.Tensor), Func1", 1.5, False),
    ("rows3", "rows3", "rows3, NDArray + Require", 1.5, True),
)


def summary_pyo3(rows):
    """Each issue-39 row: pyext, pyext - floor, PyO3 and nanobind (medians), (pyext - floor) / PyO3
    and / nanobind, and whether the target holds."""
    idx = {(r["lib"], r["fn"], r["size"]): r["median"] for r in rows}
    floor = idx.get(("godlpack", "raw_go_noop", 0))
    if not floor:
        return "PyO3 targets: no floor row"
    if not any(r["lib"] == "pyo3" for r in rows):
        return "PyO3 targets: no PyO3 rows in this run (see the sentence above on why it was not built)"
    lines = [f"PyO3 targets, (pyext - floor) / PyO3 (floor: C + 1 cgo call to empty Go func, {fmt_ns(floor)})", "",
             f"{'call':34s} {'size':>8s} {'pyext':>7s} {'-floor':>7s} {'PyO3':>7s} {'nb':>7s} "
             f"{'/PyO3':>6s} {'target':>6s} {'/nb':>6s}  holds"]
    lines.append("-" * len(lines[-1]))
    held = []
    for fn, ref, label, limit, loops in TARGETS_PYO3:
        for n in sorted({r["size"] for r in rows if r["fn"] == fn and r["lib"] == "godlpack"}):
            g, o, b = idx[("godlpack", fn, n)], idx.get(("pyo3", ref, n)), idx.get(("nanobind", ref, n))
            above = g - floor
            ro, rb = (above / o if o else None), (above / b if b else None)
            verdict = "loop" if loops and n > 1000 else "-" if ro is None else "yes" if ro <= limit else "NO"
            if verdict in ("yes", "NO"):
                held.append(verdict == "yes")
            fo, fb = ("-" if r is None else f"{r:.2f}" for r in (ro, rb))
            no, nb = ("-" if v is None else f"{v:.0f}" for v in (o, b))
            lines.append(f"{label:34s} {n or '':>8} {g:7.0f} {above:7.0f} {no:>7s} {nb:>7s} "
                         f"{fo:>6s} {limit:>6} {fb:>6s}  {verdict}")
    lines.append(f"\n{sum(held)} of {len(held)} PyO3 targets hold"
                 " (\"loop\": the function's loop over the elements, timed for reference, no target)")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=41)
    p.add_argument("--slow-rounds", type=int, default=5, help="rounds for cells slower than 20 ms a call")
    p.add_argument("--cell-ms", type=float, default=2.0, help="time per cell per round")
    p.add_argument("--sizes", default="1,1000,1000000", type=lambda s: [int(v) for v in s.split(",")])
    p.add_argument("--no-gopy", action="store_true")
    p.add_argument("--child", choices=["gopy"], help=argparse.SUPPRESS)
    p.add_argument("--summary", metavar="JSON", help="print the targets of a saved ext_bench.json and exit")
    args = p.parse_args()
    if args.summary:
        with open(args.summary) as f:
            rows = json.load(f)["main"]
        print(summary(rows) + "\n\n" + summary_pyo3(rows))
        return
    if args.child:
        json.dump(measure(args.child, args), sys.stdout)
        return
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, ".gitignore"), "w") as f:
        f.write("*\n")  # results and probes: never committed
    build_gosum()
    try:
        build_nbsum()
    except Exception as e:  # noqa: BLE001  reported as unavailable rows
        print(f"nanobind probe not built: {e}", file=sys.stderr)
    try:
        build_pyo3bench()
    except Unavailable as e:
        print(e, file=sys.stderr)
    except RuntimeError as e:  # a failed cargo build (e.g. no crates registry): the column only
        print(f"PyO3 column skipped: bench/ext/pyo3bench did not build: {e}", file=sys.stderr)
    gopy_rows, gopy_note = None, "--no-gopy"
    if not args.no_gopy:
        try:
            build_gopysum()
            r = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", "gopy",
                                "--rounds", str(args.rounds), "--slow-rounds", str(args.slow_rounds),
                                "--cell-ms", str(args.cell_ms), "--sizes", ",".join(map(str, args.sizes))],
                               capture_output=True, text=True)
            if r.returncode != 0:
                raise RuntimeError(r.stderr[-2000:])
            gopy_rows = json.loads(r.stdout)
        except Exception as e:  # noqa: BLE001
            gopy_note = str(e).strip().splitlines()[-1] if str(e).strip() else repr(e)
    rows = measure("main", args)
    text = table(rows, gopy_rows, gopy_note, args.rounds) + "\n\n" + summary(rows) + "\n\n" + summary_pyo3(rows)
    print(text)
    import numpy as np
    try:
        import nanobind
        nbv = nanobind.__version__
    except ImportError:
        nbv = None
    meta = {"python": sys.version, "numpy": np.__version__, "nanobind": nbv, "pyo3": pyo3_version(),
            "machine": platform.machine(),
            "cpus": os.cpu_count(), "loadavg": os.getloadavg(), "rounds": args.rounds, "cell_ms": args.cell_ms,
            "go": subprocess.run(["go", "version"], capture_output=True, text=True).stdout.strip()}
    with open(os.path.join(OUT, "ext_bench.json"), "w") as f:
        json.dump({"meta": meta, "main": rows, "gopy": gopy_rows, "gopy_note": gopy_note}, f)
    with open(os.path.join(OUT, "ext_bench.txt"), "w") as f:
        f.write(text + "\n")
    print(f"\nwrote {os.path.relpath(OUT, ROOT)}/ext_bench.json and ext_bench.txt (load average {meta['loadavg'][0]:.1f})")


if __name__ == "__main__":
    main()
