// Command spinmod is a test extension for many Go runtimes in one process:
// tests/pyext/test_runtimes.py builds it once and copies the library under several
// names (spin_a, spin_b, ...), so that each copy is loaded as its own
// c-shared object with its own Go runtime. spin's loop has no function call
// in it, so only asynchronous preemption (SIGURG) can stop it for a
// garbage collection: gc_ms measures how long runtime.GC takes meanwhile.
package main

import "C" // cgo: the PyInit_spin_* functions are exported to CPython

import (
	"os"
	"os/signal"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/godlpack/godlpack/pyext"
)

var spinning atomic.Int32

// spin runs n rounds of an LCG: no call, no allocation, so no cooperative
// preemption point; the atomic stores are intrinsics, not calls.
func spin(n int64) int64 {
	spinning.Store(1)
	x := uint64(1)
	for i := int64(0); i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	spinning.Store(0)
	return int64(x >> 1)
}

func isSpinning() bool { return spinning.Load() == 1 }

// gcMs is one runtime.GC, in milliseconds: it stops the world, which waits
// for every running goroutine to be preempted.
func gcMs() float64 {
	t := time.Now()
	runtime.GC()
	return float64(time.Since(t).Nanoseconds()) / 1e6
}

// churn makes n short-lived 1 KiB slices (GC pressure) and returns the sum
// of their first bytes, which each holds as its index mod 256.
func churn(n int64) int64 {
	var s int64
	for i := int64(0); i < n; i++ {
		b := make([]byte, 1024)
		b[0] = byte(i)
		s += int64(b[0])
	}
	return s
}

// A user's own signal.Notify in an extension (docs/runtimes.md says what it
// does to Python's SIGINT): notifyInterrupt starts counting SIGINTs on a
// channel, stopNotify gives the signal back.
var (
	interrupts atomic.Int64
	sigs       = make(chan os.Signal, 16)
)

func notifyInterrupt() {
	signal.Notify(sigs, os.Interrupt)
	go func() {
		for range sigs {
			interrupts.Add(1)
		}
	}()
}

func stopNotify() { signal.Stop(sigs) }

func numInterrupts() int64 { return interrupts.Load() }

func numGoroutine() int64 { return int64(runtime.NumGoroutine()) }

func gomaxprocs() int64 { return int64(runtime.GOMAXPROCS(0)) }

func newModule(name string) *pyext.Module {
	return pyext.NewModule(name, "One Go runtime under test (tests/pyext/spinmod).").
		Def("spin", pyext.Func1(spin), "spin(n): n rounds of a loop with no preemption point (GIL released).",
			pyext.ReleaseGIL).
		Def("is_spinning", pyext.Func0(isSpinning), "Whether spin is running.").
		Def("gc_ms", pyext.Func0(gcMs), "gc_ms(): milliseconds one runtime.GC took (GIL released).", pyext.ReleaseGIL).
		Def("churn", pyext.Func1(churn), "churn(n): n garbage 1 KiB slices (GIL released).", pyext.ReleaseGIL).
		Def("num_goroutine", pyext.Func0(numGoroutine), "runtime.NumGoroutine().").
		Def("gomaxprocs", pyext.Func0(gomaxprocs), "runtime.GOMAXPROCS(0).").
		Def("notify_interrupt", pyext.Proc0(notifyInterrupt), "signal.Notify for SIGINT, counted.").
		Def("stop_notify", pyext.Proc0(stopNotify), "signal.Stop of notify_interrupt's channel.").
		Def("interrupts", pyext.Func0(numInterrupts), "How many SIGINTs Go received.")
}

var mods = map[string]*pyext.Module{}

func init() {
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		mods["spin_"+n] = newModule("spin_" + n)
	}
}

//export PyInit_spin_a
func PyInit_spin_a() unsafe.Pointer { return mods["spin_a"].Init() }

//export PyInit_spin_b
func PyInit_spin_b() unsafe.Pointer { return mods["spin_b"].Init() }

//export PyInit_spin_c
func PyInit_spin_c() unsafe.Pointer { return mods["spin_c"].Init() }

//export PyInit_spin_d
func PyInit_spin_d() unsafe.Pointer { return mods["spin_d"].Init() }

//export PyInit_spin_e
func PyInit_spin_e() unsafe.Pointer { return mods["spin_e"].Init() }

//export PyInit_spin_f
func PyInit_spin_f() unsafe.Pointer { return mods["spin_f"].Init() }

//export PyInit_spin_g
func PyInit_spin_g() unsafe.Pointer { return mods["spin_g"].Init() }

//export PyInit_spin_h
func PyInit_spin_h() unsafe.Pointer { return mods["spin_h"].Init() }

func main() {}
