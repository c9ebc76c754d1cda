package gonum

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/godlpack/godlpack/pyext"
)

func TestDenseViewAliasesTheArraysMemory(t *testing.T) {
	data := []float64{1, 2, 3, 4, 5, 6}
	a, err := pyext.NDArrayOf(data, 2, 3)
	require.NoError(t, err)
	m, err := DenseView(a)
	require.NoError(t, err)
	r, c := m.Dims()
	assert.Equal(t, [2]int{2, 3}, [2]int{r, c})
	assert.Equal(t, 6.0, m.At(1, 2))
	m.Set(0, 1, 7) // a write lands in the caller's array
	assert.Equal(t, 7.0, data[1])
	assert.Same(t, &data[0], &m.RawMatrix().Data[0])
	assert.Equal(t, 6, cap(m.RawMatrix().Data)) // gonum cannot grow into memory beyond the array
}

func TestVecViewAliasesTheArraysMemory(t *testing.T) {
	data := []float64{1, 2, 3}
	a, _ := pyext.NDArrayOf(data, 3)
	v, err := VecView(a)
	require.NoError(t, err)
	assert.Equal(t, 3, v.Len())
	v.SetVec(2, 9)
	assert.Equal(t, 9.0, data[2])
}

// pyext's requirements (Ndim, CContig) keep these from Python; the views
// still refuse them rather than read wrong elements.
func TestViewsRefuseWhatGonumCannotHold(t *testing.T) {
	one, _ := pyext.NDArrayOf([]float64{1, 2}, 2)
	_, err := DenseView(one)
	assert.EqualError(t, err, "a *mat.Dense takes a 2-d array, got 1 dimensions")
	assert.IsType(t, &pyext.BufferError{}, err)
	two, _ := pyext.NDArrayOf([]float64{1, 2}, 1, 2)
	_, err = VecView(two)
	assert.EqualError(t, err, "a *mat.VecDense takes a 1-d array, got 2 dimensions")
	transposed, _ := pyext.NDArrayStrided([]float64{1, 2, 3, 4, 5, 6}, 0, []int{3, 2}, []int{1, 3})
	_, err = DenseView(transposed)
	assert.EqualError(t, err, "a *mat.Dense takes a C-contiguous array, got strides [1 3]")
	every2nd, _ := pyext.NDArrayStrided([]float64{1, 2, 3, 4}, 0, []int{2}, []int{2})
	_, err = VecView(every2nd)
	assert.ErrorContains(t, err, "a *mat.VecDense takes a contiguous array")
	empty, _ := pyext.NDArrayOf([]float64{}, 0, 3)
	_, err = DenseView(empty)
	assert.EqualError(t, err, "gonum has no empty matrix of shape (0, 3)")
	assert.IsType(t, &pyext.BufferError{}, err)
	none, _ := pyext.NDArrayOf([]float64{}, 0)
	_, err = VecView(none)
	assert.EqualError(t, err, "gonum has no empty vector of shape (0,)")
}

func TestDenseMemoryKeepsTheStrideOfASlice(t *testing.T) {
	m := mat.NewDense(3, 4, []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})
	s := m.Slice(1, 3, 1, 3).(*mat.Dense) // [[5 6] [9 10]], stride 4
	data, shape, strides, err := DenseMemory(s)
	require.NoError(t, err)
	assert.Equal(t, []int{2, 2}, shape)
	assert.Equal(t, []int{4, 1}, strides)
	assert.Equal(t, []float64{5, 6, 7, 8, 9, 10}, data) // (0, 0) to (1, 1), no further
	assert.Same(t, &m.RawMatrix().Data[5], &data[0])    // zero-copy
	for i := 0; i < 2; i++ {
		for j := 0; j < 2; j++ {
			assert.Equal(t, s.At(i, j), data[i*strides[0]+j*strides[1]])
		}
	}
}

func TestVecMemoryKeepsTheIncrementOfAColumn(t *testing.T) {
	m := mat.NewDense(3, 2, []float64{1, 2, 3, 4, 5, 6})
	col := m.ColView(1).(*mat.VecDense)
	data, shape, strides, err := VecMemory(col)
	require.NoError(t, err)
	assert.Equal(t, []int{3}, shape)
	assert.Equal(t, []int{2}, strides)
	assert.Equal(t, []float64{2, 3, 4, 5, 6}, data)
	assert.Equal(t, []float64{2, 4, 6}, []float64{data[0], data[2], data[4]})
}

func TestEmptyAndNilResults(t *testing.T) {
	data, shape, strides, err := DenseMemory(&mat.Dense{})
	require.NoError(t, err)
	assert.Empty(t, data)
	assert.Equal(t, []int{0, 0}, shape)
	assert.Len(t, strides, 2)
	_, shape, _, err = VecMemory(&mat.VecDense{})
	require.NoError(t, err)
	assert.Equal(t, []int{0}, shape)
	for _, err := range []error{
		second(DenseMemory(nil)), second(VecMemory(nil)), second(MatrixMemory(nil)), second(VectorMemory(nil)),
	} {
		assert.IsType(t, &pyext.ValueError{}, err)
		assert.Contains(t, err.Error(), "a nil ")
	}
}

func second(_ []float64, _, _ []int, err error) error { return err }

func TestOtherMatricesAndVectorsAreCopied(t *testing.T) {
	m := mat.NewDense(2, 3, []float64{1, 2, 3, 4, 5, 6})
	data, shape, strides, err := MatrixMemory(m.T())
	require.NoError(t, err)
	assert.Equal(t, []int{3, 2}, shape)
	assert.Equal(t, []int{2, 1}, strides)
	assert.Equal(t, []float64{1, 4, 2, 5, 3, 6}, data)
	assert.NotSame(t, &m.RawMatrix().Data[0], &data[0])

	same, _, _, err := MatrixMemory(m) // a *mat.Dense as a mat.Matrix: its own memory
	require.NoError(t, err)
	assert.Same(t, &m.RawMatrix().Data[0], &same[0])

	v := mat.NewVecDense(3, []float64{7, 8, 9})
	data, shape, strides, err = VectorMemory(mat.TransposeVec{Vector: v})
	require.NoError(t, err)
	assert.Equal(t, []float64{7, 8, 9}, data)
	assert.Equal(t, []int{3}, shape)
	assert.Equal(t, []int{1}, strides)
	assert.NotSame(t, &v.RawVector().Data[0], &data[0])
	own, _, _, err := VectorMemory(v)
	require.NoError(t, err)
	assert.Same(t, &v.RawVector().Data[0], &own[0])
}

// Importing this package registers the four types: a module using them
// defines (its stub lists the functions, typed as arrays).
func TestTheTypesAreRegistered(t *testing.T) {
	mod := pyext.NewModule("g", "").
		Def("matvec", pyext.Func2(func(m *mat.Dense, x *mat.VecDense) *mat.VecDense { return x }), "matvec(m, x)\n--\n\n",
			pyext.ReadOnlyArgs).
		Def("gen", func(m mat.Matrix, v mat.Vector) (mat.Matrix, mat.Vector) { return m, v }, "gen(m, v)\n--\n\n",
			pyext.ReadOnlyArgs, pyext.Convert("v"))
	stub := mod.Stub()
	assert.Contains(t, stub, "def matvec(m: SupportsDLPack | Buffer, x: SupportsDLPack | Buffer, /) -> Tensor:")
	assert.Contains(t, stub, "def gen(m: SupportsDLPack | Buffer, v: ArrayLike, /) -> tuple[Tensor, Tensor]:")
	assert.PanicsWithError(t, "pyext.RegisterArrayType[*mat.Dense]: registered already", func() {
		must(pyext.RegisterArrayType(pyext.ArrayType[*mat.Dense, float64]{Ndim: 2, View: DenseView, Memory: DenseMemory}))
	})
}
