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
	// A 2-d parameter: rows of any length, taken zero-copy with its strides
	// (a transposed or sliced array too).
	Def("rownorms", pyext.Func1(rownorms), "rownorms(x)\n--\n\nThe Euclidean norm of each row of a 2-d float64 array.",
		pyext.ReadOnlyArgs, pyext.ReleaseGIL, pyext.Require(0, pyext.Ndim(2))).
	// A shape requirement, and a conversion: (n, 3) points of any dtype that
	// converts to float64, any layout or alignment (Dask blocks), or a list.
	Def("centroid", pyext.Func1(centroid), "centroid(points)\n--\n\nThe mean of (n, 3) points, as a 3-element float64 array.",
		pyext.ReadOnlyArgs, pyext.Require(0, pyext.Shape(-1, 3), pyext.CContig), pyext.Convert(0)).
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

// rownorms reads x through its shape and strides: no copy, whatever the layout.
func rownorms(x pyext.NDArray[float64]) []float64 {
	out := make([]float64, x.Dim(0))
	for i := range out {
		var s float64
		for j := 0; j < x.Dim(1); j++ {
			s += x.At2(i, j) * x.At2(i, j)
		}
		out[i] = math.Sqrt(s)
	}
	return out
}

// centroid takes C-contiguous (n, 3) points: each row is a slice.
func centroid(p pyext.NDArray[float64]) []float64 {
	c := make([]float64, 3)
	n := p.Dim(0)
	for i := 0; i < n; i++ {
		for k, v := range p.Row(i) {
			c[k] += v / float64(n)
		}
	}
	return c
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
