// Command classmod is a test extension for the typed wrappers of every
// arity and the class features of pyext (weak references, repr/str, static
// and class methods, comparison and hashing, the sequence protocol,
// iteration, context managers, calls, custom exceptions):
// tests/test_classes.py builds it and runs tests/classmod/check_classmod.py
// against it in a process of its own.
package main

import "C" // cgo: PyInit_classmod is exported to CPython

import (
	"fmt"
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
	Def("live_objects", pyext.Func0(pyext.LiveObjects), "live_objects()\n--\n\nObjects of Go classes alive.")

func sink6sum() int {
	a, b, c, d, e, f := sink6()
	return a + b + c + d + e + f
}

//export PyInit_classmod
func PyInit_classmod() unsafe.Pointer { return module.Init() }

func main() {}
