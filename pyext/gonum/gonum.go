// Package gonum makes gonum's matrices and vectors (gonum.org/v1/gonum/mat)
// parameter and result types of Go extension functions. Import it for its
// side effect, next to pyext:
//
//	import _ "github.com/godlpack/godlpack/pyext/gonum"
//
//	func matvec(m *mat.Dense, x *mat.VecDense) *mat.VecDense {
//		r, _ := m.Dims()
//		y := mat.NewVecDense(r, nil)
//		y.MulVec(m, x)
//		return y
//	}
//	Def("matvec", pyext.Func2(matvec), doc, pyext.ReadOnlyArgs)
//
// Parameters are zero-copy views of the caller's arrays, valid until the
// function returns (never keep them, nor their RawMatrix().Data):
//
//   - *mat.Dense and mat.Matrix take C-contiguous 2-d float64 arrays
//     (mat.NewDense over the argument's memory; a mat.Matrix is that
//     *mat.Dense);
//   - *mat.VecDense and mat.Vector take C-contiguous 1-d float64 arrays.
//
// Another dtype, number of dimensions or layout is a BufferError, a
// non-array a TypeError, unless the function declares pyext.Convert for the
// parameter (a copy into a float64 C-contiguous temporary). gonum has no
// empty matrix or vector of a given shape, so arrays with a zero-sized
// dimension are refused too (BufferError). Writes to a *mat.Dense parameter
// land in the caller's array (declare pyext.Writes or leave out
// ReadOnlyArgs).
//
// Results are exported zero-copy as the module's Tensor: a *mat.Dense (also
// one returned as a mat.Matrix) with strides (Stride, 1), so a view made by
// Slice, whose stride exceeds its columns, reads right; a *mat.VecDense
// (also as a mat.Vector) with stride Inc, such as a ColView. Other
// mat.Matrix and mat.Vector values (a transpose, a triangle) are copied. The memory becomes Python's:
// do not use the result in Go any more. An empty *mat.Dense is a (0, 0)
// array and an empty *mat.VecDense a (0,) one; a nil result is a ValueError.
//
// The registration is pyext.RegisterArrayType, which any other library's
// adapter can use the same way.
package gonum

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/godlpack/godlpack/pyext"
)

func init() {
	must(pyext.RegisterArrayType(pyext.ArrayType[*mat.Dense, float64]{Ndim: 2, View: DenseView, Memory: DenseMemory}))
	must(pyext.RegisterArrayType(pyext.ArrayType[mat.Matrix, float64]{
		Ndim:   2,
		View:   func(a pyext.NDArray[float64]) (mat.Matrix, error) { return asMatrix(DenseView(a)) },
		Memory: MatrixMemory,
	}))
	must(pyext.RegisterArrayType(pyext.ArrayType[*mat.VecDense, float64]{Ndim: 1, View: VecView, Memory: VecMemory}))
	must(pyext.RegisterArrayType(pyext.ArrayType[mat.Vector, float64]{
		Ndim:   1,
		View:   func(a pyext.NDArray[float64]) (mat.Vector, error) { return asVector(VecView(a)) },
		Memory: VectorMemory,
	}))
}

func must(err error) {
	if err != nil {
		panic(err) // a second registration of gonum's types: two adapters linked
	}
}

// asMatrix keeps a failed view a nil interface (not one holding a nil *Dense).
func asMatrix(d *mat.Dense, err error) (mat.Matrix, error) {
	if err != nil {
		return nil, err
	}
	return d, nil
}

func asVector(v *mat.VecDense, err error) (mat.Vector, error) {
	if err != nil {
		return nil, err
	}
	return v, nil
}

// DenseView is the *mat.Dense over a, a C-contiguous 2-d array (what a
// *mat.Dense parameter receives): no copy, and valid only as long as a is.
func DenseView(a pyext.NDArray[float64]) (*mat.Dense, error) {
	if a.Ndim() != 2 {
		return nil, &pyext.BufferError{Msg: fmt.Sprintf("a *mat.Dense takes a 2-d array, got %d dimensions", a.Ndim())}
	}
	data, ok := a.Flat()
	if !ok {
		return nil, &pyext.BufferError{Msg: fmt.Sprintf("a *mat.Dense takes a C-contiguous array, got strides %v", a.Strides())}
	}
	r, c := a.Dim(0), a.Dim(1)
	if r == 0 || c == 0 {
		return nil, &pyext.BufferError{Msg: fmt.Sprintf("gonum has no empty matrix of shape (%d, %d)", r, c)}
	}
	return mat.NewDense(r, c, data), nil
}

// VecView is the *mat.VecDense over a, a C-contiguous 1-d array.
func VecView(a pyext.NDArray[float64]) (*mat.VecDense, error) {
	if a.Ndim() != 1 {
		return nil, &pyext.BufferError{Msg: fmt.Sprintf("a *mat.VecDense takes a 1-d array, got %d dimensions", a.Ndim())}
	}
	data, ok := a.Flat()
	if !ok {
		return nil, &pyext.BufferError{Msg: fmt.Sprintf("a *mat.VecDense takes a contiguous array, got strides %v", a.Strides())}
	}
	if len(data) == 0 {
		return nil, &pyext.BufferError{Msg: "gonum has no empty vector of shape (0,)"}
	}
	return mat.NewVecDense(len(data), data), nil
}

// DenseMemory is what a returned *mat.Dense exports: its elements from
// (0, 0), shape (Rows, Cols) and strides (Stride, 1).
func DenseMemory(m *mat.Dense) ([]float64, []int, []int, error) {
	if m == nil {
		return nil, nil, nil, &pyext.ValueError{Msg: "a nil *mat.Dense was returned"}
	}
	if m.IsEmpty() {
		return nil, []int{0, 0}, []int{0, 1}, nil
	}
	raw := m.RawMatrix()
	return raw.Data[:(raw.Rows-1)*raw.Stride+raw.Cols], []int{raw.Rows, raw.Cols}, []int{raw.Stride, 1}, nil
}

// VecMemory is what a returned *mat.VecDense exports: its elements from 0,
// shape (N,) and stride Inc.
func VecMemory(v *mat.VecDense) ([]float64, []int, []int, error) {
	if v == nil {
		return nil, nil, nil, &pyext.ValueError{Msg: "a nil *mat.VecDense was returned"}
	}
	if v.IsEmpty() {
		return nil, []int{0}, []int{1}, nil
	}
	raw := v.RawVector()
	if raw.Inc <= 0 {
		return nil, nil, nil, &pyext.ValueError{Msg: fmt.Sprintf("a *mat.VecDense with increment %d", raw.Inc)}
	}
	return raw.Data[:(raw.N-1)*raw.Inc+1], []int{raw.N}, []int{raw.Inc}, nil
}

// MatrixMemory is what a returned mat.Matrix exports: a *mat.Dense's own
// memory, a copy of any other matrix (a transpose, a triangle...).
func MatrixMemory(m mat.Matrix) ([]float64, []int, []int, error) {
	switch d := m.(type) {
	case nil:
		return nil, nil, nil, &pyext.ValueError{Msg: "a nil mat.Matrix was returned"}
	case *mat.Dense:
		return DenseMemory(d)
	}
	if r, c := m.Dims(); r == 0 || c == 0 {
		return nil, []int{r, c}, []int{c, 1}, nil
	}
	return DenseMemory(mat.DenseCopyOf(m))
}

// VectorMemory is what a returned mat.Vector exports: a *mat.VecDense's
// own memory, a copy of any other vector.
func VectorMemory(v mat.Vector) ([]float64, []int, []int, error) {
	switch d := v.(type) {
	case nil:
		return nil, nil, nil, &pyext.ValueError{Msg: "a nil mat.Vector was returned"}
	case *mat.VecDense:
		return VecMemory(d)
	}
	n := v.Len()
	data := make([]float64, n)
	for i := range data {
		data[i] = v.AtVec(i)
	}
	return data, []int{n}, []int{1}, nil
}
