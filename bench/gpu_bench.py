"""GPU DLPack figures: godlpack next to PyTorch, CuPy and JAX, side by side in
one process (`make bench`; a short run in `make gpu-test`).

Per-call rows (a CUDA float32 tensor of 256 elements): importing each peer's
tensor (`X.from_dlpack(peer tensor)`), exporting (`peer.from_dlpack(X
tensor)`, X = godlpack or the peer's own or another peer's tensor), and the
cross-stream export: torch's current stream is not the one the tensor is ready
on, so godlpack records an event and makes torch's stream wait for it.

Copy rows (GB/s, bytes counted once, until the device is idle again):
device-to-device (`copy=True` vs `clone()` and CuPy's `copy()`), device-to-host
(`device=(kDLCPU, 0)` vs `.cpu()` and CuPy's `get()`) and host-to-device
(`device=(kDLCUDA, 0)` vs `.cuda()` and `cupy.asarray`), from pageable host
memory as the peers do; PyTorch's pinned-memory copies are the bus reference,
and the memory's and the bus's theoretical peaks are read from the driver.

Every cell is calibrated, then all run once per round in a fresh random order;
ratios (godlpack's time / the peer's, lower is better) are taken per round,
then given as median [IQR]. Peers without a GPU are left out and say so; with
no GPU at all the run prints one line and exits 0. A godlpack path that fails
or gives wrong data makes the run exit 1.

    PYTHONPATH=python .venv/bin/python bench/gpu_bench.py [--quick] [--rounds N] [--sizes 1MiB,256MiB] [--out F]
"""
from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import os
import platform
import random
import statistics
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import numpy as np  # noqa: E402

import godlpack  # noqa: E402

CPU, CUDA = (1, 0), (2, 0)
HERE = os.path.dirname(os.path.abspath(__file__))
UNITS = {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}


def parse_size(s: str) -> int:
    for u, m in UNITS.items():
        if s.endswith(u):
            return int(float(s[: -len(u)]) * m)
    return int(s)


def human(n: int) -> str:
    for u, m in reversed(UNITS.items()):
        if n >= m and n % m == 0:
            return f"{n // m} {u}"
    return f"{n} B"


def peers() -> tuple[dict[str, Any], list[str]]:
    """The GPU peers that can run here, and why the others cannot."""
    found, missing = {}, []
    try:
        import torch

        if torch.cuda.is_available():
            found["torch"] = torch
        else:
            missing.append("PyTorch: no CUDA GPU")
    except ImportError:
        missing.append("PyTorch: not installed")
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() > 0:
            found["cupy"] = cupy
    except ImportError:
        missing.append("CuPy: not installed")
    except Exception as e:  # noqa: BLE001 - CuPy raises its own error without a driver
        missing.append(f"CuPy: no GPU ({type(e).__name__})")
    try:
        import jax

        if jax.devices("gpu"):
            import jax.numpy as jnp

            found["jax"] = jax
            found["jnp"] = jnp
    except ImportError:
        missing.append("JAX: not installed")
    except RuntimeError:
        missing.append("JAX: no GPU backend")
    return found, missing


def limits() -> dict[str, Any]:
    """Theoretical peaks from the CUDA driver: memory (clock x bus width x 2)
    and the PCIe link (sysfs)."""
    out: dict[str, Any] = {}
    try:
        lib = ctypes.CDLL(os.environ.get("GODLPACK_LIBCUDA", "libcuda.so.1"))
        lib.cuInit(0)
        dev = ctypes.c_int()
        lib.cuDeviceGet(ctypes.byref(dev), 0)

        def attr(a: int) -> int | None:
            v = ctypes.c_int()
            return v.value if lib.cuDeviceGetAttribute(ctypes.byref(v), a, dev) == 0 else None

        khz, bits = attr(36), attr(37)  # MEMORY_CLOCK_RATE (kHz), GLOBAL_MEMORY_BUS_WIDTH (bits)
        if khz and bits:
            out["memory_GBps"] = 2 * khz * 1e3 * bits / 8 / 1e9
            out["memory"] = f"{khz / 1e3:.0f} MHz x {bits} bits x 2"
        buf = ctypes.create_string_buffer(64)
        if lib.cuDeviceGetPCIBusId(buf, 64, dev) == 0:
            dom, rest = buf.value.decode().lower().split(":", 1)
            path = f"/sys/bus/pci/devices/{int(dom, 16):04x}:{rest}"
            with open(f"{path}/current_link_speed") as f:
                gts = float(f.read().split()[0])
            with open(f"{path}/current_link_width") as f:
                width = int(f.read().strip())
            enc = 0.8 if gts <= 5 else 128 / 130
            out["bus_GBps"] = gts * width * enc / 8
            out["bus"] = f"PCIe {gts:g} GT/s x{width}"
    except Exception as e:  # noqa: BLE001 - best effort: the measured pinned copies remain
        out.setdefault("note", f"limits partly unknown ({type(e).__name__}: {e})")
    return out


@dataclass
class Cell:
    group: str
    size: int  # bytes copied, 0 for per-call rows
    impl: str
    fn: Callable[[], Any]
    ctx: Callable[[], Any] | None = None
    k: int = 1
    times: list[float] = field(default_factory=list)


class Bench:
    def __init__(self, p: dict[str, Any]) -> None:
        self.p = p
        self.cells: list[Cell] = []
        self.left_out: list[str] = []
        self.failed: list[str] = []

    def sync(self) -> None:
        if "torch" in self.p:
            self.p["torch"].cuda.synchronize()
        else:
            self.p["cupy"].cuda.Device().synchronize()

    def add(self, group: str, size: int, impl: str, fn, ctx=None, check=None) -> None:
        """Adds a cell after running it once (and check(result) if given)."""
        try:
            with ctx() if ctx else contextlib.nullcontext():
                r = fn()
                if check is not None and not check(r):
                    raise AssertionError("wrong result")
                del r
            self.sync()
        except Exception as e:  # noqa: BLE001 - a peer's refusal leaves its row out
            msg = f"{group} {human(size) if size else ''} {impl}: {type(e).__name__}: {str(e)[:120]}"
            (self.failed if impl.startswith("godlpack") else self.left_out).append(msg)
            return
        self.cells.append(Cell(group, size, impl, fn, ctx))

    def once(self, c: Cell, k: int) -> float:
        with c.ctx() if c.ctx else contextlib.nullcontext():
            if c.size:
                self.sync()
            t0 = time.perf_counter()
            for _ in range(k):
                c.fn()
            if c.size:
                self.sync()
            return (time.perf_counter() - t0) / k

    def run(self, rounds: int, target_s: float) -> None:
        for c in self.cells:  # calibrate (and warm up)
            t = self.once(c, 1)
            c.k = max(1, min(100000, int(target_s / max(t, 1e-7))))
        for _ in range(rounds):
            order = self.cells[:]
            random.shuffle(order)
            for c in order:
                c.times.append(self.once(c, c.k))


def per_call_cells(b: Bench) -> None:
    p = b.p
    torch, cupy, jnp = p.get("torch"), p.get("cupy"), p.get("jnp")
    src: dict[str, Any] = {}
    if torch:
        src["PyTorch"] = torch.arange(256, dtype=torch.float32, device="cuda")
    if cupy:
        src["CuPy"] = cupy.arange(256, dtype=cupy.float32)
    if jnp:
        src["JAX"] = p["jax"].device_put(np.arange(256, dtype=np.float32), p["jax"].devices("gpu")[0])
    consumers = {"PyTorch": torch and torch.from_dlpack, "CuPy": cupy and cupy.from_dlpack,
                 "JAX": jnp and jnp.from_dlpack}
    consumers = {k: v for k, v in consumers.items() if v}
    ptrs = {"PyTorch": lambda x: x.data_ptr(), "CuPy": lambda x: x.data.ptr,
            "JAX": lambda x: x.unsafe_buffer_pointer()}
    for name, x in src.items():  # import: X.from_dlpack(peer's tensor)
        b.add(f"import {name} tensor", 0, "godlpack", lambda x=x: godlpack.from_dlpack(x),
              check=lambda t, x=x, name=name: t.data_ptr == ptrs[name](x))
        for cname, consume in consumers.items():
            b.add(f"import {name} tensor", 0, cname, lambda x=x, c=consume: c(x))
    if not src:
        return
    first = next(iter(src.values()))
    g = godlpack.from_dlpack(first)
    for cname, consume in consumers.items():  # export: consumer.from_dlpack(X tensor)
        b.add(f"export to {cname}", 0, "godlpack", lambda c=consume: c(g))
        for name, x in src.items():
            b.add(f"export to {cname}", 0, name, lambda x=x, c=consume: c(x))
    if torch:  # torch's current stream != the stream the data is ready on
        s = torch.cuda.Stream()
        g0 = godlpack.from_dlpack(src["PyTorch"])  # ready on the default stream
        on_s = lambda: torch.cuda.stream(s)  # noqa: E731
        b.add("cross-stream export to PyTorch", 0, "godlpack", lambda: torch.from_dlpack(g0), on_s,
              check=lambda y: y.data_ptr() == g0.data_ptr)
        for name, x in src.items():
            b.add("cross-stream export to PyTorch", 0, name, lambda x=x: torch.from_dlpack(x), on_s)
        b.add("import PyTorch tensor, non-default stream", 0, "godlpack",
              lambda: godlpack.from_dlpack(src["PyTorch"]), on_s)
        b.add("import PyTorch tensor, non-default stream", 0, "PyTorch",
              lambda: torch.from_dlpack(src["PyTorch"]), on_s)


def mover() -> Callable[[Any, tuple[int, int]], Any]:
    """godlpack.from_dlpack(t, device=d) where this build moves tensors,
    else the tensor's own export, Tensor.__dlpack__(dl_device=d) (said once)."""
    try:
        godlpack.from_dlpack(godlpack.arange(1.0), device=CUDA)
        return lambda t, d: godlpack.from_dlpack(t, device=d)
    except Exception as e:  # noqa: BLE001 - BufferError where from_dlpack does not move tensors
        print(f"note: godlpack.from_dlpack(device=) refused here ({e}): copies timed through "
              "Tensor.__dlpack__(dl_device=)")
        return lambda t, d: godlpack.from_dlpack(t.__dlpack__(max_version=(1, 3), dl_device=d))


def copy_cells(b: Bench, sizes: list[int]) -> None:
    torch, cupy = b.p.get("torch"), b.p.get("cupy")
    move = mover()
    for n in sizes:
        a = (np.arange(n // 4, dtype=np.float32) % 1009)
        ha = godlpack.from_dlpack(a)  # a zero-copy host view: godlpack's own export copies it
        if torch:
            xt = torch.from_numpy(a).cuda()
            gd = godlpack.from_dlpack(xt)
            same = lambda t, xt=xt: torch.equal(torch.from_dlpack(t).to(xt.device), xt)  # noqa: E731
            b.add("device to device", n, "godlpack", lambda gd=gd: godlpack.from_dlpack(gd, copy=True), check=same)
            b.add("device to host", n, "godlpack", lambda gd=gd: move(gd, CPU), check=same)
            b.add("host to device", n, "godlpack", lambda ha=ha: move(ha, CUDA), check=same)
            b.add("device to device", n, "PyTorch", lambda xt=xt: xt.clone())
            b.add("device to host", n, "PyTorch", lambda xt=xt: xt.cpu())
            b.add("host to device", n, "PyTorch", lambda a=a: torch.from_numpy(a).cuda())
            pinned = torch.empty(n, dtype=torch.uint8, pin_memory=True)
            dev = torch.empty(n, dtype=torch.uint8, device="cuda")
            b.add("device to host", n, "pinned (bus)", lambda p=pinned, d=dev: p.copy_(d, non_blocking=True))
            b.add("host to device", n, "pinned (bus)", lambda p=pinned, d=dev: d.copy_(p, non_blocking=True))
        if cupy:
            xc = cupy.asarray(a)
            if not torch:
                gd = godlpack.from_dlpack(xc)
                same = lambda t, xc=xc: bool((cupy.asarray(np.asarray(move(t, CPU))) == xc).all())  # noqa: E731,E501
                b.add("device to device", n, "godlpack", lambda gd=gd: godlpack.from_dlpack(gd, copy=True), check=same)
                b.add("device to host", n, "godlpack", lambda gd=gd: move(gd, CPU),
                      check=lambda t, a=a: np.array_equal(np.asarray(t), a))
                b.add("host to device", n, "godlpack", lambda ha=ha: move(ha, CUDA), check=same)
            b.add("device to device", n, "CuPy", lambda xc=xc: xc.copy())
            b.add("device to host", n, "CuPy", lambda xc=xc: xc.get())
            b.add("host to device", n, "CuPy", lambda a=a: cupy.asarray(a))


def iqr(v: list[float]) -> float:
    if len(v) < 4:
        return 0.0
    q = statistics.quantiles(v, n=4)
    return q[2] - q[0]


def report(b: Bench, lim: dict[str, Any]) -> dict[str, Any]:
    rows = []
    keys = sorted({(c.group, c.size) for c in b.cells}, key=lambda k: (k[1] > 0, k[1], k[0]))
    for group, size in keys:
        cells = {c.impl: c for c in b.cells if c.group == group and c.size == size}
        g = cells.get("godlpack")
        for impl, c in cells.items():
            med = statistics.median(c.times)
            row = {"group": group, "size": size, "impl": impl, "median_s": med, "times_s": c.times}
            if size:
                row["GBps"] = size / med / 1e9
            if g is not None and impl != "godlpack":
                ratios = [x / y for x, y in zip(g.times, c.times)]
                row["godlpack_ratio"], row["godlpack_ratio_iqr"] = statistics.median(ratios), iqr(ratios)
            rows.append(row)
    print(f"\n{'path':44} {'impl':14} {'median':>12}   godlpack / this (time, per round: median [IQR])")
    for r in rows:
        what = f"{r['group']}{' ' + human(r['size']) if r['size'] else ''}"
        val = f"{r['GBps']:8.1f} GB/s" if r["size"] else f"{r['median_s'] * 1e6:8.2f} us"
        ratio = f"{r['godlpack_ratio']:.3f} [{r['godlpack_ratio_iqr']:.3f}]" if "godlpack_ratio" in r else ""
        print(f"{what:44} {r['impl']:14} {val:>12}   {ratio}")
    head = [r for r in rows if r["group"] == "import PyTorch tensor" and r["impl"] == "PyTorch"]
    if head:
        h = head[0]["godlpack_ratio"]
        print(f"\ngodlpack.from_dlpack(torch CUDA tensor) / torch.from_dlpack(same): {h:.3f}x "
              f"(target <= 0.2x: {'met' if h <= 0.2 else 'NOT met'})")
    if "memory_GBps" in lim:
        print(f"memory peak {lim['memory_GBps']:.0f} GB/s ({lim['memory']}); a device-to-device copy moves each "
              f"byte twice, so its ceiling is about {lim['memory_GBps'] / 2:.0f} GB/s counted once")
    if "bus_GBps" in lim:
        print(f"bus peak {lim['bus_GBps']:.1f} GB/s per direction ({lim['bus']}); measured: the 'pinned (bus)' rows")
    if "note" in lim:
        print(lim["note"])
    return {"rows": rows}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="a short run (make gpu-test)")
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--sizes", default=None, help="copy sizes, e.g. 1MiB,16MiB,256MiB")
    ap.add_argument("--out", default=None, help="JSON results (default bench/out/gpu_bench[-quick].json)")
    args = ap.parse_args()
    ok, why = godlpack.cuda_status()
    if not ok:
        print(f"gpu_bench: skipped: no CUDA driver ({why})")
        return 0
    p, missing = peers()
    if "torch" not in p and "cupy" not in p:
        print(f"gpu_bench: skipped: no PyTorch or CuPy with a GPU ({'; '.join(missing)})")
        return 0
    rounds = args.rounds or (5 if args.quick else 21)
    sizes = [parse_size(s) for s in (args.sizes or ("1MiB,64MiB" if args.quick else "1MiB,16MiB,256MiB")).split(",")]
    b = Bench(p)
    t0 = time.monotonic()
    per_call_cells(b)
    copy_cells(b, sizes)
    b.run(rounds, target_s=0.002 if args.quick else 0.005)
    versions = {"python": platform.python_version(), "godlpack": godlpack._godlpack.VERSION}
    for k in ("torch", "cupy", "jax"):
        if k in p:
            versions[k] = p[k].__version__
    gpu = p["torch"].cuda.get_device_name() if "torch" in p else "?"
    print(f"gpu_bench: {gpu}; {versions}; {rounds} rounds; {time.monotonic() - t0:.1f} s")
    for m in missing:
        print(f"left out: {m}")
    for m in b.left_out:
        print(f"left out (the peer refused): {m}")
    lim = limits()
    res = report(b, lim)
    for m in b.failed:
        print(f"FAILED (godlpack): {m}")
    out = args.out or os.path.join(HERE, "out", f"gpu_bench{'-quick' if args.quick else ''}.json")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        json.dump({"gpu": gpu, "versions": versions, "limits": lim, "rounds": rounds, "failed": b.failed,
                   "left_out": missing + b.left_out, **res}, f, indent=1)
    print(f"results: {out}")
    return 1 if b.failed else 0


if __name__ == "__main__":
    sys.exit(main())
