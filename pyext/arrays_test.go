package pyext

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/godlpack/godlpack"
	"github.com/godlpack/godlpack/consumer"
)

// defErr is the definition error Init would raise as ImportError, for fn
// with its parameters named x, y, z.
func defErr(fn any, opts ...Option) error {
	t := reflect.TypeOf(fn)
	if typed, ok := fn.(Typed); ok {
		t = typed.typ
	}
	names := []string{"x", "y", "z"}[:t.NumIn()]
	return NewModule("m", "").Def("f", fn, "", append([]Option{Args(names...)}, opts...)...).err
}

func TestRequirementsThatFitAreAccepted(t *testing.T) {
	for name, c := range map[string]struct {
		fn   any
		opts []Option
	}{
		"shape on an NDArray":          {Func1(func(NDArray[float64]) float64 { return 0 }), []Option{ReadOnlyArgs, Require("x", Shape(-1, 3))}},
		"ndim and order on a slice":    {Func1(func([]float32) float64 { return 0 }), []Option{Require("x", Ndim(2), FContig)}},
		"shape and ndim that agree":    {func(NDArray[int64]) {}, []Option{Require("x", Ndim(2), Shape(2, -1))}},
		"repeated equal shape":         {func(NDArray[int64]) {}, []Option{Require("x", Shape(2, 2)), Require("x", Shape(2, 2))}},
		"device and dtype on a Tensor": {Func1(func(godlpack.Tensor) int { return 0 }), []Option{Require("x", OnCUDA, DTypeIs(godlpack.Float16), Strided)}},
		"borrowed tensor":              {func(*consumer.Tensor) {}, []Option{Require("x", OnCPU, CContig)}},
		"a slice's own dtype":          {func([]int32) {}, []Option{Require("x", DTypeIs(godlpack.Int32))}},
		"convert read-only params":     {Func2(func(NDArray[float64], []float64) float64 { return 0 }), []Option{ReadOnlyArgs, Convert("x", "y")}},
		"write-back of written param":  {Proc2(func([]float64, float64) {}), []Option{Writes("x"), ConvertWriteBack("x")}},
		"convert and a written other":  {func(x []float64, y []float64) {}, []Option{Writes("y"), Convert("x"), ConvertWriteBack("y")}},
		"an NDArray with no option":    {func(NDArray[complex64]) {}, nil},
	} {
		assert.NoError(t, defErr(c.fn, c.opts...), name)
	}
}

func TestRequirementsThatCannotHoldFailTheDefinition(t *testing.T) {
	slice := func(x []float64, a float64) {}
	for want, c := range map[string]struct {
		fn   any
		opts []Option
	}{
		`pyext.Require("y"): the parameter is not an array`:                                     {slice, []Option{Require("y", Ndim(1))}},
		`pyext.Require("z"): no parameter "z" (its parameters are x, y)`:                        {slice, []Option{Require("z", Ndim(1))}},
		`pyext.Convert("y"): the parameter is not an array`:                                     {slice, []Option{Convert("y")}},
		`pyext.Writes("y"): parameter "y" is not an array`:                                      {slice, []Option{Writes("y")}},
		"two shapes, (*, 3) and (2,)":                                                           {slice, []Option{Require("x", Shape(-1, 3), Shape(2))}},
		"shape (2, 2) has 2 dimensions, but Ndim(3)":                                            {slice, []Option{Require("x", Ndim(3)), Require("x", Shape(2, 2))}},
		"Ndim(1), but 2 dimensions already required":                                            {slice, []Option{Require("x", Shape(2, 2), Ndim(1))}},
		"Ndim(-1): want 0 to 64":                                                                {slice, []Option{Require("x", Ndim(-1))}},
		"shape (-2,): a size below -1":                                                          {slice, []Option{Require("x", Shape(-2))}},
		"CContig and FContig":                                                                   {slice, []Option{Require("x", CContig, FContig)}},
		"Strided for a typed slice: a slice is compact":                                         {slice, []Option{Require("x", Strided)}},
		"OnCUDA for a typed slice, which Go reads on the CPU":                                   {slice, []Option{Require("x", OnCUDA)}},
		"AnyDevice for an NDArray, which Go reads on the CPU":                                   {func(NDArray[float64]) {}, []Option{Require("x", AnyDevice)}},
		"OnCPU and OnCUDA":                                                                      {func(godlpack.Tensor) {}, []Option{Require("x", OnCPU, OnCUDA)}},
		"DTypeIs(float32) for a typed slice of float64":                                         {slice, []Option{Require("x", DTypeIs(godlpack.Float32))}},
		"two dtypes, float32 and int8":                                                          {func(godlpack.Tensor) {}, []Option{Require("x", DTypeIs(godlpack.Float32), DTypeIs(godlpack.Int8))}},
		"the parameter is a tensor, which takes any array as it is":                             {func(godlpack.Tensor) {}, []Option{ReadOnlyArgs, Convert("x")}},
		`pyext.Convert("x"): the parameter is written (pyext.Writes)`:                           {func(x, y []float64) {}, []Option{Writes("x"), Convert("x")}},
		`pyext.ConvertWriteBack("x"): the parameter is not written (pyext.Writes): use Convert`: {slice, []Option{ConvertWriteBack("x")}},
		`pyext.ConvertWriteBack("x"): the parameter already has a conversion`:                   {slice, []Option{Writes("x"), ConvertWriteBack("x"), ConvertWriteBack("x")}},
		"an unknown requirement":                                                                {slice, []Option{Require("x", Req{})}},
	} {
		err := defErr(c.fn, c.opts...)
		if assert.Error(t, err, want) {
			assert.Contains(t, err.Error(), want)
			assert.Contains(t, err.Error(), "m.f: ")
		}
	}
	err := defErr(func(*NDArray[float64]) {})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "unsupported parameter type *pyext.NDArray[float64]")
}

func TestNDArrayParametersGetAViewRequirement(t *testing.T) {
	m := NewModule("m", "").
		Def("f", Func2(func(NDArray[float32], []float32) int { return 0 }), "").
		Def("g", func(x []float32) {}, "g(x)\n--\n\nThe names from the signature line.", Require("x", Ndim(1)))
	require.NoError(t, m.err)
	f, g := m.funcs[0].c, m.funcs[1].c
	require.NotNil(t, f.req[0])
	assert.Nil(t, f.req[1], "a plain typed slice keeps the fast path")
	assert.EqualValues(t, 2, f.req[0].view)
	assert.EqualValues(t, 0, f.req[0].order, "an NDArray is strided unless required otherwise")
	assert.EqualValues(t, 1, f.req[0].device)
	assert.EqualValues(t, 1, f.elem[0].nd)
	assert.EqualValues(t, 32, f.elem[0].bits)
	require.NotNil(t, g.req[0])
	assert.EqualValues(t, 'C', g.req[0].order, "a typed slice is C-contiguous by default")
	assert.EqualValues(t, 1, g.req[0].ndim)
}

func TestNDArrayIndexing(t *testing.T) {
	data := []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}
	a, err := NDArrayOf(data, 3, 4)
	require.NoError(t, err)
	assert.Equal(t, []int{3, 4}, a.Shape())
	assert.Equal(t, []int{4, 1}, a.Strides())
	assert.Equal(t, 6.0, a.At(1, 2))
	assert.Equal(t, 6.0, a.At2(1, 2))
	assert.Equal(t, []float64{4, 5, 6, 7}, a.Row(1))
	flat, ok := a.Flat()
	assert.True(t, ok)
	assert.Equal(t, data, flat)
	assert.True(t, a.IsCContig())
	assert.False(t, a.IsFContig())

	// The transpose, reversed along its rows: (4, 3) with strides (1, -4) from element 8.
	r, err := NDArrayStrided(data, 8, []int{4, 3}, []int{1, -4})
	require.NoError(t, err)
	assert.Equal(t, 8.0, r.At(0, 0))
	assert.Equal(t, 1.0, r.At(1, 2))
	r.Set2(-1, 3, 1) // element 8 + 3 - 4 = 7
	assert.Equal(t, -1.0, data[7])
	*r.Ptr(0, 2) = -2
	assert.Equal(t, -2.0, data[0])
	_, ok = r.Flat()
	assert.False(t, ok)
	assert.Panics(t, func() { r.Row(0) }, "rows are not adjacent")
	assert.Panics(t, func() { r.At(4, 0) })
	assert.Panics(t, func() { r.At(0) })
	assert.Panics(t, func() { r.At2(0, -1) })

	// Stride 0 (broadcast) and empty arrays.
	b, err := NDArrayStrided(data, 0, []int{5, 3}, []int{0, 1})
	require.NoError(t, err)
	assert.Equal(t, b.At(4, 2), b.At(0, 2))
	e, err := NDArrayStrided(data[:0], 0, []int{0, 5}, []int{0, 0})
	require.NoError(t, err)
	assert.True(t, e.IsCContig())
	assert.Equal(t, 0, e.Size())

	_, err = NDArrayStrided(data, 8, []int{4, 3}, []int{1, 4})
	assert.ErrorContains(t, err, "elements 8 to 19, data has 12")
	_, err = NDArrayOf(data, 5, 2)
	assert.ErrorContains(t, err, "holds 10 elements, data 12")
}

type reqObj struct{}

// A method's Require and Convert name the parameters after the receiver.
func TestMethodRequirementsCountAfterTheReceiver(t *testing.T) {
	c := NewClass[reqObj]("R", "").
		Method("m", func(*reqObj, NDArray[float64]) {}, "m(points)\n--\n\n", Require("points", Shape(-1, 3)), Convert("points"))
	require.NoError(t, c.info.err)
	require.Len(t, c.info.methods, 1)
	f := c.info.methods[0]
	assert.False(t, f.convertsParam(0)) // the receiver
	assert.True(t, f.convertsParam(1))  // Go parameter 1: the first after the receiver
}

type idxObj struct{}

// The form of godlpack 0.1, indices from 0 after a method's receiver, still
// builds (its projects build with this pyext); a reference that is neither a
// name nor an index is an error naming the option.
func TestOptionsByIndexAsBefore(t *testing.T) {
	m := NewModule("m", "").Def("saxpy", func(a float32, x, y []float32) {}, "", Writes(2), Convert(1))
	require.NoError(t, m.err)
	assert.Equal(t, uint32(1<<2), uint32(m.funcs[0].c.writes))
	assert.True(t, m.funcs[0].convertsParam(1))
	c := NewClass[idxObj]("I", "").Method("m", func(*idxObj, []float64) {}, "", Writes(0))
	require.NoError(t, c.info.err)
	assert.Equal(t, uint32(1<<1), uint32(c.info.methods[0].c.writes), "index 0 is the parameter after the receiver")
	assert.ErrorContains(t, defErr(func(x []float64) {}, Writes(1.5)), "pyext.Writes(1.5): a parameter is given by its name, a string (got float64)")
	assert.ErrorContains(t, defErr(func(x []float64) {}, Require(-1, Ndim(1))), "pyext.Require(-1): no parameter -1")
	assert.ErrorContains(t, defErr(func(x []float64, a float64) {}, Writes(1)), "pyext.Writes(1): parameter 1 is not an array")
}
