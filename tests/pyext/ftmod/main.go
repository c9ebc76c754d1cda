// Command ftmod is a test extension for free-threading declarations
// (docs/free-threading.md): ftmod is built with Module.FreeThreaded,
// ftmod_gil, exported from the same library, without it.
// tests/runtime/test_free_threading.py builds it and runs check_ftmod.py against it
// in a process of its own.
package main

import "C" // cgo: the PyInit_ftmod* functions are exported to CPython

import (
	"unsafe"

	"github.com/godlpack/godlpack/pyext"
)

// dot is the dot product of two equally long arrays (else -1).
func dot(x, y []float64) float64 {
	if len(x) != len(y) {
		return -1
	}
	s := 0.0
	for i := range x {
		s += x[i] * y[i]
	}
	return s
}

// Both arguments are converted (a state from pyext's pool each), and the
// call runs without the GIL: calls from many threads push and pop the pool at once.
var module = pyext.NewModule("ftmod", "Free-threading under test: declares Py_MOD_GIL_NOT_USED.").
	FreeThreaded().
	Def("dot", pyext.Func2(dot), "dot(x, y): the dot product of two float64 arrays, converted.", pyext.ReadOnlyArgs,
		pyext.Convert("x", "y"), pyext.ReleaseGIL, pyext.Args("x", "y"))

var moduleGIL = pyext.NewModule("ftmod_gil", "The default: declares Py_MOD_GIL_USED.").
	Def("dot", pyext.Func2(dot), "dot(x, y).", pyext.ReadOnlyArgs, pyext.Convert("x", "y"), pyext.Args("x", "y"))

//export PyInit_ftmod
func PyInit_ftmod() unsafe.Pointer { return module.Init() }

//export PyInit_ftmod_gil
func PyInit_ftmod_gil() unsafe.Pointer { return moduleGIL.Init() }

func main() {}
