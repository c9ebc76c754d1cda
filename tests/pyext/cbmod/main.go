// Command cbmod is a test extension for Python callables as Go func
// parameters and for list and dict containers (pyext's callback.go and
// containers.go): tests/pyext/test_callbacks.py builds it and runs
// tests/pyext/cbmod/check_cbmod.py against it in a process of its own.
package main

import "C" // cgo: PyInit_cbmod is exported to CPython

import (
	"errors"
	"fmt"
	"iter"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/godlpack/godlpack/pyext"
)

// ---- callables -------------------------------------------------------------------

func apply(xs []float64, f func(float64) float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += f(x)
	}
	return s
}

// parallel calls f(0..n-1) from n goroutines at once; the sum, or the
// first error (a Python exception, raised again).
func parallel(n int, f func(int) (int, error)) (int, error) {
	var wg sync.WaitGroup
	res := make([]int, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i], errs[i] = f(i)
		}()
	}
	wg.Wait()
	s := 0
	for i := range n {
		if errs[i] != nil {
			return 0, errs[i]
		}
		s += res[i]
	}
	return s, nil
}

func check(f func(string, int) (bool, error)) (bool, error) { return f("a", 1) }

func checkWrapped(f func(string, int) (bool, error)) (bool, error) {
	ok, err := f("a", 1)
	if err != nil {
		return false, fmt.Errorf("check_wrapped: %w", err)
	}
	return ok, nil
}

// describe is what Go sees of the callable's exception: its type name and
// message through errors.As, then the error's own text.
func describe(f func() error) string {
	err := fmt.Errorf("wrapped: %w", f())
	var pe *pyext.PyError
	if !errors.As(err, &pe) {
		return "no PyError: " + fmt.Sprint(err)
	}
	return pe.Type + "|" + pe.Msg + "|" + err.Error()
}

var unwound, continued atomic.Int64

// noErr's func has no error result: an exception unwinds it (its deferred
// call runs, the code after the call does not).
func noErr(f func(float64) float64) float64 {
	defer unwound.Add(1)
	y := f(1)
	continued.Add(1)
	return y
}

func counters() (int, int) { return int(unwound.Load()), int(continued.Load()) }

var stored struct {
	sync.Mutex
	f func(int) int
}

// store keeps f past the call (pyext.Keep: its callable stays alive until
// Go drops f).
func store(f func(int) int) {
	keepStored(pyext.Keep(f))
}

func keepStored(f func(int) int) {
	stored.Lock()
	stored.f = f
	stored.Unlock()
}

func callStored(x int) int {
	stored.Lock()
	f := stored.f
	stored.Unlock()
	return f(x)
}

// callStoredLater calls the stored func from a new goroutine, after the
// call that kept it has returned, with the GIL released here.
func callStoredLater(x int) int {
	ch := make(chan int)
	go func() { ch <- callStored(x) }()
	return <-ch
}

func dropStored() { keepStored(nil) }

// storeUnkept keeps f without pyext.Keep: pyext released its callable when
// the call returned, so a later call of f is refused.
func storeUnkept(f func(int) int) { keepStored(f) }

var errStored struct {
	sync.Mutex
	f func() error
}

func storeUnkeptErr(f func() error) {
	errStored.Lock()
	errStored.f = f
	errStored.Unlock()
}

func callStoredErr() error {
	errStored.Lock()
	f := errStored.f
	errStored.Unlock()
	return f()
}

// spin calls f from a goroutine of its own until f fails (or 5 s have
// passed: "N <nil>"), and returns once f called spin_mark (or after 5 s),
// so that the goroutine is inside a call of f when spin's call returns.
// spinResult waits for the goroutine.
var spun = make(chan string, 1)
var marked = make(chan struct{}, 1)

func spin(f func() error) {
	go func() {
		n := 0
		for end := time.Now().Add(5 * time.Second); time.Now().Before(end); n++ {
			if err := f(); err != nil {
				spun <- fmt.Sprintf("%d %v", n, err)
				return
			}
		}
		spun <- fmt.Sprintf("%d <nil>", n)
	}()
	select {
	case <-marked:
	case <-time.After(5 * time.Second):
	}
}

func spinMark() { marked <- struct{}{} }

// lazy returns a sequence that calls f, which it forgot to Keep.
func lazy(f func(int) int) iter.Seq[int] {
	return func(yield func(int) bool) { _ = yield(f(1)) }
}

func spinResult() string { return <-spun }

// goGC runs Go's collector, so that the funcs no longer referenced release
// their callables (their cleanups take the GIL: this call releases it).
func goGC() {
	for range 3 {
		runtime.GC()
		time.Sleep(2 * time.Millisecond)
	}
}

func small(f func() int8) int8         { return f() }
func tiny(f func() uint8) uint8        { return f() }
func asFloat(f func() float64) float64 { return f() }
func asFloat32(f func() float32) float32 {
	return f()
}
func asStr(f func() string) string { return f() }
func asBool(f func() bool) bool    { return f() }
func multi(f func(int, string) (int, string)) string {
	n, s := f(2, "ab")
	return fmt.Sprintf("%d:%s", n, s)
}
func echo(f func(float64, int64, uint16, bool, string) string) string {
	return f(1.5, -3, 65535, true, "héllo")
}

func panics() int { panic("boom in Go") }

// ---- a class with callables ------------------------------------------------------

// Counter counts, and hands itself to callables.
type Counter struct{ n int }

var counterClass = pyext.NewClass[Counter]("Counter", "Counter(n)\n--\n\nA counter.").
	Init(pyext.Func1(func(n int) *Counter { return &Counter{n} })).
	Method("each", pyext.FuncE2((*Counter).Each), "each(f)\n--\n\nf(i) for i < n while f says True; how many.").
	Method("each_refl", (*Counter).Each, "each_refl(f)\n--\n\neach through reflection.").
	Method("visit", pyext.Func2((*Counter).Visit), "visit(f)\n--\n\nf(self).n plus one.").
	Method("value", pyext.Func1(func(c *Counter) int { return c.n }), "value()\n--\n\nn.")

func (c *Counter) Each(f func(int) (bool, error)) (int, error) {
	for i := range c.n {
		more, err := f(i)
		if err != nil {
			return i, err
		}
		if !more {
			return i + 1, nil
		}
	}
	return c.n, nil
}

func (c *Counter) Visit(f func(*Counter) *Counter) int { return f(c).n + 1 }

func counters3(n int) []*Counter {
	out := make([]*Counter, n)
	for i := range out {
		out[i] = &Counter{i}
	}
	return out
}

// ---- containers ------------------------------------------------------------------

func words(s string) []string             { return strings.Fields(s) }
func join(xs []string, sep string) string { return strings.Join(xs, sep) }
func counts(xs []string) map[string]int {
	m := map[string]int{}
	for _, x := range xs {
		m[x]++
	}
	return m
}
func scale(m map[string]float64, k float64) map[string]float64 {
	out := make(map[string]float64, len(m))
	for key, v := range m {
		out[key] = v * k
	}
	return out
}
func upper(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[strings.ToUpper(k)] = strings.ToUpper(v)
	}
	return out
}

// Go strings that are not UTF-8, in a list and as a dict key: each result refuses them.
func badWords() []string        { return []string{"ok", "\xff"} }
func badMap() map[string]string { return map[string]string{"k\xff": "v"} }
func trueKeys(m map[string]bool) []string {
	var out []string
	for k, v := range m {
		if v {
			out = append(out, k)
		}
	}
	return out
}
func sum8(m map[string]int8) int {
	s := 0
	for _, v := range m {
		s += int(v)
	}
	return s
}
func kinds() (map[string]uint32, map[string]bool, []string) {
	return map[string]uint32{"max": 1<<32 - 1}, map[string]bool{"t": true, "f": false}, []string{}
}

var module = pyext.NewModule("cbmod", "Python callables and containers in pyext, under test.").
	Def("apply", pyext.Func2(apply), "apply(xs, f)\n--\n\nsum(f(x) for x in xs), typed.", pyext.ReadOnlyArgs, pyext.Args("xs", "f")).
	Def("apply_refl", apply, "apply(xs, f)\n--\n\napply through reflection.", pyext.ReadOnlyArgs).
	Def("apply_nogil", pyext.Func2(apply), "apply(xs, f)\n--\n\napply without the GIL.", pyext.ReadOnlyArgs, pyext.ReleaseGIL).
	Def("apply_nogil_refl", apply, "apply(xs, f)\n--\n\napply without the GIL, reflection.", pyext.ReadOnlyArgs, pyext.ReleaseGIL).
	Def("parallel", pyext.FuncE2(parallel), "parallel(n, f)\n--\n\nf(i) from n goroutines at once, summed.", pyext.ReleaseGIL).
	Def("parallel_refl", parallel, "parallel(n, f)\n--\n\nparallel through reflection.", pyext.ReleaseGIL).
	Def("check", pyext.FuncE1(check), "check(f)\n--\n\nf('a', 1), its error returned as is.").
	Def("check_refl", check, "check(f)\n--\n\ncheck through reflection.").
	Def("check_wrapped", pyext.FuncE1(checkWrapped), "check_wrapped(f)\n--\n\nf('a', 1), its error wrapped.", pyext.ReleaseGIL).
	Def("describe", pyext.Func1(describe), "describe(f)\n--\n\nWhat Go sees of f's exception.").
	Def("no_err", pyext.Func1(noErr), "no_err(f)\n--\n\nf(1); f's func type has no error result.").
	Def("no_err_refl", noErr, "no_err(f)\n--\n\nno_err through reflection.", pyext.ReleaseGIL).
	Def("counters", counters, "counters()\n--\n\n(no_err calls unwound, no_err calls continued).").
	Def("store", pyext.Proc1(store), "store(f)\n--\n\nKeeps f.").
	Def("call_stored", pyext.Func1(callStored), "call_stored(x)\n--\n\nThe kept f(x).").
	Def("call_stored_later", pyext.Func1(callStoredLater), "call_stored_later(x)\n--\n\nThe kept f(x), from a goroutine.", pyext.ReleaseGIL).
	Def("store_unkept", pyext.Proc1(storeUnkept), "store_unkept(f)\n--\n\nKeeps f without pyext.Keep.").
	Def("store_unkept_refl", storeUnkept, "store_unkept(f)\n--\n\nstore_unkept through reflection.").
	Def("store_unkept_err", pyext.Proc1(storeUnkeptErr), "store_unkept_err(f)\n--\n\nKeeps f, of an error result, without pyext.Keep.").
	Def("call_stored_err", callStoredErr, "call_stored_err()\n--\n\nThe kept f().").
	Def("spin", pyext.Proc1(spin), "spin(f)\n--\n\nf() from a goroutine until it fails; returns once f called spin_mark.", pyext.ReleaseGIL).
	Def("lazy", pyext.Func1(lazy), "lazy(f)\n--\n\nA sequence calling f, which Go did not keep.").
	Def("spin_mark", pyext.Proc0(spinMark), "spin_mark()\n--\n\nLets spin return.").
	Def("spin_result", pyext.Func0(spinResult), "spin_result()\n--\n\nHow often spin's f ran, and its error.", pyext.ReleaseGIL).
	Def("drop_stored", pyext.Proc0(dropStored), "drop_stored()\n--\n\nForgets the kept f.").
	Def("go_gc", pyext.Proc0(goGC), "go_gc()\n--\n\nRuns Go's garbage collector.", pyext.ReleaseGIL).
	Def("small", pyext.Func1(small), "small(f)\n--\n\nf() as an int8.").
	Def("tiny", tiny, "tiny(f)\n--\n\nf() as a uint8, reflection.").
	Def("as_float", pyext.Func1(asFloat), "as_float(f)\n--\n\nf() as a float64.").
	Def("as_float32", asFloat32, "as_float32(f)\n--\n\nf() as a float32.").
	Def("as_str", pyext.Func1(asStr), "as_str(f)\n--\n\nf() as a string.").
	Def("as_bool", pyext.Func1(asBool), "as_bool(f)\n--\n\nf() as a bool.").
	Def("multi", pyext.Func1(multi), "multi(f)\n--\n\nf(2, 'ab') returns (int, str).").
	Def("echo", echo, "echo(f)\n--\n\nf(1.5, -3, 65535, True, 'héllo').").
	Def("panics", pyext.Func0(panics), "panics()\n--\n\nA Go panic.").
	Def("live_objects", pyext.Func0(pyext.LiveObjects), "live_objects()\n--\n\nObjects of Go classes alive.").
	Def("counters3", pyext.Func1(counters3), "counters3(n)\n--\n\nn Counters, as a list.").
	Def("words", pyext.Func1(words), "words(s)\n--\n\nThe words of s.").
	Def("words_refl", words, "words(s)\n--\n\nwords through reflection.").
	Def("join", pyext.Func2(join), "join(xs, sep)\n--\n\nsep.join(xs).", pyext.Args("xs", "sep")).
	Def("join_refl", join, "join(xs, sep)\n--\n\njoin through reflection.").
	Def("counts", pyext.Func1(counts), "counts(xs)\n--\n\nHow often each string comes.").
	Def("scale", pyext.Func2(scale), "scale(m, k)\n--\n\nm's values times k.", pyext.Args("m", "k")).
	Def("scale_refl", scale, "scale(m, k)\n--\n\nscale through reflection.", pyext.ReleaseGIL).
	Def("upper", pyext.Func1(upper), "upper(m)\n--\n\nKeys and values upper-cased.").
	Def("true_keys", pyext.Func1(trueKeys), "true_keys(m)\n--\n\nThe keys whose value is True.").
	Def("bad_words", pyext.Func0(badWords), "bad_words()\n--\n\nA list with a string that is not UTF-8.").
	Def("bad_map", pyext.Func0(badMap), "bad_map()\n--\n\nA dict with a key that is not UTF-8.").
	Def("sum8", sum8, "sum8(m)\n--\n\nThe sum of int8 values.").
	Def("kinds", kinds, "kinds()\n--\n\nA uint32 dict, a bool dict and an empty list.").
	Class(counterClass)

//export PyInit_cbmod
func PyInit_cbmod() unsafe.Pointer { return module.Init() }

func main() {}
