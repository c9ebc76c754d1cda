package pyext

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/godlpack/godlpack"
	"github.com/godlpack/godlpack/consumer"
)

// defErr is the definition error Init would raise as ImportError.
func defErr(fn any, opts ...Option) error {
	return NewModule("m", "").Def("f", fn, "", opts...).err
}

func TestRequirementsThatFitAreAccepted(t *testing.T) {
	for name, c := range map[string]struct {
		fn   any
		opts []Option
	}{
		"shape on an NDArray":          {Func1(func(NDArray[float64]) float64 { return 0 }), []Option{ReadOnlyArgs, Require(0, Shape(-1, 3))}},
		"ndim and order on a slice":    {Func1(func([]float32) float64 { return 0 }), []Option{Require(0, Ndim(2), FContig)}},
		"shape and ndim that agree":    {func(NDArray[int64]) {}, []Option{Require(0, Ndim(2), Shape(2, -1))}},
		"repeated equal shape":         {func(NDArray[int64]) {}, []Option{Require(0, Shape(2, 2)), Require(0, Shape(2, 2))}},
		"device and dtype on a Tensor": {Func1(func(godlpack.Tensor) int { return 0 }), []Option{Require(0, OnCUDA, DTypeIs(godlpack.Float16), Strided)}},
		"borrowed tensor":              {func(*consumer.Tensor) {}, []Option{Require(0, OnCPU, CContig)}},
		"a slice's own dtype":          {func([]int32) {}, []Option{Require(0, DTypeIs(godlpack.Int32))}},
		"convert read-only params":     {Func2(func(NDArray[float64], []float64) float64 { return 0 }), []Option{ReadOnlyArgs, Convert(0, 1)}},
		"write-back of written param":  {Proc2(func([]float64, float64) {}), []Option{Writes(0), ConvertWriteBack(0)}},
		"convert and a written other":  {func(x []float64, y []float64) {}, []Option{Writes(1), Convert(0), ConvertWriteBack(1)}},
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
		"pyext.Require(1): parameter 1 is not an array":                                     {slice, []Option{Require(1, Ndim(1))}},
		"pyext.Require(2): no parameter 2 (the function has 2)":                             {slice, []Option{Require(2, Ndim(1))}},
		"pyext.Require(-1): no parameter -1":                                                {slice, []Option{Require(-1, Ndim(1))}},
		"pyext.Convert(1): parameter 1 is not an array":                                     {slice, []Option{ReadOnlyArgs, Convert(1)}},
		"two shapes, (*, 3) and (2,)":                                                       {slice, []Option{Require(0, Shape(-1, 3), Shape(2))}},
		"shape (2, 2) has 2 dimensions, but Ndim(3)":                                        {slice, []Option{Require(0, Ndim(3)), Require(0, Shape(2, 2))}},
		"Ndim(1), but 2 dimensions already required":                                        {slice, []Option{Require(0, Shape(2, 2), Ndim(1))}},
		"Ndim(-1): want 0 to 64":                                                            {slice, []Option{Require(0, Ndim(-1))}},
		"shape (-2,): a size below -1":                                                      {slice, []Option{Require(0, Shape(-2))}},
		"CContig and FContig":                                                               {slice, []Option{Require(0, CContig, FContig)}},
		"Strided for a typed slice: a slice is compact":                                     {slice, []Option{Require(0, Strided)}},
		"OnCUDA for a typed slice, which Go reads on the CPU":                               {slice, []Option{Require(0, OnCUDA)}},
		"AnyDevice for an NDArray, which Go reads on the CPU":                               {func(NDArray[float64]) {}, []Option{Require(0, AnyDevice)}},
		"OnCPU and OnCUDA":                                                                  {func(godlpack.Tensor) {}, []Option{Require(0, OnCPU, OnCUDA)}},
		"DTypeIs(float32) for a typed slice of float64":                                     {slice, []Option{Require(0, DTypeIs(godlpack.Float32))}},
		"two dtypes, float32 and int8":                                                      {func(godlpack.Tensor) {}, []Option{Require(0, DTypeIs(godlpack.Float32), DTypeIs(godlpack.Int8))}},
		"parameter 0 is a tensor, which takes any array as it is":                           {func(godlpack.Tensor) {}, []Option{ReadOnlyArgs, Convert(0)}},
		"pyext.Convert(0): parameter 0 may be written":                                      {slice, []Option{Convert(0)}},
		"pyext.Convert(0): parameter 0 may be written (pyext.Writes":                        {func(x, y []float64) {}, []Option{Writes(0), Convert(0)}},
		"pyext.ConvertWriteBack(0): parameter 0 is not written (pyext.Writes): use Convert": {slice, []Option{ReadOnlyArgs, ConvertWriteBack(0)}},
		"pyext.ConvertWriteBack(0): parameter 0 already has a conversion":                   {slice, []Option{Writes(0), ConvertWriteBack(0), ConvertWriteBack(0)}},
		"an unknown requirement":                                                            {slice, []Option{Require(0, Req{})}},
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
		Def("g", func(x []float32) {}, "", Require(0, Ndim(1)))
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

// The Option kinds' marker bits are distinct and outside each other's
// payloads (methodOpt and arrayOpt once shared bit 42: every method read as
// Require of the first spec ever made).
func TestOptionMarkersAreDistinct(t *testing.T) {
	markers := []Option{writesOpt, argsOpt, methodOpt, arrayOpt, badParam}
	for i, a := range markers {
		for _, b := range markers[i+1:] {
			assert.Zero(t, a&b, "%#x and %#x overlap", a, b)
		}
	}
	payloads := []Option{0xffff, argsMask << argsShift, badParam - 1}
	for _, m := range []Option{writesOpt, argsOpt, methodOpt, arrayOpt} {
		for _, p := range payloads {
			assert.Zero(t, m&p, "marker %#x lies in a payload %#x", m, p)
		}
	}
}

type reqObj struct{}

// A method's Require and Convert count the parameters after the receiver.
func TestMethodRequirementsCountAfterTheReceiver(t *testing.T) {
	c := NewClass[reqObj]("R", "").
		Method("m", func(*reqObj, NDArray[float64]) {}, "", ReadOnlyArgs, Require(0, Shape(-1, 3)), Convert(0))
	require.NoError(t, c.info.err)
	require.Len(t, c.info.methods, 1)
	f := c.info.methods[0]
	assert.False(t, f.convertsParam(0)) // the receiver
	assert.True(t, f.convertsParam(1))  // Go parameter 1: the first after the receiver
}
