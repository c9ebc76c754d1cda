// Command vecmath is a Python extension module written in Go: its functions
// take NumPy, PyTorch or JAX arrays zero-copy and return Go-allocated arrays
// that Python sees without a copy. Build it with `pip install .`.
package main

import "C" // cgo: PyInit_vecmath below is exported to CPython

import (
	"errors"
	"fmt"
	"math"
	"unsafe"

	"github.com/godlpack/godlpack"
	"github.com/godlpack/godlpack/consumer"
	"github.com/godlpack/godlpack/pyext"
)

// pyext.Proc2, FuncE2, Func1 wrap each function with conversions chosen
// here, so calls use no reflection; a plain function works too (clip).
var module = pyext.NewModule("vecmath", "Vector math in Go, on any DLPack array.").
	Def("scale", pyext.Proc2(scale), "scale(x, a)\n--\n\nMultiply the float32 array x by a, in place.", pyext.ReleaseGIL).
	Def("add", pyext.FuncE2(add), "add(x, y)\n--\n\nx + y as a new float64 array allocated by Go.", pyext.ReadOnlyArgs).
	Def("norm", pyext.Func1(norm), "norm(x)\n--\n\nThe Euclidean norm of a float64 array.", pyext.ReadOnlyArgs, pyext.ReleaseGIL).
	// Args names the parameters: keywords and defaults, clip(x, hi=2.0).
	Def("clip", clip, "clip(x, lo=0.0, hi=1.0)\n--\n\nClamp x to [lo, hi] in place; returns how many changed.",
		pyext.Args("x", "lo=0.0", "hi=1.0")).
	Def("isum", pyext.Func1(isum), "isum(x)\n--\n\nThe sum of an int64 array (for tests of integer dtypes).", pyext.ReadOnlyArgs).
	Def("describe", pyext.Func1(describe), "describe(t)\n--\n\nAny array's dtype and shape, e.g. 'float32 [2 3]'.", pyext.ReadOnlyArgs).
	Def("where", pyext.Func1(where), "where(t)\n--\n\nAny array's device and data address, e.g. 'cuda:0 0x7f0a2c000000'.", pyext.ReadOnlyArgs).
	Def("mean", pyext.FuncE1(mean), "mean(x)\n--\n\nThe mean of a compact float32 or float64 array.", pyext.ReadOnlyArgs).
	Def("echo", echo, "echo(x)\n--\n\nReturns x itself: refused, the result would alias an argument (for tests).", pyext.ReadOnlyArgs).
	Def("fail", pyext.Func1(fail), "fail(how)\n--\n\nRaises: how is 'error', 'buffer' or 'panic' (for tests).").
	// saxpy writes y only: x may be read-only (pyext.Writes, by index from 0).
	Def("saxpy", saxpy, "saxpy(a, x, y)\n--\n\ny += a*x in place (float32); x is only read.", pyext.Writes(2)).
	Def("widths", widths, "widths(i, i8, i16, i32, i64, u, u8, u16, u32, u64, f32, b)\n--\n\nIts arguments, "+
		"each range-checked against its Go type, as one string (for tests).", pyext.ReadOnlyArgs).
	Def("live_objects", pyext.LiveObjects, "live_objects()\n--\n\nHow many Index and Counter objects are alive (for tests).").
	// Go types as Python classes (index.go).
	Class(indexClass).
	Class(counterClass)

func scale(x []float32, a float32) {
	for i := range x {
		x[i] *= a
	}
}

func add(x, y []float64) ([]float64, error) {
	if len(x) != len(y) {
		return nil, &pyext.ValueError{Msg: "add: x and y differ in length"}
	}
	out := make([]float64, len(x))
	for i := range x {
		out[i] = x[i] + y[i]
	}
	return out, nil
}

func norm(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v * v
	}
	return math.Sqrt(s)
}

func clip(x []float64, lo, hi float64) (int, error) {
	if lo > hi {
		return 0, &pyext.ValueError{Msg: "clip: lo > hi"}
	}
	n := 0
	for i, v := range x {
		if c := min(max(v, lo), hi); c != v {
			x[i], n = c, n+1
		}
	}
	return n, nil
}

func isum(x []int64) int64 {
	var s int64
	for _, v := range x {
		s += v
	}
	return s
}

// describe takes a godlpack.Tensor: any array, on any device, whatever its
// dtype or layout.
func describe(t godlpack.Tensor) string { return fmt.Sprint(t.DType, " ", t.Shape) }

// where tells where a Tensor's memory is: a device array is seen, not read.
func where(t godlpack.Tensor) string { return fmt.Sprintf("%v %#x", t.Device, uintptr(t.Data)) }

// mean takes a *consumer.Tensor (borrowed for the call) and picks its typed
// view from the dtype at run time.
func mean(x *consumer.Tensor) (float64, error) {
	switch x.DType {
	case godlpack.Float32:
		return meanOf(consumer.View[float32](x))
	case godlpack.Float64:
		return meanOf(consumer.View[float64](x))
	}
	return 0, &pyext.TypeError{Msg: fmt.Sprintf("mean: want float32 or float64, got %v", x.DType)}
}

func meanOf[T float32 | float64](xs []T, err error) (float64, error) {
	if err != nil || len(xs) == 0 {
		return math.NaN(), err
	}
	var sum float64
	for _, v := range xs {
		sum += float64(v)
	}
	return sum / float64(len(xs)), nil
}

func saxpy(a float32, x, y []float32) error {
	if len(x) != len(y) {
		return &pyext.ValueError{Msg: "saxpy: x and y differ in length"}
	}
	for i := range y {
		y[i] += a * x[i]
	}
	return nil
}

func widths(i int, i8 int8, i16 int16, i32 int32, i64 int64, u uint, u8 uint8, u16 uint16, u32 uint32, u64 uint64,
	f32 float32, b bool) string {
	return fmt.Sprint(i, i8, i16, i32, i64, u, u8, u16, u32, u64, f32, b)
}

func echo(x []float64) []float64 { return x }

func fail(how string) error {
	switch how {
	case "buffer":
		return &pyext.BufferError{Msg: "refused, as asked"}
	case "panic":
		var m map[string]int
		m["boom"] = 1 // a real runtime panic: assignment to a nil map
	}
	return errors.New("failed, as asked")
}

//export PyInit_vecmath
func PyInit_vecmath() unsafe.Pointer { return module.Init() }

func main() {}
