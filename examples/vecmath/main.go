// Vector math in Go, on any DLPack array.
//
// Command vecmath is a Python extension module written in Go: its functions
// take NumPy, PyTorch or JAX arrays zero-copy and return Go-allocated arrays
// that Python sees without a copy. Each //pyext: line declares what Python
// sees of the Go declaration under it; the build writes pyext_gen.go from
// them (pyextgen). Build it with `pip install .`.
//
//pyext:module vecmath
package main

import (
	"errors"
	"fmt"
	"math"

	"github.com/godlpack/godlpack"
	"github.com/godlpack/godlpack/consumer"
	"github.com/godlpack/godlpack/pyext"
)

// Multiply the float32 array x by a, in place.
//
//pyext:function writes(x) nogil
func scale(x []float32, a float32) {
	for i := range x {
		x[i] *= a
	}
}

// x + y as a new float64 array allocated by Go.
//
//pyext:function
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

// The Euclidean norm of a float64 array.
//
//pyext:function nogil
func norm(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v * v
	}
	return math.Sqrt(s)
}

// The sum of an int64 array (for tests of integer dtypes).
//
//pyext:function
func isum(x []int64) int64 {
	var s int64
	for _, v := range x {
		s += v
	}
	return s
}

// Any array's dtype and shape, e.g. 'float32 [2 3]'. A godlpack.Tensor is
// any array, on any device, whatever its dtype or layout.
//
//pyext:function (t)
func describe(t godlpack.Tensor) string { return fmt.Sprint(t.DType, " ", t.Shape) }

// Any array's device and data address, e.g. 'cuda:0 0x7f0a2c000000': a
// device array is seen, not read.
//
//pyext:function (t)
func where(t godlpack.Tensor) string { return fmt.Sprintf("%v %#x", t.Device, uintptr(t.Data)) }

// The mean of a compact float32 or float64 array. A *consumer.Tensor is
// borrowed for the call; its typed view is picked from the dtype at run time.
//
//pyext:function (x)
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

// y += a*x in place (float32); x is only read.
//
//pyext:function writes(y)
func saxpy(a float32, x, y []float32) error {
	if len(x) != len(y) {
		return &pyext.ValueError{Msg: "saxpy: x and y differ in length"}
	}
	for i := range y {
		y[i] += a * x[i]
	}
	return nil
}

// The Euclidean norm of each row of a 2-d float64 array. A 2-d parameter:
// rows of any length, read through the shape and strides, no copy, whatever
// the layout (a transposed or sliced array too).
//
//pyext:function (x) nogil require(x, Ndim(2))
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

// The mean of (n, 3) points, as a 3-element float64 array. A shape
// requirement, and a conversion: points of any dtype that converts to
// float64, any layout or alignment (Dask blocks), or a list; each row of the
// C-contiguous copy is a slice.
//
//pyext:function (points) require(points, Shape(-1, 3), CContig) convert(points)
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

// Raises: how is 'error', 'buffer' or 'panic' (for tests).
//
//pyext:function
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
