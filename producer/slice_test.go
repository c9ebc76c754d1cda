package producer_test

import (
	"math"
	"runtime"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/godlpack/godlpack"
	"github.com/godlpack/godlpack/internal/testkit/invalid"
	"github.com/godlpack/godlpack/producer"
)

type celsius float64

func fromSliceRoundTrip[T godlpack.Element](t *testing.T, data []T) {
	t.Helper()
	c := snapshot()
	s, err := producer.FromSlice(data, []int64{int64(len(data))}, nil, false, nil)
	require.NoError(t, err)
	want := godlpack.DTypeOf[T]()
	assert.Equal(t, want, s.Tensor().DType)
	m, err := s.ExportVersioned(0)
	require.NoError(t, err)
	s.Close()
	assert.Equal(t, godlpack.DLDataType(want), m.DLTensor.DType)
	assert.Equal(t, data, unsafe.Slice((*T)(m.DLTensor.Data), len(data)))
	deleteVersioned(m)
	c.RequireDelta(t, 0, 0)
}

func TestFromSliceEveryGoType(t *testing.T) {
	fromSliceRoundTrip(t, []bool{true, false, true})
	fromSliceRoundTrip(t, []int8{-128, 0, 127})
	fromSliceRoundTrip(t, []int16{-32768, 1, 32767})
	fromSliceRoundTrip(t, []int32{math.MinInt32, 2, math.MaxInt32})
	fromSliceRoundTrip(t, []int64{math.MinInt64, 3, math.MaxInt64})
	fromSliceRoundTrip(t, []uint8{0, 1, 255})
	fromSliceRoundTrip(t, []uint16{0, 1, 65535})
	fromSliceRoundTrip(t, []uint32{0, 1, math.MaxUint32})
	fromSliceRoundTrip(t, []uint64{0, 1, math.MaxUint64})
	fromSliceRoundTrip(t, []float32{-1.5, 0, float32(math.Inf(1))})
	fromSliceRoundTrip(t, []float64{-1.5, math.SmallestNonzeroFloat64, math.MaxFloat64})
	fromSliceRoundTrip(t, []complex64{1 + 2i, -3i})
	fromSliceRoundTrip(t, []complex128{1 + 2i, -3i})
	fromSliceRoundTrip(t, []celsius{-40, 100})
}

func TestFromSliceAs(t *testing.T) {
	c := snapshot()
	bits := []uint16{0x3C00, 0x4000}
	for _, dt := range []godlpack.DType{godlpack.Float16, godlpack.Bfloat16, godlpack.Int16} {
		s, err := producer.FromSliceAs(bits, dt, []int64{2}, nil, false, nil)
		require.NoError(t, err, "%v", dt)
		assert.Equal(t, dt, s.Tensor().DType)
		m, err := s.ExportLegacy()
		require.NoError(t, err)
		assert.Equal(t, godlpack.DLDataType(dt), m.DLTensor.DType)
		s.Close()
		deleteLegacy(m)
	}
	f8 := godlpack.DType{Code: godlpack.CodeFloat8E4M3FN, Bits: 8, Lanes: 1}
	s, err := producer.FromSliceAs([]uint8{0x38}, f8, nil, nil, true, nil)
	require.NoError(t, err)
	assert.Equal(t, f8, s.Tensor().DType)
	s.Close()

	for _, dt := range []godlpack.DType{
		godlpack.Float32, // size mismatch
		godlpack.Uint8,   // size mismatch
		{Code: godlpack.CodeFloat, Bits: 8, Lanes: 2},         // vector of the right size
		{Code: godlpack.CodeOpaqueHandle, Bits: 16, Lanes: 1}, // unknown
		{Code: godlpack.CodeFloat4E2M1FN, Bits: 4, Lanes: 4},  // sub-byte lanes, 2 bytes
	} {
		_, err := producer.FromSliceAs(bits, dt, []int64{2}, nil, false, nil)
		invalid.Require(t, err, godlpack.ErrDType, "%#v", dt)
	}
	c.RequireDelta(t, 0, 0)
	runtime.KeepAlive(bits)
}

func TestFromSliceErrors(t *testing.T) {
	c := snapshot()
	var finals atomic.Int32
	onFinal := func() { finals.Add(1) }
	data := make([]float32, 6)
	cases := []struct {
		name           string
		shape, strides []int64
		kind           error
	}{
		{"too big", []int64{7}, nil, godlpack.ErrShape},
		{"too big 2-d", []int64{2, 4}, nil, godlpack.ErrShape},
		{"strides reach past the end", []int64{3}, []int64{3}, godlpack.ErrShape},
		{"negative strides reach past the start", []int64{2, 3}, []int64{-4, 1}, godlpack.ErrShape},
		{"negative extent", []int64{-1}, nil, godlpack.ErrShape},
		{"shape overflow", []int64{1 << 40, 1 << 40}, nil, godlpack.ErrOverflow},
		{"stride overflow", []int64{2}, []int64{math.MaxInt64}, godlpack.ErrOverflow},
		{"INT64_MIN stride", []int64{2}, []int64{math.MinInt64}, godlpack.ErrOverflow},
		{"too few strides", []int64{2, 3}, []int64{1}, godlpack.ErrStrides},
		{"too many strides", []int64{6}, []int64{1, 1}, godlpack.ErrStrides},
		{"too many dims", make([]int64, 65), nil, godlpack.ErrNDim},
	}
	for _, tc := range cases {
		_, err := producer.FromSlice(data, tc.shape, tc.strides, false, onFinal)
		invalid.Require(t, err, tc.kind, tc.name)
	}
	// An empty slice can back only an empty view.
	_, err := producer.FromSlice([]int8{}, nil, nil, false, onFinal)
	invalid.Require(t, err, godlpack.ErrShape, "0-d needs one element")
	_, err = producer.FromSlice([]int8(nil), []int64{1}, nil, false, onFinal)
	invalid.Require(t, err, godlpack.ErrShape)
	assert.Zero(t, finals.Load(), "refusals never run onFinal")
	c.RequireDelta(t, 0, 0)
}

func TestFromSliceEmptyAndZeroD(t *testing.T) {
	c := snapshot()
	var finals atomic.Int32
	s, err := producer.FromSlice([]float64(nil), []int64{0, 3}, nil, false, func() { finals.Add(1) })
	require.NoError(t, err)
	assert.Nil(t, s.Tensor().Data, "no memory behind an empty nil slice")
	m, err := s.ExportVersioned(0)
	require.NoError(t, err)
	assert.Nil(t, m.DLTensor.Data)
	assert.Equal(t, []int64{0, 3}, m.DLTensor.ShapeSlice())
	assert.Equal(t, []int64{3, 1}, m.DLTensor.StridesSlice())
	s.Close()
	deleteVersioned(m)
	assert.EqualValues(t, 1, finals.Load(), "onFinal runs for empty tensors too")

	s, err = producer.FromSlice([]float64{42, 43}, nil, nil, false, nil)
	require.NoError(t, err)
	l, err := s.ExportLegacy()
	require.NoError(t, err)
	assert.Zero(t, l.DLTensor.NDim)
	assert.Equal(t, 42.0, *(*float64)(l.DLTensor.Data))
	s.Close()
	deleteLegacy(l)
	c.RequireDelta(t, 0, 0)
}

func TestFromSliceNegativeStridesOffset(t *testing.T) {
	c := snapshot()
	data := []int32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}
	// A 3x4 view walking the memory backwards in both dims.
	s, err := producer.FromSlice(data, []int64{3, 4}, []int64{-4, -1}, false, nil)
	require.NoError(t, err)
	tt := s.Tensor()
	assert.EqualValues(t, 11*4, tt.ByteOffset)
	assert.Equal(t, unsafe.Pointer(&data[11]), tt.First())
	lo, hi, err := tt.ByteSpan()
	require.NoError(t, err)
	assert.Equal(t, int64(-44), lo)
	assert.Equal(t, int64(4), hi)
	s.Close()
	// A view that uses only part of the slice backwards.
	s, err = producer.FromSlice(data, []int64{3}, []int64{-2}, false, nil)
	require.NoError(t, err)
	assert.Equal(t, unsafe.Pointer(&data[4]), s.Tensor().First())
	s.Close()
	c.RequireDelta(t, 0, 0)
	runtime.KeepAlive(data)
}
