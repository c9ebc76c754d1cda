// Command classmod is a test extension for the typed wrappers of every
// arity and the class features of pyext (weak references, repr/str, static
// and class methods, comparison and hashing, the sequence protocol,
// iteration, context managers, calls, custom exceptions):
// tests/pyext/test_classes.py builds it and runs tests/pyext/classmod/check_classmod.py
// against it in a process of its own.
package main

import "C" // cgo: PyInit_classmod is exported to CPython

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"iter"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/godlpack/godlpack/pyext"
)

// ---- typed wrappers of every arity -------------------------------------------

func sum3(x []float64, a float64, n int) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s*a + float64(n)
}

func mix6(x []float64, a float64, n int, neg bool, tag string, b float32) string {
	s := sum3(x, a, n) + float64(b)
	if neg {
		s = -s
	}
	return fmt.Sprintf("%s:%g", tag, s)
}

func mix6e(x []float64, a float64, n int, neg bool, tag string, b float32) (string, error) {
	if tag == "" {
		return "", &pyext.ValueError{Msg: "mix6e: empty tag"}
	}
	return mix6(x, a, n, neg, tag, b), nil
}

var sink [6]int

func store6(a, b, c, d, e, f int) { sink = [6]int{a, b, c, d, e, f} }

func sink6() (int, int, int, int, int, int) {
	return sink[0], sink[1], sink[2], sink[3], sink[4], sink[5]
}

func add8(a, b, c, d, e, f, g, h int) int { return a + b + c + d + e + f + g + h }

func panic3(a, b, c int) int { panic(fmt.Sprintf("panic3(%d, %d, %d)", a, b, c)) }

var module = pyext.NewModule("classmod", "Class features of pyext under test.").
	Def("sum3", pyext.Func3(sum3), "sum3(x, a, n)\n--\n\nsum(x)*a + n, typed.", pyext.ReadOnlyArgs).
	Def("sum3_refl", sum3, "sum3(x, a, n)\n--\n\nsum3 through reflection.", pyext.ReadOnlyArgs).
	Def("mix6", pyext.Func6(mix6), "mix6(x, a, n, neg, tag, b)\n--\n\nsix parameters, typed.", pyext.ReadOnlyArgs).
	Def("mix6_refl", mix6, "mix6(x, a, n, neg, tag, b)\n--\n\nmix6 through reflection.", pyext.ReadOnlyArgs).
	Def("mix6e", pyext.FuncE6(mix6e), "mix6e(x, a, n, neg, tag, b)\n--\n\nmix6 with an error.", pyext.ReadOnlyArgs,
		pyext.Args("x", "a", "n", "neg=False", "tag='t'", "b=0.0")).
	Def("store6", pyext.Proc6(store6), "store6(a, b, c, d, e, f)\n--\n\nkeeps six ints.").
	Def("sink6", pyext.Func0(sink6sum), "sink6()\n--\n\nthe sum of what store6 kept.").
	Def("add8", pyext.Func8(add8), "add8(a, b, c, d, e, f, g, h)\n--\n\neight ints added.").
	Def("panic3", pyext.Func3(panic3), "panic3(a, b, c)\n--\n\npanics.").
	Def("live_objects", pyext.Func0(pyext.LiveObjects), "live_objects()\n--\n\nObjects of Go classes alive.").
	Def("last_step", pyext.Func0(func() int { return int(lastStep.Load()) }), "last_step()\n--\n\nThe step the last Vec slice got.").
	Def("stopped", pyext.Func0(func() int { return int(stopped.Load()) }), "stopped()\n--\n\nGo iterations that ran their deferred calls.").
	Def("parse", pyext.FuncE1(parse), "parse(s)\n--\n\nParses an int; ParseError on bad input, NotFound for 'missing'.").
	Def("index_error", pyext.FuncE0(func() (int, error) { return 0, &pyext.IndexError{Msg: "no such row"} }), "index_error()\n--\n\nraises IndexError.").
	Exception(parseError).
	Exception(notFound).
	Class(vecClass).
	Class(pointClass).
	Class(bareClass).
	Class(keyClass)

// ---- a sequence class: Vec ------------------------------------------------------

// Vec is a vector of float64: a mutable sequence, iterable, comparable,
// hashable, callable and a context manager.
type Vec struct {
	data    []float64
	entered int
	exits   []bool
}

var vecClass = pyext.NewClass[Vec]("Vec", "Vec(n)\n--\n\nA vector of n zeros.").
	Init(pyext.FuncE1(newVec), pyext.Args("n")).
	WeakRef().
	Subclassable().
	Method("append", pyext.Proc2((*Vec).Append), "append(x)\n--\n\nAppends x.").
	Method("fill6", pyext.FuncE7((*Vec).Fill6), "fill6(a, b, c, d, e, f)\n--\n\nThe first six values; their sum.").
	Method("entered", pyext.Func1(func(v *Vec) int { return v.entered }), "entered()\n--\n\nHow many with blocks began.").
	Method("exits", pyext.Func1(func(v *Vec) string { return fmt.Sprint(v.exits) }), "exits()\n--\n\nThe raised flag of each with block's end.").
	StaticMethod("dot", pyext.Func2(dot), "dot(a, b)\n--\n\nThe dot product of two Vecs.").
	StaticMethod("norm2", pyext.Func3(func(x, y, z float64) float64 { return math.Sqrt(x*x + y*y + z*z) }), "norm2(x, y, z)\n--\n\nA Euclidean norm.").
	ClassMethod("filled", pyext.Func2(filled), "filled(n, v=1.0)\n--\n\nA Vec of n values v.", pyext.Args("n", "v=1.0")).
	Len(pyext.Func1((*Vec).Len)).
	GetItem(pyext.Func2((*Vec).At)).
	SetItem(pyext.Proc3((*Vec).Set)).
	DelItem(pyext.Proc2((*Vec).Del)).
	Contains(pyext.Func2((*Vec).Has)).
	GetSlice(pyext.Func4((*Vec).Slice)).
	SetSlice(pyext.Func5((*Vec).SetSlice)).
	DelSlice(pyext.Proc4((*Vec).DelSlice)).
	Iter(pyext.Seq((*Vec).All)).
	Call(pyext.FuncE2((*Vec).Scaled), "v(a)\n--\n\nA new Vec: v times a.").
	Context(pyext.Proc1((*Vec).Enter), pyext.Proc2((*Vec).Exit))

func newVec(n int) (*Vec, error) {
	if n < 0 {
		return nil, &pyext.ValueError{Msg: fmt.Sprintf("Vec: n must be >= 0, got %d", n)}
	}
	return &Vec{data: make([]float64, n)}, nil
}

func filled(n int, v float64) *Vec {
	x := &Vec{data: make([]float64, n)}
	for i := range x.data {
		x.data[i] = v
	}
	return x
}

func dot(a, b *Vec) float64 {
	s := 0.0
	for i := range min(len(a.data), len(b.data)) {
		s += a.data[i] * b.data[i]
	}
	return s
}

// Fill6 sets the first six values (a typed method of six parameters, FuncE7).
func (v *Vec) Fill6(a, b, c, d, e, f float64) (float64, error) {
	if len(v.data) < 6 {
		return 0, &pyext.IndexError{Msg: fmt.Sprintf("fill6: %d values, want 6", len(v.data))}
	}
	copy(v.data, []float64{a, b, c, d, e, f})
	return a + b + c + d + e + f, nil
}

func (v *Vec) Append(x float64)     { v.data = append(v.data, x) }
func (v *Vec) Len() int             { return len(v.data) }
func (v *Vec) At(i int) float64     { return v.data[i] } // pyext checked 0 <= i < Len
func (v *Vec) Set(i int, x float64) { v.data[i] = x }
func (v *Vec) Del(i int)            { v.data = slices.Delete(v.data, i, i+1) }
func (v *Vec) Has(x float64) bool   { return slices.Contains(v.data, x) }
func (v *Vec) Equal(o *Vec) bool    { return slices.Equal(v.data, o.data) }
func (v *Vec) Less(o *Vec) bool     { return slices.Compare(v.data, o.data) < 0 }
func (v *Vec) Enter()               { v.entered++ }
func (v *Vec) Exit(raised bool)     { v.exits = append(v.exits, raised) }
func (v *Vec) String() string       { return fmt.Sprint(v.data) }
func (v *Vec) GoString() string     { return fmt.Sprintf("classmod.Vec(%d)", len(v.data)) }

// indices are range(start, stop, step), by docs/operators.md's loop
// (pyext gives a step that cannot overflow it).
func indices(start, stop, step int) []int {
	var idx []int
	for i := start; step > 0 && i < stop || step < 0 && i > stop; i += step {
		idx = append(idx, i)
	}
	return idx
}

// lastStep is the step the last Slice got (pyext's clamp, tested).
var lastStep atomic.Int64

// Slice is v[start:stop:step].
func (v *Vec) Slice(start, stop, step int) *Vec {
	lastStep.Store(int64(step))
	r := &Vec{data: []float64{}}
	for _, i := range indices(start, stop, step) {
		r.data = append(r.data, v.data[i])
	}
	return r
}

// SetSlice is v[start:stop:step] = w; step 1 may change the length.
func (v *Vec) SetSlice(start, stop, step int, w *Vec) error {
	idx := indices(start, stop, step)
	src := slices.Clone(w.data)
	if step == 1 {
		v.data = slices.Concat(v.data[:start], src, v.data[max(start, stop):])
		return nil
	}
	if len(src) != len(idx) {
		return &pyext.ValueError{Msg: fmt.Sprintf("attempt to assign sequence of size %d to extended slice of size %d", len(src), len(idx))}
	}
	for k, i := range idx {
		v.data[i] = src[k]
	}
	return nil
}

// DelSlice is del v[start:stop:step].
func (v *Vec) DelSlice(start, stop, step int) {
	drop := map[int]bool{}
	for _, i := range indices(start, stop, step) {
		drop[i] = true
	}
	kept := []float64{}
	for i, x := range v.data {
		if !drop[i] {
			kept = append(kept, x)
		}
	}
	v.data = kept
}

// MarshalBinary makes Vec objects picklable: the values, little-endian.
func (v *Vec) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, 8*len(v.data))
	for _, x := range v.data {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	return b, nil
}

// UnmarshalBinary is MarshalBinary's inverse, called on a zero Vec.
func (v *Vec) UnmarshalBinary(b []byte) error {
	if len(b)%8 != 0 {
		return &pyext.ValueError{Msg: fmt.Sprintf("Vec: %d bytes, not a whole number of float64", len(b))}
	}
	v.data = make([]float64, len(b)/8)
	for i := range v.data {
		v.data[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return nil
}

// Hash is hash(v): by value, as Equal.
func (v *Vec) Hash() uint64 {
	h := fnv.New64a()
	for _, x := range v.data {
		b := math.Float64bits(x + 0) // +0: -0 hashes as 0, as it compares
		_, _ = h.Write([]byte{byte(b), byte(b >> 8), byte(b >> 16), byte(b >> 24), byte(b >> 32), byte(b >> 40), byte(b >> 48), byte(b >> 56)})
	}
	return h.Sum64()
}

// Scaled is v(a); a NaN scale panics (for the RuntimeError test), a
// negative one fails.
func (v *Vec) Scaled(a float64) (*Vec, error) {
	if math.IsNaN(a) {
		panic("scale by NaN")
	}
	if a < 0 {
		return nil, &pyext.ValueError{Msg: "negative scale"}
	}
	out := &Vec{data: slices.Clone(v.data)}
	for i := range out.data {
		out.data[i] *= a
	}
	return out, nil
}

var stopped atomic.Int64

// All yields the values; a value of 13 panics, and its deferred count
// says when an iteration ended (finished or stopped early).
func (v *Vec) All() iter.Seq[float64] {
	return func(yield func(float64) bool) {
		defer stopped.Add(1)
		for _, x := range v.data {
			if x == 13 {
				panic("unlucky 13")
			}
			if !yield(x) {
				return
			}
		}
	}
}

// ---- Point: Equal without Hash (unhashable), repr from String ------------------

type Point struct{ X, Y int }

var pointClass = pyext.NewClass[Point]("Point", "Point(x, y)\n--\n\nA point.").
	Init(pyext.Func2(func(x, y int) *Point { return &Point{x, y} })).
	Property("x", pyext.Func1(func(p *Point) int { return p.X }), nil, "x").
	Iter(pyext.Seq(func(p *Point) iter.Seq[*Point] {
		return func(yield func(*Point) bool) { _ = yield(&Point{p.Y, p.X}) && yield(&Point{p.X, p.Y}) }
	}))

func (p *Point) Equal(o *Point) bool { return *p == *o }
func (p *Point) String() string      { return fmt.Sprintf("Point(%d, %d)", p.X, p.Y) }

// Bare has no protocol at all: no weak references, Python's repr, hash by identity.
type Bare struct{}

var bareClass = pyext.NewClass[Bare]("Bare", "Bare()\n--\n\nNothing declared.").Init(pyext.Func0(func() *Bare { return &Bare{} }))

// Key compares and hashes by value (EqualByValue): T is comparable.
type Key struct {
	Name string
	N    int
	F    float64
	tag  [2]bool
	any  any
}

var keyClass = pyext.NewClass[Key]("Key", "Key(name, n, f)\n--\n\nA value key.").
	Init(pyext.Func3(func(name string, n int, f float64) *Key { return &Key{Name: name, N: n, F: f, any: n % 2} })).
	EqualByValue()

// ---- custom exceptions -----------------------------------------------------------

// ParseError is raised as classmod.ParseError (a ValueError).
type ParseError struct{ Input string }

func (e *ParseError) Error() string { return fmt.Sprintf("cannot parse %q", e.Input) }

// NotFound is raised as classmod.NotFound (a KeyError).
type NotFound struct{ Key string }

func (e *NotFound) Error() string { return e.Key + " not found" }

var (
	parseError = pyext.NewException[*ParseError]("ParseError", "ValueError", "Input that does not parse.")
	notFound   = pyext.NewException[*NotFound]("NotFound", "KeyError", "A key that is not there.")
)

func parse(s string) (int, error) {
	if s == "missing" {
		return 0, fmt.Errorf("parse: %w", &NotFound{Key: s}) // wrapped: errors.As finds it
	}
	n := 0
	for _, r := range s {
		if r < '0' || r > '9' {
			return 0, &ParseError{Input: s}
		}
		n = n*10 + int(r-'0')
	}
	if s == "" {
		return 0, errors.New("empty input") // no custom type: ValueError
	}
	return n, nil
}

var _ = strings.TrimSpace

func sink6sum() int {
	a, b, c, d, e, f := sink6()
	return a + b + c + d + e + f
}

//export PyInit_classmod
func PyInit_classmod() unsafe.Pointer { return module.Init() }

func main() {}
