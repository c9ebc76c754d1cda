// Command vecmath is a Python extension module written in Go: its functions
// take NumPy, PyTorch or JAX arrays zero-copy and return Go-allocated arrays
// that Python sees without a copy. Build it with `pip install .`.
package main

import "C" // cgo: PyInit_vecmath below is exported to CPython

import (
	"errors"
	"math"
	"unsafe"

	"github.com/godlpack/godlpack/pyext"
)

var module = pyext.NewModule("vecmath", "Vector math in Go, on any DLPack array.").
	Def("scale", scale, "scale(x, a)\n--\n\nMultiply the float32 array x by a, in place.", pyext.ReleaseGIL).
	Def("add", add, "add(x, y)\n--\n\nx + y as a new float64 array allocated by Go.", pyext.ReadOnlyArgs).
	Def("norm", norm, "norm(x)\n--\n\nThe Euclidean norm of a float64 array.", pyext.ReadOnlyArgs, pyext.ReleaseGIL).
	Def("fail", fail, "fail(how)\n--\n\nRaises: how is 'error', 'buffer' or 'panic' (for tests).")

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
