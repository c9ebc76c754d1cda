package pyext

import (
	"fmt"
	"reflect"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/godlpack/godlpack"
	"github.com/godlpack/godlpack/producer"
)

// grid is a row-major matrix of another "library", registered below as an
// adapter package would register its type.
type grid struct {
	data         []float64
	rows, stride int
}

// gridVec is an interface type, registered as mat.Vector is by pyext/gonum.
type gridVec interface{ Len() int }

func (g *grid) Len() int { return g.rows }

type fitter struct{}

var gridType = ArrayType[*grid, float64]{
	Ndim: 2,
	View: func(a NDArray[float64]) (*grid, error) {
		data, _ := a.Flat()
		if a.Dim(0) == 0 {
			return nil, &BufferError{"no empty grids"}
		}
		return &grid{data: data, rows: a.Dim(0), stride: a.Dim(1)}, nil
	},
	Memory: func(g *grid) ([]float64, []int, []int, error) {
		if g == nil {
			return nil, nil, nil, &ValueError{"a nil grid"}
		}
		return g.data, []int{g.rows, g.stride - 1}, []int{g.stride, 1}, nil // the last column is padding
	},
}

func init() {
	if err := RegisterArrayType(gridType); err != nil {
		panic(err)
	}
	err := RegisterArrayType(ArrayType[gridVec, float64]{
		Ndim:   1,
		View:   func(a NDArray[float64]) (gridVec, error) { return &grid{rows: a.Dim(0)}, nil },
		Memory: func(v gridVec) ([]float64, []int, []int, error) { return nil, []int{0}, []int{1}, nil },
	})
	if err != nil {
		panic(err)
	}
}

func TestRegisterArrayTypeRefusesWhatCannotWork(t *testing.T) {
	view := func(NDArray[float64]) ([]float64, error) { return nil, nil }
	mem := func([]float64) ([]float64, []int, []int, error) { return nil, nil, nil, nil }
	assert.ErrorContains(t, RegisterArrayType(ArrayType[[]float64, float64]{Ndim: 1, View: view, Memory: mem}),
		"pyext converts []float64 already")
	type other struct{}
	assert.ErrorContains(t, RegisterArrayType(ArrayType[*other, float32]{Ndim: 0}), "Ndim 0, want 1 to 64")
	assert.ErrorContains(t, RegisterArrayType(ArrayType[*other, float32]{Ndim: 65}), "Ndim 65")
	assert.ErrorContains(t, RegisterArrayType(ArrayType[*other, float32]{Ndim: 1}), "View and Memory are both needed")
	assert.ErrorContains(t, RegisterArrayType(gridType), "pyext.RegisterArrayType[*pyext.grid]: registered already")
}

// A registered type is an N-d view parameter with Ndim and C order
// required, on the typed and the reflection path alike, and at the right
// index in a method (after the receiver).
func TestARegisteredParameterRequiresItsNdimAndCOrder(t *testing.T) {
	sum := func(g *grid, k float64) float64 { return k }
	cls := NewClass[fitter]("Fitter", "")
	cls.Method("fit", Func2(func(_ *fitter, g *grid) int { return g.rows }), "", Args("g"), Convert("g"))
	m := NewModule("m", "").
		Def("typed", Func2(sum), "", ReadOnlyArgs).
		Def("refl", sum, "", ReadOnlyArgs).
		Def("vec", Func1(func(v gridVec) int { return v.Len() }), "").
		Class(cls)
	require.NoError(t, m.err)
	for _, f := range []*goFunc{m.funcs[0], m.funcs[1]} {
		assert.Equal(t, "af", C_sig(f), f.name)
		e := f.c.elem[0]
		assert.Equal(t, []int{int(godlpack.Float64.Code), 64, 1}, []int{int(e.code), int(e.bits), int(e.nd)}, f.name)
		require.NotNil(t, f.c.req[0], f.name)
		assert.Equal(t, 2, int(f.c.req[0].ndim), f.name)
		assert.Equal(t, CContig.n, int(f.c.req[0].order), f.name)
		assert.Nil(t, f.c.req[1], f.name) // the float: nothing
	}
	assert.NotNil(t, m.funcs[0].call)
	assert.Nil(t, m.funcs[1].call)
	assert.Equal(t, 1, int(m.funcs[2].c.req[0].ndim)) // an interface type
	fit := cls.info.methods[0]
	assert.Nil(t, fit.c.req[0]) // the receiver
	require.NotNil(t, fit.c.req[1])
	assert.Equal(t, 2, int(fit.c.req[1].ndim))
	assert.True(t, fit.convertsParam(1))
}

func TestRequirementsOnARegisteredParameter(t *testing.T) {
	f := func(*grid) {}
	shaped := NewModule("m", "").Def("f", f, "", Args("x"), Require("x", Shape(-1, 3)))
	require.NoError(t, shaped.err)
	q := shaped.funcs[0].c.req[0]
	assert.Equal(t, []int{1, -1, 3}, []int{int(q.has_shape), int(q.shape[0]), int(q.shape[1])})
	for want, opts := range map[string][]Option{
		`pyext.Require("x"): CContig and FContig`:                        {Require("x", FContig)},
		"shape (3,) has 1 dimensions, but Ndim(2)":                       {Require("x", Shape(3))},
		`pyext.Convert("x"): the parameter is written`:                   {Writes("x"), Convert("x")},
		`pyext.Require("x"): AnyDevice for an NDArray`:                   {Require("x", AnyDevice)},
		`pyext.ConvertWriteBack("x"): the parameter is not written`:      {ConvertWriteBack("x")},
		`pyext.Require("x"): DTypeIs(float32) for an NDArray of float64`: {Require("x", DTypeIs(godlpack.Float32))},
	} {
		assert.ErrorContains(t, defErr(f, opts...), want, opts)
	}
	assert.NoError(t, defErr(f, Writes("x"), ConvertWriteBack("x")))
}

func TestTheStubTypesRegisteredParametersAndResults(t *testing.T) {
	m := NewModule("m", "").
		Def("plain", Func1(func(g *grid) *grid { return g }), "plain(g)\n--\n\n", ReadOnlyArgs).
		Def("conv", func(g *grid, v gridVec) (*grid, error) { return g, nil }, "conv(arg1, arg2)\n--\n\n", Convert("arg1"))
	require.NoError(t, m.err)
	stub := m.Stub()
	assert.Contains(t, stub, "def plain(g: SupportsDLPack | Buffer, /) -> Tensor:")
	assert.Contains(t, stub, "def conv(arg1: ArrayLike, arg2: SupportsDLPack | Buffer, /) -> Tensor:")
}

func TestAnUnregisteredGonumTypeSaysWhichPackageRegistersIt(t *testing.T) {
	err := defErr(func(*mat.Dense) {})
	assert.ErrorContains(t, err, `unsupported parameter type *mat.Dense (gonum's types need import _ "github.com/godlpack/godlpack/pyext/gonum")`)
	err = defErr(func() mat.VecDense { return mat.VecDense{} })
	assert.ErrorContains(t, err, "unsupported result type mat.VecDense (gonum's types need")
	assert.ErrorContains(t, defErr(func(chan int) {}), "unsupported parameter type chan int")
	assert.NotContains(t, defErr(func(chan int) {}).Error(), "gonum")
}

// exported is the managed tensor a result conversion wrote, freed by the test.
func exported(t *testing.T, v *cValue) *godlpack.DLManagedTensorVersioned {
	t.Helper()
	require.NotNil(t, v.p)
	m := (*godlpack.DLManagedTensorVersioned)(v.p)
	t.Cleanup(m.Free)
	return m
}

// A returned *grid is exported zero-copy with Memory's shape and strides;
// memory aliasing an argument, bad strides and Memory's error are refused.
func TestARegisteredResultIsExportedZeroCopyWithItsStrides(t *testing.T) {
	r, err := resultFor(reflect.TypeFor[*grid]())
	require.NoError(t, err)
	g := &grid{data: []float64{1, 2, 0, 3, 4, 0}, rows: 2, stride: 3}
	before := producer.LiveOwners()
	var v cValue
	require.NoError(t, r.put(reflect.ValueOf(g), &v, nil))
	m := exported(t, &v)
	assert.Equal(t, unsafe.Pointer(&g.data[0]), m.DLTensor.Data)
	assert.Equal(t, []int64{2, 2}, m.DLTensor.ShapeSlice())
	assert.Equal(t, []int64{3, 1}, m.DLTensor.StridesSlice())
	assert.Equal(t, godlpack.Float64, godlpack.DType{Code: m.DLTensor.DType.Code, Bits: m.DLTensor.DType.Bits, Lanes: m.DLTensor.DType.Lanes})
	assert.Equal(t, before+1, producer.LiveOwners())

	lo := uintptr(unsafe.Pointer(&g.data[4])) // an argument holding the grid's last elements
	var w cValue
	err = r.put(reflect.ValueOf(g), &w, []span{{lo, lo + 16}})
	assert.EqualError(t, err, "a returned *pyext.grid aliases an argument's memory, which is released when the call returns: return a copy")
	assert.IsType(t, &ValueError{}, err)
	assert.Nil(t, w.p)

	err = r.put(reflect.ValueOf(&grid{data: []float64{1, 2}, rows: 2, stride: 3}), &w, nil)
	assert.ErrorContains(t, err, "view spans") // Memory's shape beyond its data: refused, not read past
	err = r.put(reflect.ValueOf((*grid)(nil)), &w, nil)
	assert.EqualError(t, err, "a nil grid")
	assert.Nil(t, w.p)
}

func TestArgErrorNamesTheArgumentAndKeepsTheClass(t *testing.T) {
	b := argError("f", 1, &BufferError{"no"})
	assert.EqualError(t, b, "f() argument 2: no")
	assert.IsType(t, &BufferError{}, b)
	assert.IsType(t, &TypeError{}, argError("f", 0, &TypeError{"x"}))
	assert.IsType(t, &ValueError{}, argError("f", 0, &ValueError{"x"}))
	plain := fmt.Errorf("plain")
	assert.ErrorIs(t, argError("f", 0, plain), plain)
}
