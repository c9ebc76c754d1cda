// Command gonummod is a test extension for gonum's matrix and vector types
// as parameters and results (pyext/gonum): tests/pyext/test_gonum.py builds it and
// runs tests/pyext/gonummod/check_gonummod.py against it in a process of its own.
package main

import "C" // cgo: PyInit_gonummod is exported to CPython

import (
	"fmt"
	"unsafe"

	"gonum.org/v1/gonum/mat"

	"github.com/godlpack/godlpack/producer"
	"github.com/godlpack/godlpack/pyext"
	_ "github.com/godlpack/godlpack/pyext/gonum" // *mat.Dense, *mat.VecDense, mat.Matrix, mat.Vector
)

var module = pyext.NewModule("gonummod", "gonum's mat types under test.").
	Def("trace", pyext.Func1(trace), "trace(m)\n--\n\nThe trace of a square float64 matrix (typed path).", pyext.ReadOnlyArgs).
	Def("trace_nogil", pyext.Func1(trace), "trace_nogil(m)\n--\n\ntrace(m) without the GIL.", pyext.ReadOnlyArgs,
		pyext.ReleaseGIL).
	Def("live_owners", pyext.Func0(producer.LiveOwners), "live_owners()\n--\n\nGo memory exported and not yet released.").
	Def("trace_refl", trace, "trace_refl(m)\n--\n\ntrace(m) through reflection.", pyext.ReadOnlyArgs).
	Def("addr", pyext.Func1(addr), "addr(m)\n--\n\nThe address of m[0, 0] as Go sees it.", pyext.ReadOnlyArgs).
	Def("addr_conv", pyext.Func1(addr), "addr_conv(m)\n--\n\naddr(m), converting m.", pyext.ReadOnlyArgs, pyext.Convert("m")).
	Def("vaddr", pyext.Func1(vaddr), "vaddr(v)\n--\n\nThe address of v[0] as Go sees it.", pyext.ReadOnlyArgs).
	Def("scale", pyext.Proc2(scale), "scale(m, a)\n--\n\nm *= a, in place.", pyext.Writes("m")).
	Def("scale_wb", pyext.Proc2(scale), "scale_wb(m, a)\n--\n\nm *= a through a written-back copy.", pyext.Writes("m"),
		pyext.ConvertWriteBack("m")).
	Def("matvec", pyext.FuncE2(matvec), "matvec(m, x)\n--\n\nm @ x (typed path).", pyext.ReadOnlyArgs).
	Def("matvec_refl", matvec, "matvec_refl(m, x)\n--\n\nm @ x through reflection.", pyext.ReadOnlyArgs).
	Def("matvec_conv", pyext.FuncE2(matvec), "matvec_conv(m, x)\n--\n\nm @ x, converting both.", pyext.ReadOnlyArgs,
		pyext.Convert("m", "x")).
	Def("mul", pyext.FuncE2(mul), "mul(a, b)\n--\n\na @ b as a new matrix.", pyext.ReadOnlyArgs).
	Def("eye", eye, "eye(n)\n--\n\nThe n x n identity, and the address of its data in Go.").
	Def("window", pyext.Func1(window), "window(n)\n--\n\nThe inner (n-2) x (n-2) block of an n x n matrix of i*n+j: a Dense whose stride is n.").
	Def("column", pyext.Func1(column), "column(n)\n--\n\nColumn 1 of an n x 3 matrix of i*3+j: a VecDense of increment 3.").
	Def("same", pyext.Func1(same), "same(m)\n--\n\nm itself: refused, it aliases the argument.", pyext.ReadOnlyArgs).
	Def("row_view", pyext.Func1(rowView), "row_view(m)\n--\n\nRow 0 of m as a view: refused, it aliases the argument.", pyext.ReadOnlyArgs).
	Def("nil_dense", pyext.Func0(func() *mat.Dense { return nil }), "nil_dense()\n--\n\nA nil *mat.Dense.").
	Def("empty_dense", pyext.Func0(func() *mat.Dense { return &mat.Dense{} }), "empty_dense()\n--\n\nAn empty *mat.Dense.").
	Def("norm", pyext.Func1(norm), "norm(v)\n--\n\nThe 2-norm of a mat.Vector.", pyext.ReadOnlyArgs).
	Def("rev", pyext.Func1(rev), "rev(v)\n--\n\nv reversed, as a mat.Vector that is no VecDense (copied out).", pyext.ReadOnlyArgs).
	Def("transpose", pyext.Func1(transpose), "transpose(m)\n--\n\nm.T() as a mat.Matrix (copied out).", pyext.ReadOnlyArgs).
	Def("total", pyext.Func1(total), "total(m)\n--\n\nThe sum of a mat.Matrix.", pyext.ReadOnlyArgs).
	Def("rowsums3", pyext.Func1(rowsums), "rowsums3(m)\n--\n\nRow sums of an (n, 3) matrix.", pyext.ReadOnlyArgs,
		pyext.Require("m", pyext.Shape(-1, 3))).
	Class(pyext.NewClass[Acc]("Acc", "Acc()\n--\n\nAccumulates the traces of matrices.").
		Init(func() *Acc { return &Acc{} }).
		Method("add", pyext.Func2((*Acc).Add), "add(m)\n--\n\nAdd m's trace; returns the running total.", pyext.ReadOnlyArgs,
			pyext.Convert("m")))

func trace(m *mat.Dense) float64 { return mat.Trace(m) }

func addr(m *mat.Dense) uintptr { return uintptr(unsafe.Pointer(&m.RawMatrix().Data[0])) }

func vaddr(v *mat.VecDense) uintptr { return uintptr(unsafe.Pointer(&v.RawVector().Data[0])) }

func scale(m *mat.Dense, a float64) { m.Scale(a, m) }

func matvec(m *mat.Dense, x *mat.VecDense) (*mat.VecDense, error) {
	r, c := m.Dims()
	if c != x.Len() {
		return nil, &pyext.ValueError{Msg: fmt.Sprintf("matvec: m is %dx%d, x has %d elements", r, c, x.Len())}
	}
	y := mat.NewVecDense(r, nil)
	y.MulVec(m, x)
	return y, nil
}

func mul(a, b *mat.Dense) (*mat.Dense, error) {
	_, ac := a.Dims()
	br, _ := b.Dims()
	if ac != br {
		return nil, &pyext.ValueError{Msg: fmt.Sprintf("mul: %d columns times %d rows", ac, br)}
	}
	var c mat.Dense
	c.Mul(a, b)
	return &c, nil
}

func eye(n int) (*mat.Dense, uintptr) {
	m := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		m.Set(i, i, 1)
	}
	return m, uintptr(unsafe.Pointer(&m.RawMatrix().Data[0]))
}

func grid(r, c int) *mat.Dense {
	data := make([]float64, r*c)
	for i := range data {
		data[i] = float64(i)
	}
	return mat.NewDense(r, c, data)
}

func window(n int) *mat.Dense { return grid(n, n).Slice(1, n-1, 1, n-1).(*mat.Dense) }

func column(n int) *mat.VecDense { return grid(n, 3).ColView(1).(*mat.VecDense) }

func same(m *mat.Dense) *mat.Dense { return m }

func rowView(m *mat.Dense) *mat.VecDense { return m.RowView(0).(*mat.VecDense) }

func norm(v mat.Vector) float64 { return mat.Norm(v, 2) }

// reversed is a mat.Vector that is no *mat.VecDense.
type reversed struct{ mat.Vector }

func (r reversed) AtVec(i int) float64 { return r.Vector.AtVec(r.Len() - 1 - i) }

func rev(v mat.Vector) mat.Vector { return reversed{mat.VecDenseCopyOf(v)} }

func transpose(m *mat.Dense) mat.Matrix { return m.T() }

func total(m mat.Matrix) float64 { return mat.Sum(m) }

func rowsums(m *mat.Dense) *mat.VecDense {
	r, _ := m.Dims()
	out := mat.NewVecDense(r, nil)
	for i := 0; i < r; i++ {
		out.SetVec(i, mat.Sum(m.RowView(i)))
	}
	return out
}

// Acc takes matrices in a method: its Convert counts from the parameter
// after the receiver.
type Acc struct{ sum float64 }

func (a *Acc) Add(m *mat.Dense) float64 { a.sum += mat.Trace(m); return a.sum }

//export PyInit_gonummod
func PyInit_gonummod() unsafe.Pointer { return module.Init() }

func main() {}
