// Command gosum is the Go side of bench/ext_bench.py: sum of a float64 array
// defined with pyext (the path extension authors use), plus variants that
// split its per-call cost (no argument, a float, an array without a result,
// a godlpack.Tensor) and hand-written C entry points (raw.c) that call Go
// directly, as floors for the pyext dispatch.
package main

/*
#cgo CFLAGS: -I${SRCDIR}/../../../include -O2
#include <Python.h>
int gosum_add_raw(PyObject* m);
*/
import "C"

import (
	"bytes"
	"reflect"
	"unsafe"

	"github.com/godlpack/godlpack"
	"github.com/godlpack/godlpack/consumer"
	"github.com/godlpack/godlpack/pyext"
)

var module = pyext.NewModule("gosum", "Per-call cost probes for bench/ext_bench.py.").
	Def("sum", sum, "sum(x): the sum of a float64 array.", pyext.ReadOnlyArgs).
	Def("sum_nogil", sum, "sum(x) without the GIL.", pyext.ReadOnlyArgs, pyext.ReleaseGIL).
	Def("noop", noop, "noop(): nothing.").
	Def("fid", fid, "fid(a): a.").
	Def("touch", touch, "touch(x): takes a float64 array, returns None.", pyext.ReadOnlyArgs).
	Def("ndim", ndim, "ndim(t): the number of dimensions of any array (a godlpack.Tensor).", pyext.ReadOnlyArgs).
	// The same functions wrapped by pyext's typed constructors (no reflection per call).
	Def("sum_typed", pyext.Func1(sum), "sum(x), typed.", pyext.ReadOnlyArgs).
	Def("noop_typed", pyext.Proc0(noop), "noop(), typed.").
	Def("fid_typed", pyext.Func1(fid), "fid(a), typed.").
	Def("touch_typed", pyext.Proc1(touch), "touch(x), typed.", pyext.ReadOnlyArgs).
	Def("ndim_typed", pyext.Func1(ndim), "ndim(t), typed.", pyext.ReadOnlyArgs).
	// Array requirements: a (n, 3) N-d view, and a slice with conversion allowed.
	Def("rows3", pyext.Func1(rows3), "rows3(x): the sum of a (n, 3) float64 array.", pyext.ReadOnlyArgs,
		pyext.Require("x", pyext.Shape(-1, 3), pyext.CContig), pyext.Args("x")).
	Def("sum_conv", pyext.Func1(sum), "sum(x), converting what does not conform.", pyext.ReadOnlyArgs, pyext.Convert("x"), pyext.Args("x")).
	// Keyword arguments (pyext.Args): kw(a, b=1.0) called as kw(1.0, b=2.0).
	Def("kw", kw, "kw(a, b=1.0): a + b.", pyext.Args("a", "b=1.0")).
	Def("kw_typed", pyext.Func2(kw), "kw(a, b=1.0), typed.", pyext.Args("a", "b=1.0")).
	// Three and six float parameters: add3(a, b, c), add6(a, ..., f), typed (generated Func3/Func6) and not.
	Def("add3", add3, "add3(a, b, c): a + b + c.").
	Def("add3_typed", pyext.Func3(add3), "add3, typed.").
	Def("add6", add6, "add6(a, b, c, d, e, f): their sum.").
	Def("add6_typed", pyext.Func6(add6), "add6, typed.").
	// Bytes both ways: bytes of 1 KiB into a []byte (zero-copy, read in place), a []byte result of 1 KiB as bytes (one copy).
	Def("bytes_in", bytesIn, "bytes_in(b): len(b).", pyext.ReadOnlyArgs).
	Def("bytes_in_typed", pyext.Func1(bytesIn), "bytes_in(b), typed.", pyext.ReadOnlyArgs).
	Def("bytes_out", bytesOut, "bytes_out(): 1 KiB of bytes.").
	Def("bytes_out_typed", pyext.Func0(bytesOut), "bytes_out(), typed.").
	// A class: Acc().sum(x) and Acc().fid(a), methods called on an object.
	Class(pyext.NewClass[acc]("Acc", "Acc(): methods for the per-call cost of a method call.").
		Init(func() *acc { return &acc{} }).
		Method("sum", pyext.Func2((*acc).sum), "sum(x): the sum of a float64 array.", pyext.ReadOnlyArgs).
		Method("fid", pyext.Func2((*acc).fid), "fid(a): a.").
		Method("sum_r", (*acc).sum, "sum(x) through reflection.", pyext.ReadOnlyArgs))

type acc struct{ calls int }

func (a *acc) sum(x []float64) float64 { a.calls++; return sum(x) }
func (a *acc) fid(v float64) float64   { a.calls++; return v }

func kw(a, b float64) float64 { return a + b }

func rows3(x pyext.NDArray[float64]) float64 {
	f, _ := x.Flat()
	return sum(f)
}

func sum(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s
}

func noop()                      {}
func fid(a float64) float64      { return a }
func touch(x []float64)          {}
func ndim(t godlpack.Tensor) int { return len(t.Shape) }

//export gosumNoop
func gosumNoop() {}

//export gosumSum
func gosumSum(p *C.double, n C.longlong) C.double {
	if n == 0 {
		return 0
	}
	return C.double(sum(unsafe.Slice((*float64)(unsafe.Pointer(p)), int(n))))
}

// gosumValidateSum is gosumSum after the Go-side validation pyext repeats
// (consumer.ValidateVersioned: a Go->C check, shape and strides copied).
//
//export gosumValidateSum
func gosumValidateSum(m unsafe.Pointer) C.double {
	t, err := consumer.ValidateVersioned((*godlpack.DLManagedTensorVersioned)(m))
	if err != nil || t.Data == nil {
		return 0
	}
	n, _ := t.NumElements()
	return C.double(sum(unsafe.Slice((*float64)(unsafe.Add(t.Data, t.ByteOffset)), int(n))))
}

var sumValue = reflect.ValueOf(sum)

// gosumReflectSum adds pyext's reflection to gosumValidateSum: how says
// which half. 0: the slice made by reflect.ArrayOf/NewAt/Convert and the call
// by reflect.Value.Call (as pyext); 1: that slice, called directly; 2: a
// plain slice, called by reflect.Value.Call.
//
//export gosumReflectSum
func gosumReflectSum(m unsafe.Pointer, how C.int) C.double {
	t, err := consumer.ValidateVersioned((*godlpack.DLManagedTensorVersioned)(m))
	if err != nil || t.Data == nil {
		return 0
	}
	n, _ := t.NumElements()
	p := unsafe.Add(t.Data, t.ByteOffset)
	var x reflect.Value
	if how == 2 {
		x = reflect.ValueOf(unsafe.Slice((*float64)(p), int(n)))
	} else {
		st := reflect.TypeFor[[]float64]()
		x = reflect.NewAt(reflect.ArrayOf(int(n), st.Elem()), p).Elem().Slice(0, int(n)).Convert(st)
	}
	if how == 1 {
		return C.double(sum(x.Interface().([]float64)))
	}
	return C.double(sumValue.Call([]reflect.Value{x})[0].Float())
}

// The hand-written C probes join the module when it is created.
func init() {
	module.OnExec(func(m unsafe.Pointer) error {
		if C.gosum_add_raw((*C.PyObject)(m)) < 0 {
			return pyext.ErrPythonSet
		}
		return nil
	})
}

//export PyInit_gosum
func PyInit_gosum() unsafe.Pointer { return module.Init() }

func main() {}

func add3(a, b, c float64) float64 { return a + b + c }

func add6(a, b, c, d, e, f float64) float64 { return a + b + c + d + e + f }

// kib is bytes_out's result, 1 KiB (the size of PyO3's and nanobind's).
var kib = bytes.Repeat([]byte{7}, 1024)

func bytesIn(b []byte) int { return len(b) }
func bytesOut() []byte     { return kib }
