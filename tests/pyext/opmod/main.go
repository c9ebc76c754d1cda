// Command opmod is a test extension for the numeric and sequence protocols
// of pyext classes: operators (NotImplemented, reflected, in place), slices
// and the buffer protocol. tests/pyext/test_class_operators.py builds it and runs
// tests/pyext/opmod/check_opmod.py against it in a process of its own.
package main

import "C" // cgo: PyInit_opmod is exported to CPython

import (
	"fmt"
	"iter"
	"maps"
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/godlpack/godlpack/pyext"
)

var module = pyext.NewModule("opmod", "Operators, slices and buffers of pyext classes under test.").
	Def("live_objects", pyext.Func0(pyext.LiveObjects), "live_objects()\n--\n\nObjects of Go classes alive.").
	Def("pinned_buffers", pyext.Func0(pyext.PinnedBuffers), "pinned_buffers()\n--\n\nBuffer views not yet released.").
	Def("countdown", pyext.Func1(countdown), "countdown(n)\n--\n\nn, n-1, ..., 1; panics at 13.").
	Def("chunks", chunks, "chunks(x, k)\n--\n\nArrs of k values of x (reflection path).", pyext.ReadOnlyArgs).
	Def("nothing", pyext.Func0(func() iter.Seq[int] { return nil }), "nothing()\n--\n\nA nil sequence.").
	Def("stopped", pyext.Func0(func() int { return int(stopped.Load()) }), "stopped()\n--\n\nSequences that ran their deferred calls.").
	Def("map_seq", pyext.Func2(mapSeq), "map_seq(f, n)\n--\n\nf(0), ..., f(n-1), lazily: the sequence calls Python.").
	Def("defer_seq", pyext.Func1(deferSeq), "defer_seq(f)\n--\n\n0, 1, ...; f(-1) when it stops.").
	Def("map_seq_refl", mapSeq, "map_seq_refl(f, n)\n--\n\nmap_seq through the reflection path.").
	Def("apply_nogil", pyext.Func2(func(f func(int) int, x int) int { return f(x) }),
		"apply_nogil(f, x)\n--\n\nf(x), called without the GIL held by the call.", pyext.ReleaseGIL).
	Def("hook", pyext.Proc1(func(f func(int) int) { f = pyext.Keep(f); hook.Store(&f) }), "hook(f)\n--\n\nKeeps f for Hooked's buffer.").
	Class(tableClass).
	Class(hookedClass).
	Class(cubeClass).
	Class(arrClass).
	Class(matClass).
	Class(bytesClass).
	Class(badShapeClass)

// ---- Arr: a float64 vector with operators, slices and a writable buffer -----------

// Arr is a vector of float64.
type Arr struct{ data []float64 }

var arrClass = pyext.NewClass[Arr]("Arr", "Arr(n)\n--\n\nn zeros.").
	Init(pyext.Func1(func(n int) *Arr { return &Arr{data: make([]float64, max(n, 0))} }), pyext.Args("n")).
	Subclassable().
	ClassMethod("of", pyext.Func1(func(x []float64) *Arr { return &Arr{data: append([]float64(nil), x...)} }),
		"of(x)\n--\n\nAn Arr holding a copy of x.", pyext.ReadOnlyArgs).
	Method("scale", pyext.Proc2(func(a *Arr, k float64) {
		for i := range a.data {
			a.data[i] *= k
		}
	}), "scale(k)\n--\n\nMultiplies every value by k, in place.").
	Method("grow", pyext.Proc2(func(a *Arr, n int) {
		a.data = append(a.data, make([]float64, max(n, 0))...)
	}), "grow(n)\n--\n\nAppends n zeros (the Go slice may move).").
	Len(pyext.Func1(func(a *Arr) int { return len(a.data) })).
	GetItem(pyext.Func2(func(a *Arr, i int) float64 { return a.data[i] })).
	SetItem(pyext.Proc3(func(a *Arr, i int, v float64) { a.data[i] = v })).
	DelItem(pyext.Proc2(func(a *Arr, i int) { a.data = append(a.data[:i], a.data[i+1:]...) })).
	GetSlice(pyext.Func4(func(a *Arr, start, stop, step int) *Arr {
		r := &Arr{}
		for _, i := range indices(start, stop, step) {
			r.data = append(r.data, a.data[i])
		}
		return r
	})).
	SetSlice(pyext.Func5(func(a *Arr, start, stop, step int, v []float64) error {
		idx := indices(start, stop, step)
		if step == 1 { // a contiguous slice may change the length, as a list's does
			a.data = append(a.data[:start:start], append(append([]float64(nil), v...), a.data[max(start, stop):]...)...)
			return nil
		}
		if len(v) != len(idx) {
			return &pyext.ValueError{Msg: fmt.Sprintf("attempt to assign sequence of size %d to extended slice of size %d", len(v), len(idx))}
		}
		for k, i := range idx {
			a.data[i] = v[k]
		}
		return nil
	}), pyext.ReadOnlyArgs).
	DelSlice(pyext.Proc4(func(a *Arr, start, stop, step int) {
		drop := map[int]bool{}
		for _, i := range indices(start, stop, step) {
			drop[i] = true
		}
		kept := a.data[:0:0]
		for i, v := range a.data {
			if !drop[i] {
				kept = append(kept, v)
			}
		}
		a.data = kept
	})).
	Operator("+", pyext.FuncE2(func(a, b *Arr) (*Arr, error) {
		if len(a.data) != len(b.data) {
			return nil, &pyext.ValueError{Msg: fmt.Sprintf("lengths differ: %d and %d", len(a.data), len(b.data))}
		}
		return zipWith(a, b, func(x, y float64) float64 { return x + y }), nil
	})).
	Operator("-", pyext.Func2(func(a *Arr, k float64) *Arr { return mapArr(a, func(x float64) float64 { return x - k }) })).
	ReflectedOperator("-", pyext.Func2(func(a *Arr, k float64) *Arr { return mapArr(a, func(x float64) float64 { return k - x }) })).
	Operator("*", pyext.Func2(func(a *Arr, k float64) *Arr { return mapArr(a, func(x float64) float64 { return x * k }) })).
	ReflectedOperator("*", pyext.Func2(func(a *Arr, k float64) *Arr { return mapArr(a, func(x float64) float64 { return k * x }) })).
	Operator("@", pyext.FuncE2(func(a, b *Arr) (float64, error) {
		if len(a.data) != len(b.data) {
			return 0, &pyext.ValueError{Msg: "matmul: lengths differ"}
		}
		s := 0.0
		for i := range a.data {
			s += a.data[i] * b.data[i]
		}
		return s, nil
	})).
	Operator("divmod", func(a *Arr, k float64) (*Arr, *Arr) {
		q := mapArr(a, func(x float64) float64 { return float64(int64(x / k)) })
		return q, zipWith(a, q, func(x, qq float64) float64 { return x - qq*k })
	}).
	Operator("<<", pyext.Func2(func(a *Arr, n int) *Arr {
		return mapArr(a, func(x float64) float64 { return x * float64(int64(1)<<n) })
	})).
	Operator("-", pyext.Func1(func(a *Arr) *Arr { return mapArr(a, func(x float64) float64 { return -x }) })).
	Operator("abs", pyext.Func1(func(a *Arr) *Arr {
		return mapArr(a, func(x float64) float64 { return max(x, -x) })
	})).
	InPlaceOperator("+", pyext.Func2(func(a, b *Arr) error {
		if len(a.data) != len(b.data) {
			return &pyext.ValueError{Msg: "lengths differ"}
		}
		for i := range a.data {
			a.data[i] += b.data[i]
		}
		return nil
	})).
	InPlaceOperator("*", pyext.Proc2(func(a *Arr, k float64) {
		for i := range a.data {
			a.data[i] *= k
		}
	})).
	Buffer(func(a *Arr) []float64 { return a.data }, true)

// indices are the indices of range(start, stop, step).
func indices(start, stop, step int) []int {
	var r []int
	for i := start; (step > 0 && i < stop) || (step < 0 && i > stop); i += step {
		r = append(r, i)
	}
	return r
}

func mapArr(a *Arr, f func(float64) float64) *Arr {
	r := &Arr{data: make([]float64, len(a.data))}
	for i, x := range a.data {
		r.data[i] = f(x)
	}
	return r
}

func zipWith(a, b *Arr, f func(x, y float64) float64) *Arr {
	r := &Arr{data: make([]float64, len(a.data))}
	for i := range a.data {
		r.data[i] = f(a.data[i], b.data[i])
	}
	return r
}

// ---- Go sequences as Python iterators -----------------------------------------------

// stopped counts sequences whose deferred calls ran.
var stopped atomic.Int64

func countdown(n int) iter.Seq[int] {
	return func(yield func(int) bool) {
		defer stopped.Add(1)
		for i := n; i > 0; i-- {
			if i == 13 {
				panic("countdown: 13")
			}
			if !yield(i) {
				return
			}
		}
	}
}

func chunks(x []float64, k int) iter.Seq[*Arr] {
	x = slices.Clone(x) // the argument's memory is the caller's only during the call
	return func(yield func(*Arr) bool) {
		for c := range slices.Chunk(x, max(k, 1)) {
			if !yield(&Arr{data: c}) {
				return
			}
		}
	}
}

func mapSeq(f func(int) int, n int) iter.Seq[int] {
	f = pyext.Keep(f) // the sequence calls it after the call returned
	return func(yield func(int) bool) {
		for i := range n {
			if !yield(f(i)) {
				return
			}
		}
	}
}

func deferSeq(f func(int) int) iter.Seq[int] {
	f = pyext.Keep(f)
	return func(yield func(int) bool) {
		defer f(-1)
		for i := 0; ; i++ {
			if !yield(i) {
				return
			}
		}
	}
}

// hook is a Python callable kept by Go (hook()), which Hooked's buffer calls.
var hook atomic.Pointer[func(int) int]

// Hooked's buffer function calls the hooked callable first.
type Hooked struct{ b []byte }

var hookedClass = pyext.NewClass[Hooked]("Hooked", "Hooked()\n--\n\nA buffer whose function calls Python.").
	Init(pyext.Func0(func() *Hooked { return &Hooked{b: []byte("hi")} })).
	Buffer(func(h *Hooked) []byte { (*hook.Load())(1); return h.b }, false)

// Cube is an empty 2×0×3 buffer: C- and Fortran-contiguous at once.
type Cube struct{}

var cubeClass = pyext.NewClass[Cube]("Cube", "Cube()\n--\n\nAn empty (2, 0, 3) buffer.").
	Init(pyext.Func0(func() *Cube { return &Cube{} })).
	Buffer(func(*Cube) ([]float32, []int) { return nil, []int{2, 0, 3} }, false)

// Table maps names to values; iter(table) gives (name, value) in name order.
type Table struct{ m map[string]float64 }

var tableClass = pyext.NewClass[Table]("Table", "Table(n)\n--\n\nk0..k{n-1} mapped to 0..n-1.").
	Init(pyext.Func1(func(n int) *Table {
		t := &Table{m: map[string]float64{}}
		for i := range n {
			t.m[fmt.Sprintf("k%d", i)] = float64(i)
		}
		return t
	})).
	Subclassable().
	Contains(pyext.Func2(func(t *Table, k string) bool { _, ok := t.m[k]; return ok })).
	Iter(pyext.Seq2(func(t *Table) iter.Seq2[string, float64] {
		return func(yield func(string, float64) bool) {
			for _, k := range slices.Sorted(maps.Keys(t.m)) {
				if !yield(k, t.m[k]) {
					return
				}
			}
		}
	}))

// ---- Mat: a read-only 2-d int32 buffer ---------------------------------------------

// Mat is a rows×cols matrix of int32, row-major.
type Mat struct {
	data       []int32
	rows, cols int
}

var matClass = pyext.NewClass[Mat]("Mat", "Mat(rows, cols)\n--\n\nA matrix whose item (i, j) is 10*i + j.").
	Init(pyext.FuncE2(func(rows, cols int) (*Mat, error) {
		if rows < 0 || cols < 0 {
			return nil, &pyext.ValueError{Msg: "negative shape"}
		}
		m := &Mat{data: make([]int32, rows*cols), rows: rows, cols: cols}
		for i := range rows {
			for j := range cols {
				m.data[i*cols+j] = int32(10*i + j)
			}
		}
		return m, nil
	})).
	Method("bump", pyext.Proc1(func(m *Mat) {
		for i := range m.data {
			m.data[i]++
		}
	}), "bump()\n--\n\nAdds 1 to every item.").
	Buffer(func(m *Mat) ([]int32, []int) { return m.data, []int{m.rows, m.cols} }, false)

// ---- Bytes: a uint8 buffer; BadShape: a shape that does not fit ---------------------

// Bytes holds a string's bytes.
type Bytes struct{ b []byte }

var bytesClass = pyext.NewClass[Bytes]("Bytes", "Bytes(s)\n--\n\nThe UTF-8 bytes of s.").
	Init(pyext.Func1(func(s string) *Bytes { return &Bytes{b: []byte(s)} })).
	Buffer(func(b *Bytes) []byte { return b.b }, false)

// BadShape's buffer function returns a shape of 4 items for 3.
type BadShape struct{ data []float32 }

var badShapeClass = pyext.NewClass[BadShape]("BadShape", "BadShape()\n--\n\nA buffer whose shape is wrong.").
	Init(pyext.Func0(func() *BadShape { return &BadShape{data: make([]float32, 3)} })).
	Buffer(func(b *BadShape) ([]float32, []int) { return b.data, []int{2, 2} }, false)

//export PyInit_opmod
func PyInit_opmod() unsafe.Pointer { return module.Init() }

func main() {}
