package godlpack_test

import (
	"errors"
	"math"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/godlpack/godlpack"
	"github.com/godlpack/godlpack/internal/testkit/invalid"
)

func TestNumElements(t *testing.T) {
	cases := []struct {
		shape []int64
		want  int64
	}{
		{nil, 1},
		{[]int64{}, 1},
		{[]int64{0}, 0},
		{[]int64{7}, 7},
		{[]int64{2, 3, 4}, 24},
		{[]int64{1, 1, 1}, 1},
		{[]int64{3, 0, 5}, 0},
		{[]int64{math.MaxInt64}, math.MaxInt64},
		{[]int64{1 << 31, 1 << 31}, 1 << 62},
		{[]int64{math.MaxInt64, 1}, math.MaxInt64},
		// A zero extent makes the product 0 whatever the other extents are,
		// and wherever the zero is.
		{[]int64{0, math.MaxInt64, math.MaxInt64}, 0},
		{[]int64{math.MaxInt64, 0, math.MaxInt64}, 0},
		{[]int64{math.MaxInt64, math.MaxInt64, 0}, 0},
		{[]int64{1 << 62, 4, 0}, 0},
	}
	for _, c := range cases {
		n, err := godlpack.NumElements(c.shape)
		if assert.NoError(t, err, "%v", c.shape) {
			assert.Equal(t, c.want, n, "%v", c.shape)
		}
		tt := godlpack.Tensor{Shape: c.shape}
		n2, err := tt.NumElements()
		assert.NoError(t, err)
		assert.Equal(t, n, n2)
	}
}

func TestNumElementsErrors(t *testing.T) {
	for _, shape := range [][]int64{
		{1 << 32, 1 << 31},
		{math.MaxInt64, 2},
		{2, math.MaxInt64},
		{3037000500, 3037000500}, // just above sqrt(MaxInt64)
		{1 << 21, 1 << 21, 1 << 21},
		{65536, 65536, 65536, 65536},
	} {
		_, err := godlpack.NumElements(shape)
		invalid.Require(t, err, godlpack.ErrOverflow, "%v", shape)
	}
	// 3037000499² still fits.
	n, err := godlpack.NumElements([]int64{3037000499, 3037000499})
	require.NoError(t, err)
	assert.Equal(t, int64(3037000499*3037000499), n)

	for _, shape := range [][]int64{
		{-1},
		{2, -3},
		{0, -1},
		{-1, 0},
		{math.MinInt64},
		{math.MaxInt64, math.MaxInt64, -1}, // negative wins over overflow
	} {
		_, err := godlpack.NumElements(shape)
		invalid.Require(t, err, godlpack.ErrShape, "%v", shape)
		assert.False(t, errors.Is(err, godlpack.ErrOverflow))
	}
}

func TestCompactStrides(t *testing.T) {
	assert.Equal(t, []int64{}, godlpack.CompactStrides(nil))
	assert.Equal(t, []int64{1}, godlpack.CompactStrides([]int64{5}))
	assert.Equal(t, []int64{12, 4, 1}, godlpack.CompactStrides([]int64{2, 3, 4}))
	assert.Equal(t, []int64{3, 3, 1}, godlpack.CompactStrides([]int64{2, 1, 3}))
	// Zero extents do not zero out the outer strides.
	assert.Equal(t, []int64{4, 4, 1}, godlpack.CompactStrides([]int64{2, 0, 4}))

	tt := godlpack.Tensor{Shape: []int64{4, 5}}
	assert.Equal(t, []int64{5, 1}, tt.StridesOrCompact())
	tt.Strides = []int64{1, 4}
	assert.Equal(t, []int64{1, 4}, tt.StridesOrCompact())
	assert.Equal(t, 2, tt.NDim())
}

func TestElementSpan(t *testing.T) {
	cases := []struct {
		name           string
		shape, strides []int64
		lo, hi         int64
	}{
		{"0-d", nil, nil, 0, 0},
		{"0-d empty strides", []int64{}, []int64{}, 0, 0},
		{"compact nil strides", []int64{2, 3}, nil, 0, 5},
		{"compact explicit", []int64{2, 3}, []int64{3, 1}, 0, 5},
		{"transposed", []int64{3, 2}, []int64{1, 3}, 0, 5},
		{"negative 1-d", []int64{4}, []int64{-1}, -3, 0},
		{"negative stride 2", []int64{4}, []int64{-2}, -6, 0},
		{"mixed signs", []int64{3, 4}, []int64{-4, 1}, -8, 3},
		{"both negative", []int64{3, 4}, []int64{-4, -1}, -11, 0},
		{"broadcast zero stride", []int64{5, 3}, []int64{0, 1}, 0, 2},
		{"size-1 dims ignore odd strides", []int64{1, 3, 1}, []int64{99, 1, -7}, 0, 2},
		{"size-1 dim with INT64_MIN stride", []int64{1, 2}, []int64{math.MinInt64, 1}, 0, 1},
		{"size-1 dim with INT64_MAX stride", []int64{1}, []int64{math.MaxInt64}, 0, 0},
		{"zero-size", []int64{0, 5}, []int64{5, 1}, 0, -1},
		{"zero-size ignores strides", []int64{3, 0}, []int64{math.MinInt64, math.MaxInt64}, 0, -1},
		{"zero-size mismatched strides", []int64{0}, []int64{1, 2, 3}, 0, -1},
		{"largest positive", []int64{2}, []int64{math.MaxInt64}, 0, math.MaxInt64},
		{"largest negative", []int64{2}, []int64{-math.MaxInt64}, -math.MaxInt64, 0},
	}
	for _, c := range cases {
		lo, hi, err := godlpack.ElementSpan(c.shape, c.strides)
		if assert.NoError(t, err, c.name) {
			assert.Equal(t, c.lo, lo, c.name)
			assert.Equal(t, c.hi, hi, c.name)
		}
	}
}

func TestElementSpanErrors(t *testing.T) {
	cases := []struct {
		name           string
		shape, strides []int64
		kind           error
	}{
		{"negative shape", []int64{2, -1}, []int64{1, 1}, godlpack.ErrShape},
		{"shape overflow", []int64{1 << 40, 1 << 40}, nil, godlpack.ErrOverflow},
		{"INT64_MIN stride", []int64{2}, []int64{math.MinInt64}, godlpack.ErrOverflow},
		{"INT64_MIN stride 3 elems", []int64{3, 1}, []int64{math.MinInt64, 1}, godlpack.ErrOverflow},
		{"extent overflow", []int64{3}, []int64{math.MaxInt64}, godlpack.ErrOverflow},
		{"negative extent overflow", []int64{3}, []int64{-math.MaxInt64}, godlpack.ErrOverflow},
		{"sum overflow", []int64{2, 2}, []int64{math.MaxInt64 / 2, math.MaxInt64/2 + 2}, godlpack.ErrOverflow},
		{"negative sum overflow", []int64{2, 2}, []int64{-(math.MaxInt64 / 2), -(math.MaxInt64/2 + 3)}, godlpack.ErrOverflow},
		{"too few strides", []int64{2, 3}, []int64{1}, godlpack.ErrStrides},
		{"too many strides", []int64{2}, []int64{1, 1}, godlpack.ErrStrides},
	}
	for _, c := range cases {
		_, _, err := godlpack.ElementSpan(c.shape, c.strides)
		invalid.Require(t, err, c.kind, c.name)
	}
	// The sums that just fit are fine.
	lo, hi, err := godlpack.ElementSpan([]int64{2, 2}, []int64{math.MaxInt64 / 2, math.MaxInt64/2 + 1})
	require.NoError(t, err)
	assert.Equal(t, int64(0), lo)
	assert.Equal(t, int64(math.MaxInt64), hi)
	lo, hi, err = godlpack.ElementSpan([]int64{2, 2}, []int64{-(math.MaxInt64 / 2), -(math.MaxInt64/2 + 2)})
	require.NoError(t, err)
	assert.Equal(t, int64(math.MinInt64), lo)
	assert.Equal(t, int64(0), hi)
	// ... but such a span has no byte size.
	tt := godlpack.Tensor{DType: godlpack.Int8, Shape: []int64{2, 2}, Strides: []int64{-(math.MaxInt64 / 2), -(math.MaxInt64/2 + 2)}}
	_, _, err = tt.ByteSpan()
	invalid.Require(t, err, godlpack.ErrOverflow)
}

func TestByteSpan(t *testing.T) {
	f4 := godlpack.DType{Code: godlpack.CodeFloat4E2M1FN, Bits: 4, Lanes: 1}
	f6 := godlpack.DType{Code: godlpack.CodeFloat6E2M3FN, Bits: 6, Lanes: 1}
	cases := []struct {
		name           string
		dt             godlpack.DType
		shape, strides []int64
		lo, hi         int64
	}{
		{"0-d float64", godlpack.Float64, nil, nil, 0, 8},
		{"compact float32", godlpack.Float32, []int64{2, 3}, nil, 0, 24},
		{"transposed", godlpack.Float32, []int64{3, 2}, []int64{1, 3}, 0, 24},
		{"negative", godlpack.Int16, []int64{4}, []int64{-1}, -6, 2},
		{"negative stride 3", godlpack.Complex128, []int64{3}, []int64{-3}, -96, 16},
		{"mixed", godlpack.Float64, []int64{2, 3}, []int64{-3, 1}, -24, 24},
		{"zero-size", godlpack.Float64, []int64{0, 3}, []int64{-3, 1}, 0, 0},
		{"size-1 odd stride", godlpack.Uint8, []int64{1, 4}, []int64{-1000, 1}, 0, 4},
		{"packed float4 odd count", f4, []int64{3}, nil, 0, 2},
		{"packed float4 even count", f4, []int64{4}, nil, 0, 2},
		{"packed float6", f6, []int64{4}, nil, 0, 3},
		{"packed float6 0-d", f6, nil, nil, 0, 1},
		// Element -1 of a packed float4 occupies bits -4..-1, i.e. byte -1.
		{"packed float4 negative", f4, []int64{2}, []int64{-1}, -1, 1},
		{"packed float4 negative 3", f4, []int64{3}, []int64{-1}, -1, 1},
		{"packed float6 negative", f6, []int64{2}, []int64{-1}, -1, 1},
		{"packed float6 negative 5", f6, []int64{5}, []int64{-1}, -3, 1},
		{"vector lanes", godlpack.DType{Code: godlpack.CodeFloat, Bits: 32, Lanes: 4}, []int64{2}, nil, 0, 32},
	}
	for _, c := range cases {
		tt := godlpack.Tensor{DType: c.dt, Shape: c.shape, Strides: c.strides}
		lo, hi, err := tt.ByteSpan()
		if assert.NoError(t, err, c.name) {
			assert.Equal(t, c.lo, lo, c.name)
			assert.Equal(t, c.hi, hi, c.name)
		}
	}
}

func TestByteSpanErrors(t *testing.T) {
	// Elements fit in int64 but bytes do not.
	tt := godlpack.Tensor{DType: godlpack.Float64, Shape: []int64{1 << 60}}
	_, _, err := tt.ByteSpan()
	invalid.Require(t, err, godlpack.ErrOverflow)

	tt = godlpack.Tensor{DType: godlpack.Float64, Shape: []int64{1 << 56}}
	lo, hi, err := tt.ByteSpan()
	require.NoError(t, err)
	assert.Equal(t, int64(0), lo)
	assert.Equal(t, int64(1<<59), hi)

	tt = godlpack.Tensor{DType: godlpack.Int8, Shape: []int64{2}, Strides: []int64{math.MaxInt64}}
	_, _, err = tt.ByteSpan()
	invalid.Require(t, err, godlpack.ErrOverflow, "hi+1 overflows")

	tt = godlpack.Tensor{DType: godlpack.Int16, Shape: []int64{2}, Strides: []int64{-(1 << 62)}}
	_, _, err = tt.ByteSpan()
	invalid.Require(t, err, godlpack.ErrOverflow, "negative byte span overflows")

	tt = godlpack.Tensor{DType: godlpack.Int8, Shape: []int64{-1}}
	_, _, err = tt.ByteSpan()
	invalid.Require(t, err, godlpack.ErrShape)
}

func TestIsCompact(t *testing.T) {
	cases := []struct {
		name           string
		shape, strides []int64
		want           bool
	}{
		{"nil strides", []int64{2, 3}, nil, true},
		{"0-d", nil, nil, true},
		{"0-d empty strides", []int64{}, []int64{}, true},
		{"row-major", []int64{2, 3}, []int64{3, 1}, true},
		{"transposed", []int64{3, 2}, []int64{1, 3}, false},
		{"negative", []int64{3}, []int64{-1}, false},
		{"padded rows", []int64{2, 3}, []int64{4, 1}, false},
		{"broadcast", []int64{2, 3}, []int64{0, 1}, false},
		{"size-1 dims odd strides", []int64{1, 3, 1}, []int64{42, 1, -5}, true},
		{"size-1 leading", []int64{1, 4}, []int64{1, 1}, true},
		{"size-1 middle", []int64{2, 1, 3}, []int64{3, 7, 1}, true},
		{"all size-1", []int64{1, 1}, []int64{0, 0}, true},
		{"single element 1-d", []int64{1}, []int64{math.MinInt64}, true},
		{"zero-size any strides", []int64{0, 3}, []int64{-9, 5}, true},
		{"zero-size mismatched strides", []int64{2, 0}, []int64{1}, true},
		{"inner stride 2", []int64{4}, []int64{2}, false},
		{"negative shape", []int64{-1}, []int64{1}, false},
		{"overflowing shape", []int64{1 << 40, 1 << 40}, []int64{1 << 40, 1}, false},
		{"too few strides", []int64{2, 3}, []int64{1}, false},
		{"too many strides", []int64{6}, []int64{1, 1}, false},
	}
	for _, c := range cases {
		var got bool
		require.NotPanics(t, func() { got = godlpack.IsCompact(c.shape, c.strides) }, c.name)
		assert.Equal(t, c.want, got, c.name)
		tt := godlpack.Tensor{Shape: c.shape, Strides: c.strides}
		assert.Equal(t, c.want, tt.IsCompact(), c.name)
	}
}

func TestFirst(t *testing.T) {
	buf := make([]byte, 16)
	tt := godlpack.Tensor{Data: unsafe.Pointer(&buf[0]), ByteOffset: 5}
	assert.Equal(t, unsafe.Pointer(&buf[5]), tt.First())
}

// A Tensor is a multiple of 16 bytes (80), so that Go copies it in whole
// 16-byte moves: a copy that ended in two overlapping moves (at 88 bytes)
// made the next copy of it stall on store forwarding.
func TestTensorSizeIsWholeSixteenByteMoves(t *testing.T) {
	want := uintptr(80) // 64-bit platforms; 52 on 32-bit ones
	if unsafe.Sizeof(uintptr(0)) == 4 {
		want = 52
	}
	assert.Equal(t, want, unsafe.Sizeof(godlpack.Tensor{}))
}
