"""Any number of Go runtimes in one process, each keeping its asynchronous
preemption (docs/runtimes.md). tests/pyext/spinmod is built once and copied under
several names: each copy is loaded as its own c-shared object with its own
Go runtime. Its spin loop has no call in it, so a runtime.GC() while it runs
returns quickly only if that runtime's SIGURG reaches it. A tiny Go library
with no Python in it, loaded by ctypes, stands for a Go runtime that is not
built on pyext."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig

import pytest

from harness import ROOT, child_env

SUFFIX = sysconfig.get_config_var("EXT_SUFFIX")
NAMES = [f"spin_{c}" for c in "abcdefgh"]
# About a second of spinning here; long enough that a GC that waits for the
# loop's end is 20 times over the bound, short enough to run many orders.
SPIN = 1_000_000_000
GC_BOUND_MS = 50.0

TINY = """package main

import "C"

import (
	"runtime"
	"time"
)

//export tiny_spin
func tiny_spin(n C.longlong) C.longlong {
	x := uint64(1)
	for i := C.longlong(0); i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return C.longlong(x >> 1)
}

//export tiny_gc_ms
func tiny_gc_ms() C.double {
	t := time.Now()
	runtime.GC()
	return C.double(float64(time.Since(t).Nanoseconds()) / 1e6)
}

func main() {}
"""


# A Go library whose SIGURG handler forwards to the one it replaced, as a Go
# runtime does until its signal set-up is done: adopted into the chain, it
# forwards to the dispatcher that called it.
FORWARDER = """package main

/*
#include <signal.h>
#include <string.h>
static struct sigaction prev;
static volatile int calls;
static void forward(int sig, siginfo_t* info, void* ctx) {
  calls++;
  if ((prev.sa_flags & SA_SIGINFO) && prev.sa_sigaction != NULL) prev.sa_sigaction(sig, info, ctx);
}
static int install(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = forward;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
  sigfillset(&sa.sa_mask);
  return sigaction(SIGURG, &sa, &prev);
}
static int count(void) { return calls; }
*/
import "C"

//export fwd_install
func fwd_install() C.int { return C.install() }

//export fwd_calls
func fwd_calls() C.int { return C.count() }

func main() {}
"""


def _go_env() -> dict[str, str]:
    return dict(os.environ, CGO_ENABLED="1", GOFLAGS="-buildvcs=false")


@pytest.fixture(scope="module")
def spin_dir(tmp_path_factory) -> str:
    d = tmp_path_factory.mktemp("spins")
    first = d / (NAMES[0] + SUFFIX)
    r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "godlpack_build.py"), str(first), "./tests/pyext/spinmod"],
                       cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    for name in NAMES[1:]:
        shutil.copy(first, d / (name + SUFFIX))  # a copy, not a link: its own object, its own runtime
    return str(d)


@pytest.fixture(scope="module")
def tiny_libs(tmp_path_factory) -> list[str]:
    go = shutil.which("go")
    assert go is not None, "make test needs the Go toolchain"
    d = tmp_path_factory.mktemp("tinygo")
    (d / "go.mod").write_text("module tiny\n\ngo 1.26\n")
    (d / "main.go").write_text(TINY)
    lib = d / "libtinygo.so"
    subprocess.run([go, "build", "-buildmode=c-shared", "-o", str(lib), "."], cwd=d, check=True,
                   capture_output=True, timeout=600, env=_go_env())
    second = d / "libtinygo2.so"
    shutil.copy(lib, second)
    return [str(lib), str(second)]


# The child: imports (or loads with ctypes) in the order given, then in each
# runtime in turn spins on a thread (GIL released) and times a GC meanwhile.
CHILD = r"""
import ctypes, importlib, json, os, sys, threading, time, warnings
warnings.simplefilter("error", RuntimeWarning)
order, spin, measure = json.loads(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "1"
mods = {}
for name in order:
    if name.endswith(".so"):
        lib = ctypes.CDLL(name)
        lib.tiny_spin.argtypes, lib.tiny_spin.restype = [ctypes.c_longlong], ctypes.c_longlong
        lib.tiny_gc_ms.restype = ctypes.c_double
        mods[name] = lib
    else:
        mods[name] = importlib.import_module(name)
if os.environ.get("REPAIR"):
    import godlpack
    godlpack.go_runtimes()
out = {"gc_ms": {}, "still_spinning": {}}
for name, m in mods.items():
    if not measure or name == "godlpack":
        continue
    if isinstance(m, ctypes.CDLL):
        t = threading.Thread(target=m.tiny_spin, args=(spin,))
        t.start()
        time.sleep(0.2)
        gc_ms, spinning = m.tiny_gc_ms, t.is_alive
    else:
        t = threading.Thread(target=m.spin, args=(spin,))
        t.start()
        deadline = time.monotonic() + 30
        while not m.is_spinning():
            assert time.monotonic() < deadline, "spin never started"
            time.sleep(0.001)
        time.sleep(0.02)
        gc_ms, spinning = m.gc_ms, m.is_spinning
    # The least of up to three GCs made while the loop spins: one that a busy
    # machine kept off the CPU says nothing of the runtime (one that waited
    # for the loop's end leaves no second one).
    runs = []  # (ms, the loop still spun when the GC returned)
    while len(runs) < 3 and (not runs or runs[-1][1]):
        ms = gc_ms()
        runs.append((ms, spinning()))
    out["gc_ms"][name], out["still_spinning"][name] = min(runs, key=lambda r: (not r[1], r[0]))
    t.join(60)
    assert not t.is_alive(), name + ": spin did not end"
import godlpack
out["runtimes"] = godlpack.go_runtimes()
print(json.dumps(out))
"""


def run_child(spin_dir: str, order: list[str], measure: bool = True, spin: int = SPIN, **env: str) -> dict:
    r = subprocess.run([sys.executable, "-c", CHILD, json.dumps(order), str(spin), "1" if measure else "0"],
                       env=child_env(spin_dir, **env), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def go_version() -> str:
    return subprocess.run(["go", "env", "GOVERSION"], capture_output=True, text=True, check=True,
                          timeout=60).stdout.strip()


ORDERS = [
    ["spin_a", "spin_b", "spin_c", "godlpack"],  # godlpack last: it used to take SIGURG from all three
    ["godlpack", "spin_a", "spin_b", "spin_c"],
    ["spin_a", "godlpack", "spin_b", "spin_c"],
    ["spin_c", "spin_b", "godlpack", "spin_a"],
]


# The first order on every Python; the others, which vary only the Go
# runtimes' order of loading, once (one_python: CI's other Pythons leave them out).
@pytest.mark.parametrize("order", [pytest.param(o, id="-".join(o), marks=[pytest.mark.one_python] if i else [])
                                   for i, o in enumerate(ORDERS)])
def test_a_gc_in_every_runtime_preempts_a_tight_loop(spin_dir, order):
    """Four Go runtimes, imported in this order with RuntimeWarning as an
    error (so no warning either): in each extension's runtime a GC while it
    spins on another thread returns within the bound, the loop still
    running (it was preempted, not waited for)."""
    out = run_child(spin_dir, order)
    spins = [n for n in order if n != "godlpack"]
    assert sorted(out["gc_ms"]) == sorted(spins)
    for name in spins:
        assert out["still_spinning"][name], f"{name}: the loop ended before the GC returned: {out}"
        assert out["gc_ms"][name] < GC_BOUND_MS, f"{name}: GC took {out['gc_ms'][name]:.1f} ms while it spun: {out}"
    runtimes = out["runtimes"]
    assert len(runtimes) == 4 and all(chained for *_, chained in runtimes), runtimes
    assert {v for _, _, v, _ in runtimes} == {go_version()}, runtimes


def test_the_chain_is_what_fixes_it(spin_dir):
    """The same measure with the chain's effect undone: asyncpreemptoff makes
    every runtime wait for the loop, as one that lost SIGURG did. The test
    above can fail."""
    out = run_child(spin_dir, ["spin_a", "godlpack"], GODEBUG="asyncpreemptoff=1", spin=SPIN // 2)
    assert out["gc_ms"]["spin_a"] > 5 * GC_BOUND_MS and not out["still_spinning"]["spin_a"], out


def test_a_go_library_loaded_by_ctypes_before_is_adopted(spin_dir, tiny_libs):
    """A Go runtime that is not built on pyext, loaded first: the first
    module that joins finds its handler (it was in place before its own
    runtime started) and chains it. No warning, and its GC preempts too."""
    lib = tiny_libs[0]
    out = run_child(spin_dir, [lib, "spin_a", "godlpack"])
    assert out["gc_ms"][lib] < GC_BOUND_MS and out["still_spinning"][lib], out
    assert out["gc_ms"]["spin_a"] < GC_BOUND_MS, out
    rows = {os.path.basename(p): (v, chained) for p, _, v, chained in out["runtimes"]}
    assert rows["libtinygo.so"] == (None, True), rows  # chained; its version is only known to those that join


def test_a_go_library_loaded_by_ctypes_after_is_adopted_by_go_runtimes(spin_dir, tiny_libs):
    """Loaded after every module, the ctypes library takes SIGURG; the next
    go_runtimes() (or the next import of a Go extension) chains it back."""
    lib = tiny_libs[0]
    out = run_child(spin_dir, ["spin_a", "godlpack", lib], REPAIR="1")
    assert out["gc_ms"]["spin_a"] < GC_BOUND_MS and out["gc_ms"][lib] < GC_BOUND_MS, out
    assert all(chained for *_, chained in out["runtimes"]), out["runtimes"]


def test_a_runtime_whose_handler_was_lost_is_named(spin_dir, tiny_libs):
    """Two foreign Go libraries before any module: the second replaced the
    first's handler, which nothing can find again. The import says so,
    naming it, and go_runtimes() shows it unchained."""
    code = (f"import ctypes, warnings\nctypes.CDLL({tiny_libs[0]!r}); ctypes.CDLL({tiny_libs[1]!r})\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    import godlpack\n"
            "print(repr([str(x.message) for x in w if issubclass(x.category, RuntimeWarning)]))\n"
            "print(repr(godlpack.go_runtimes()))\n")
    r = subprocess.run([sys.executable, "-c", code], env=child_env(), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    warned, runtimes = (eval(line) for line in r.stdout.strip().splitlines())  # noqa: S307  our own child's repr
    assert len(warned) == 1 and "libtinygo.so" in warned[0] and "SIGURG" in warned[0], warned
    rows = {os.path.basename(p): (is_self, chained) for p, is_self, _, chained in runtimes}
    assert rows == {"libtinygo.so": (False, False), "libtinygo2.so": (False, True),
                    os.path.basename(runtimes[-1][0]): (True, True)}, rows


def test_godlpack_alone_lists_one_chained_runtime():
    code = ("import warnings\nwarnings.simplefilter('error', RuntimeWarning)\nimport godlpack\n"
            "print(repr(godlpack.go_runtimes()))\n")
    r = subprocess.run([sys.executable, "-c", code], env=child_env(), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    ((path, is_self, version, chained),) = eval(r.stdout)  # noqa: S307  our own child's repr
    assert "_godlpack" in path and is_self and chained and version == go_version()


# Eight extensions and godlpack: all import, all chained, GC pressure in all
# of them at once from threads; threads and RSS per added runtime measured.
SOAK = r"""
import importlib, json, os, sys, threading, warnings
warnings.simplefilter("error", RuntimeWarning)
def threads(): return len(os.listdir("/proc/self/task"))
def rss_kib():
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))
import godlpack
steps = [(threads(), rss_kib())]
mods = []
for name in json.loads(sys.argv[1]):
    m = importlib.import_module(name)
    m.churn(1000)  # start the runtime's threads
    mods.append(m)
    steps.append((threads(), rss_kib()))
errors = []
def work(m, i):
    try:
        for r in range(20):
            n = 20000 + i
            s = m.churn(n)
            want = sum(k % 256 for k in range(n))
            if s != want:
                errors.append((m.__name__, s, want))
            if r % 5 == 0:
                m.gc_ms()
    except BaseException as e:
        errors.append(repr(e))
ts = [threading.Thread(target=work, args=(m, i)) for i, m in enumerate(mods) for _ in range(2)]
for t in ts: t.start()
for t in ts: t.join(120)
alive = sum(t.is_alive() for t in ts)
print(json.dumps({"steps": steps, "errors": errors, "alive": alive, "runtimes": godlpack.go_runtimes(),
                  "gomaxprocs": [m.gomaxprocs() for m in mods], "cpus": os.cpu_count()}))
"""


def test_eight_go_extensions_and_godlpack_run_together(spin_dir):
    r = subprocess.run([sys.executable, "-c", SOAK, json.dumps(NAMES)], env=child_env(spin_dir), capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["alive"] == 0 and out["errors"] == [], out
    assert len(out["runtimes"]) == 9 and all(chained for *_, chained in out["runtimes"]), out["runtimes"]
    assert out["gomaxprocs"] == [out["cpus"]] * 8, out  # each runtime's default: the CPUs
    steps = out["steps"]
    per_thread = [b[0] - a[0] for a, b in zip(steps, steps[1:])]
    per_rss = [b[1] - a[1] for a, b in zip(steps, steps[1:])]
    print(f"\nper added Go runtime: threads {per_thread}, RSS KiB {per_rss}")
    # A runtime starts a handful of threads (sysmon, GC workers, a template
    # thread...), never one per goroutine.
    assert all(0 < t <= 12 for t in per_thread), per_thread


NOTIFY = r"""
import os, signal, time
# Python's own handler, whatever this process inherited: a shell runs a
# background job (a CI lane, `cmd &`) with SIGINT ignored, and Python then
# installs none. Before the import, so that Go's runtime finds it to forward to.
signal.signal(signal.SIGINT, signal.default_int_handler)
import spin_a
def fire():
    # Waits for an outcome, not a fixed time: Python's KeyboardInterrupt, or
    # Go's count rising (then a little longer, for a KeyboardInterrupt that
    # should not come).
    counted = spin_a.interrupts()
    try:
        os.kill(os.getpid(), signal.SIGINT)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and spin_a.interrupts() == counted:
            time.sleep(0.01)
        time.sleep(0.2)
        return "no KeyboardInterrupt"
    except KeyboardInterrupt:
        return "KeyboardInterrupt"
print(fire(), spin_a.interrupts())
spin_a.notify_interrupt()
print(fire(), spin_a.interrupts())
spin_a.stop_notify()
print(fire(), spin_a.interrupts())
"""


def test_signal_notify_in_an_extension_takes_sigint_until_stop(spin_dir):
    """What docs/runtimes.md says of a user's own signal.Notify: the Go
    runtime's handler takes SIGINT from Python (no KeyboardInterrupt) and
    signal.Stop gives it back."""
    r = subprocess.run([sys.executable, "-c", NOTIFY], env=child_env(spin_dir), capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["KeyboardInterrupt 0", "no KeyboardInterrupt 1", "KeyboardInterrupt 1"], r.stdout


def test_a_handler_that_forwards_back_to_the_chain_does_not_recurse(tmp_path):
    """A Go runtime forwards SIGURG to the handler it replaced (the chain's
    dispatcher) until its signal set-up ends; adopted in that window, it sent
    the signal round the chain without end: "fatal: morestack on gsignal",
    now and then, when a ctypes Go library was adopted just after loading.
    Here the forwarding is deterministic: a SIGURG reaches it, no crash."""
    go = shutil.which("go")
    assert go is not None, "make test needs the Go toolchain"
    (tmp_path / "go.mod").write_text("module fwd\n\ngo 1.26\n")
    (tmp_path / "main.go").write_text(FORWARDER)
    lib = tmp_path / "libfwd.so"
    subprocess.run([go, "build", "-buildmode=c-shared", "-o", str(lib), "."], cwd=tmp_path, check=True,
                   capture_output=True, timeout=600, env=_go_env())
    code = (f"import ctypes, os, signal\nlib = ctypes.CDLL({str(lib)!r})\nimport godlpack\n"
            "assert lib.fwd_install() == 0\n"  # it replaces the dispatcher, and forwards to it
            "rows = {os.path.basename(p): c for p, _, _, c in godlpack.go_runtimes()}\n"  # adopts it
            "os.kill(os.getpid(), signal.SIGURG)\n"
            "print(rows['libfwd.so'], lib.fwd_calls())\n")
    r = subprocess.run([sys.executable, "-c", code], env=child_env(), capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    chained, calls = r.stdout.split()
    # At least our signal went through it (a Go runtime's own preemption
    # signals pass through the chain too, so it may see more).
    assert chained == "True" and int(calls) >= 1, r.stdout
