// Command arrmod is a test extension for array requirements (pyext.Require,
// Convert, ConvertWriteBack, NDArray): tests/pyext/test_arrays.py builds it and
// runs tests/pyext/arrmod/check_arrmod.py against it in a process of its own.
package main

import "C" // cgo: PyInit_arrmod is exported to CPython

import (
	"fmt"
	"strings"
	"time"
	"unsafe"

	"github.com/godlpack/godlpack"
	"github.com/godlpack/godlpack/consumer"
	"github.com/godlpack/godlpack/pyext"
)

var module = pyext.NewModule("arrmod", "Array requirements under test.").
	Def("rowsums", pyext.Func1(rowsums), "rowsums(x): per-row sums of a (n, 3) float64 array.", pyext.ReadOnlyArgs,
		pyext.Require("x", pyext.Shape(-1, 3)), pyext.Args("x")).
	Def("info", pyext.Func1(info), "info(x): shape, strides and elements (C order) of any float64 array.", pyext.ReadOnlyArgs).
	Def("info_refl", info, "info(x), through reflection.", pyext.ReadOnlyArgs).
	Def("info_conv", pyext.Func1(info), "info(x) with conversion into a C-contiguous temporary.", pyext.ReadOnlyArgs,
		pyext.Require("x", pyext.CContig), pyext.Convert("x"), pyext.Args("x")).
	Def("rows_c", pyext.Func1(rowsC), "rows_c(x): the rows of a C-contiguous 2-d float32 array, via Row.", pyext.ReadOnlyArgs,
		pyext.Require("x", pyext.Ndim(2), pyext.CContig), pyext.Args("x")).
	Def("flat_f", pyext.Func1(flat), "flat_f(x): a Fortran-contiguous float64 array's memory order.", pyext.ReadOnlyArgs,
		pyext.Require("x", pyext.FContig), pyext.Args("x")).
	Def("flat_f_conv", pyext.Func1(flat), "flat_f(x), converted.", pyext.ReadOnlyArgs,
		pyext.Require("x", pyext.FContig), pyext.Convert("x"), pyext.Args("x")).
	Def("sum", pyext.Func1(sum), "sum(x): no requirement (the typed fast path).", pyext.ReadOnlyArgs).
	Def("sum_1d", pyext.Func1(sum), "sum(x) of 1-d arrays only, no conversion.", pyext.ReadOnlyArgs,
		pyext.Require("x", pyext.Ndim(1)), pyext.Args("x")).
	Def("sum_conv", pyext.Func1(sum), "sum(x) with conversion.", pyext.ReadOnlyArgs, pyext.Convert("x"), pyext.Args("x")).
	Def("sum_conv_nogil", pyext.Func1(sum), "sum(x) with conversion, without the GIL.", pyext.ReadOnlyArgs,
		pyext.Convert("x"), pyext.ReleaseGIL, pyext.Args("x")).
	Def("isum_conv", pyext.Func1(isum), "isum(x) of int64 with conversion.", pyext.ReadOnlyArgs, pyext.Convert("x"), pyext.Args("x")).
	Def("nd_sum_conv", pyext.Func1(ndSum), "sum of a C-contiguous NDArray with conversion.", pyext.ReadOnlyArgs,
		pyext.Args("x"), pyext.Require("x", pyext.CContig), pyext.Convert("x")).
	Def("scale", pyext.Proc2(scale), "scale(x, a): x *= a, no conversion.", pyext.Writes("x"), pyext.Args("x", "a")).
	Def("scale_wb", pyext.Proc2(scale), "scale(x, a) with conversion and write-back.", pyext.Writes("x"),
		pyext.ConvertWriteBack("x"), pyext.Args("x", "a")).
	Def("scale_wb_nogil", pyext.Proc2(scale), "scale_wb without the GIL.", pyext.Args("x", "a"), pyext.Writes("x"),
		pyext.ConvertWriteBack("x"), pyext.ReleaseGIL).
	Def("scale_wb_panic", pyext.Proc2(scalePanic), "scale(x, a), then panics.", pyext.Writes("x"),
		pyext.ConvertWriteBack("x"), pyext.Args("x", "a")).
	Def("nd_scale_wb", pyext.Proc2(ndScale), "x *= a on a C-contiguous NDArray, with write-back.", pyext.Args("x", "a"), pyext.Writes("x"),
		pyext.Require("x", pyext.CContig), pyext.ConvertWriteBack("x")).
	Def("nd_scale", pyext.Proc2(ndScale), "x *= a on any strided NDArray, in place.", pyext.Args("x", "a"), pyext.Writes("x")).
	Def("tensor_cpu", pyext.Func1(describe), "describe(t): a 2-d float32 tensor on the CPU.", pyext.ReadOnlyArgs,
		pyext.Require("t", pyext.OnCPU, pyext.DTypeIs(godlpack.Float32), pyext.Ndim(2)), pyext.Args("t")).
	Def("tensor_cuda", pyext.Func1(describe), "describe(t): a CUDA tensor.", pyext.ReadOnlyArgs,
		pyext.Require("t", pyext.OnCUDA), pyext.Args("t")).
	Def("tensor_c", pyext.Func1(describe), "describe(t): a C-contiguous tensor.", pyext.ReadOnlyArgs,
		pyext.Require("t", pyext.CContig), pyext.Args("t")).
	Def("borrow_shape", pyext.FuncE1(borrowShape), "the shape of a (*, 2) tensor, borrowed.", pyext.ReadOnlyArgs,
		pyext.Args("t"), pyext.Require("t", pyext.Shape(-1, 2))).
	Def("matvec", pyext.FuncE2(matvec), "matvec(m, v): m @ v for m (r, c), v (c,), converted.", pyext.ReadOnlyArgs,
		pyext.Require("m", pyext.Ndim(2)), pyext.Require("v", pyext.Ndim(1)), pyext.Convert("m", "v"), pyext.Args("m", "v")).
	// Buffer-protocol arguments (bytes, bytearray, memoryview, array.array, mmap).
	Def("bytesum", pyext.Func1(bytesum), "bytesum(b): the sum of a []byte's values.", pyext.ReadOnlyArgs).
	Def("bytesum_nogil", pyext.Func1(bytesum), "bytesum(b) without the GIL.", pyext.ReadOnlyArgs, pyext.ReleaseGIL).
	Def("fill", pyext.Proc2(fill), "fill(b, v): every byte of b set to v.", pyext.Writes("b"), pyext.Args("b", "v")).
	Def("hold", pyext.Func2(hold), "hold(b, ms): sleeps ms milliseconds without the GIL, then sums b.",
		pyext.ReadOnlyArgs, pyext.ReleaseGIL).
	Def("sum_nogil", pyext.Func1(sum), "sum(x) without the GIL.", pyext.ReadOnlyArgs, pyext.ReleaseGIL).
	Def("isum", pyext.Func1(isum), "isum(x) of int64, no conversion.", pyext.ReadOnlyArgs).
	Def("bytes_panic", pyext.Proc1(func([]byte) { panic("bytes_panic") }), "bytes_panic(b): panics.", pyext.ReadOnlyArgs).
	Def("bytesum_refl", bytesum, "bytesum(b), through reflection.", pyext.ReadOnlyArgs).
	Def("sum_after", pyext.Func2(sumAfter), "sum_after(b, f): f(), then bytesum(b) + f's result.", pyext.ReadOnlyArgs).
	Class(hugeClass)

// Huge is a number whose operators take a Go slice (summed).
type Huge struct{ v float64 }

var hugeClass = pyext.NewClass[Huge]("Huge", "Huge(v)\n--\n\nA number v.").
	Init(pyext.Func1(func(v float64) *Huge { return &Huge{v} }), pyext.Args("v")).
	Operator("+", pyext.Func2(func(h *Huge, x []float64) float64 { return h.v + sum(x) })).
	ReflectedOperator("-", pyext.Func2(func(h *Huge, x []float64) float64 { return sum(x) - h.v })).
	InPlaceOperator("*", pyext.Proc2(func(h *Huge, x []float64) { h.v *= sum(x) })).
	Operator("@", pyext.Func2(func(h *Huge, x pyext.NDArray[float64]) float64 { return h.v * float64(x.Size()) })).
	Method("dot", pyext.Func2(func(h *Huge, x []float64) float64 { return h.v * sum(x) }),
		"dot(x)\n--\n\nv times the sum of x.", pyext.ReadOnlyArgs).
	Property("v", pyext.Func1(func(h *Huge) float64 { return h.v }), nil, "v")

func bytesum(b []byte) int {
	s := 0
	for _, c := range b {
		s += int(c)
	}
	return s
}

func fill(b []byte, v int) {
	for i := range b {
		b[i] = byte(v)
	}
}

func sumAfter(b []byte, f func() int) int {
	n := f()
	return bytesum(b) + n
}

func hold(b []byte, ms int) int {
	time.Sleep(time.Duration(ms) * time.Millisecond)
	return bytesum(b)
}

func rowsums(x pyext.NDArray[float64]) []float64 {
	out := make([]float64, x.Dim(0))
	for i := range out {
		for j := 0; j < x.Dim(1); j++ {
			out[i] += x.At2(i, j)
		}
	}
	return out
}

// info lists the shape, strides and elements in C order, read through At.
func info(x pyext.NDArray[float64]) string {
	var vals []string
	idx := make([]int, x.Ndim())
	for n := 0; n < x.Size(); n++ {
		vals = append(vals, fmt.Sprint(x.At(idx...)))
		for k := len(idx) - 1; k >= 0; k-- {
			if idx[k]++; idx[k] < x.Dim(k) {
				break
			}
			idx[k] = 0
		}
	}
	_, flat := x.Flat()
	return fmt.Sprintf("%v %v %s c=%v f=%v flat=%v", x.Shape(), x.Strides(), strings.Join(vals, ","), x.IsCContig(), x.IsFContig(), flat)
}

func rowsC(x pyext.NDArray[float32]) string {
	var rows []string
	for i := 0; i < x.Dim(0); i++ {
		rows = append(rows, fmt.Sprint(x.Row(i)))
	}
	return strings.Join(rows, "")
}

func flat(x []float64) string { return fmt.Sprint(x) }

func sum(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s
}

func isum(x []int64) int64 {
	var s int64
	for _, v := range x {
		s += v
	}
	return s
}

func ndSum(x pyext.NDArray[float64]) float64 {
	f, ok := x.Flat()
	if !ok {
		panic("not C-contiguous")
	}
	return sum(f)
}

func scale(x []float64, a float64) {
	for i := range x {
		x[i] *= a
	}
}

func scalePanic(x []float64, a float64) {
	scale(x, a)
	panic("after scaling")
}

func ndScale(x pyext.NDArray[float64], a float64) {
	if x.Ndim() != 2 {
		panic("want 2-d")
	}
	for i := 0; i < x.Dim(0); i++ {
		for j := 0; j < x.Dim(1); j++ {
			x.Set2(x.At2(i, j)*a, i, j)
		}
	}
}

func describe(t godlpack.Tensor) string { return fmt.Sprint(t.DType, " ", t.Shape, " ", t.Device) }

func borrowShape(t *consumer.Tensor) (string, error) { return fmt.Sprint(t.Shape), nil }

func matvec(m pyext.NDArray[float64], v []float64) ([]float64, error) {
	if m.Dim(1) != len(v) {
		return nil, &pyext.ValueError{Msg: fmt.Sprintf("matvec: m is %v, v has %d elements", m.Shape(), len(v))}
	}
	out := make([]float64, m.Dim(0))
	for i := range out {
		for j, vj := range v {
			out[i] += m.At2(i, j) * vj
		}
	}
	return out, nil
}

//export PyInit_arrmod
func PyInit_arrmod() unsafe.Pointer { return module.Init() }

// bad is a definition whose requirements cannot hold: its import fails
// (check_arrmod.py loads it from this same library as arrmod_bad).
var bad = pyext.NewModule("arrmod_bad", "Impossible requirements.").
	Def("scale", pyext.Proc2(scale), "scale(x, a)", pyext.Writes("x"), pyext.Require("a", pyext.Ndim(1)), pyext.Args("x", "a"))

//export PyInit_arrmod_bad
func PyInit_arrmod_bad() unsafe.Pointer { return bad.Init() }

func main() {}
