package consumer_test

import (
	"encoding/binary"
	"math"
	"runtime"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/godlpack/godlpack"
	"github.com/godlpack/godlpack/consumer"
	"github.com/godlpack/godlpack/producer"
)

// exportImport exports s both ways (legacy only when allowed) and imports
// each export, returning the imported tensors.
func exportImport(t *testing.T, s *producer.Source) []*consumer.Tensor {
	t.Helper()
	var out []*consumer.Tensor
	v, err := s.ExportVersioned(0)
	require.NoError(t, err)
	tv, err := consumer.ImportVersioned(v)
	require.NoError(t, err)
	assert.True(t, tv.Versioned)
	assert.Equal(t, godlpack.APIVersion, tv.Version)
	out = append(out, tv)
	if !s.Tensor().ReadOnly {
		l, err := s.ExportLegacy()
		require.NoError(t, err)
		tl, err := consumer.ImportLegacy(l)
		require.NoError(t, err)
		assert.False(t, tl.Versioned)
		assert.Equal(t, godlpack.Version{}, tl.Version)
		assert.Zero(t, tl.Flags)
		assert.False(t, tl.ReadOnly)
		out = append(out, tl)
	}
	for _, tt := range out {
		src := s.Tensor()
		assert.Equal(t, src.DType, tt.DType)
		assert.Equal(t, src.Device, tt.Device)
		assert.Equal(t, src.Data, tt.Data)
		assert.Equal(t, src.ByteOffset, tt.ByteOffset)
		assert.Equal(t, len(src.Shape), len(tt.Shape))
		if len(src.Shape) > 0 {
			assert.Equal(t, src.Shape, tt.Shape)
			assert.Equal(t, src.StridesOrCompact(), tt.Strides, "exports always carry strides")
		}
	}
	return out
}

func closeAll(t *testing.T, ts []*consumer.Tensor) {
	t.Helper()
	for _, tt := range ts {
		require.NoError(t, tt.Close())
	}
}

func roundTripSlice[T godlpack.Element](t *testing.T, data []T, view func(*consumer.Tensor) ([]T, error)) {
	t.Helper()
	c := snapshot()
	want := append([]T(nil), data...)
	shape := []int64{int64(len(data))}
	for _, readOnly := range []bool{false, true} {
		s, err := producer.FromSlice(data, shape, nil, readOnly, nil)
		require.NoError(t, err)
		ts := exportImport(t, s)
		s.Close()
		for _, tt := range ts {
			assert.Equal(t, readOnly, tt.ReadOnly)
			got, err := view(tt)
			require.NoError(t, err)
			assert.Equal(t, want, got)
			got, err = consumer.View[T](tt)
			require.NoError(t, err)
			assert.Equal(t, want, got)
			assert.Equal(t, unsafe.Pointer(&data[0]), unsafe.Pointer(&got[0]), "zero-copy")
			_, err = consumer.MutableView[T](tt)
			if readOnly {
				assert.ErrorIs(t, err, godlpack.ErrFlags)
			} else {
				assert.NoError(t, err)
			}
			b, err := tt.Copy()
			require.NoError(t, err)
			assert.Equal(t, unsafe.Slice((*byte)(unsafe.Pointer(&want[0])), len(want)*int(unsafe.Sizeof(want[0]))), b)
		}
		c.RequireDelta(t, 1, int64(len(ts)))
		closeAll(t, ts)
		c.RequireDelta(t, 0, 0)
	}
	runtime.KeepAlive(data)
}

func TestRoundTripFromSliceEveryGoType(t *testing.T) {
	roundTripSlice(t, []bool{true, false, true}, (*consumer.Tensor).AsBools)
	roundTripSlice(t, []int8{-128, 0, 127}, (*consumer.Tensor).AsInt8s)
	roundTripSlice(t, []int16{-32768, 1, 32767}, (*consumer.Tensor).AsInt16s)
	roundTripSlice(t, []int32{math.MinInt32, 2, math.MaxInt32}, (*consumer.Tensor).AsInt32s)
	roundTripSlice(t, []int64{math.MinInt64, 3, math.MaxInt64}, (*consumer.Tensor).AsInt64s)
	roundTripSlice(t, []uint8{0, 1, 255}, (*consumer.Tensor).AsUint8s)
	roundTripSlice(t, []uint16{0, 1, 65535}, (*consumer.Tensor).AsUint16s)
	roundTripSlice(t, []uint32{0, 1, math.MaxUint32}, (*consumer.Tensor).AsUint32s)
	roundTripSlice(t, []uint64{0, 1, math.MaxUint64}, (*consumer.Tensor).AsUint64s)
	roundTripSlice(t, []float32{-1.5, 0, float32(math.Inf(1))}, (*consumer.Tensor).AsFloat32s)
	roundTripSlice(t, []float64{-1.5, math.SmallestNonzeroFloat64, math.MaxFloat64}, (*consumer.Tensor).AsFloat64s)
	roundTripSlice(t, []complex64{1 + 2i, -3i}, (*consumer.Tensor).AsComplex64s)
	roundTripSlice(t, []complex128{1 + 2i, -3i, 5}, (*consumer.Tensor).AsComplex128s)
}

func TestViewWrongType(t *testing.T) {
	c := snapshot()
	data := []float32{1, 2}
	s, err := producer.FromSlice(data, []int64{2}, nil, false, nil)
	require.NoError(t, err)
	ts := exportImport(t, s)
	s.Close()
	for _, tt := range ts {
		_, err = tt.AsFloat64s()
		assert.ErrorIs(t, err, godlpack.ErrDType)
		_, err = tt.AsInt32s()
		assert.ErrorIs(t, err, godlpack.ErrDType)
		_, err = tt.AsUint32s()
		assert.ErrorIs(t, err, godlpack.ErrDType)
	}
	closeAll(t, ts)
	c.RequireDelta(t, 0, 0)
	runtime.KeepAlive(data)
}

// decode reads element i of a compact buffer as float64 (real part).
func decode(dt godlpack.DType, b []byte, i int) float64 {
	le := binary.LittleEndian
	size := int(dt.ItemSize())
	e := b[i*size : (i+1)*size]
	switch dt {
	case godlpack.Bool:
		if e[0] != 0 {
			return 1
		}
		return 0
	case godlpack.Int8:
		return float64(int8(e[0]))
	case godlpack.Uint8:
		return float64(e[0])
	case godlpack.Int16:
		return float64(int16(le.Uint16(e)))
	case godlpack.Uint16:
		return float64(le.Uint16(e))
	case godlpack.Int32:
		return float64(int32(le.Uint32(e)))
	case godlpack.Uint32:
		return float64(le.Uint32(e))
	case godlpack.Int64:
		return float64(int64(le.Uint64(e)))
	case godlpack.Uint64:
		return float64(le.Uint64(e))
	case godlpack.Float16:
		return halfValue(le.Uint16(e))
	case godlpack.Bfloat16:
		return float64(math.Float32frombits(uint32(le.Uint16(e)) << 16))
	case godlpack.Float32, godlpack.Complex64:
		return float64(math.Float32frombits(le.Uint32(e)))
	case godlpack.Float64, godlpack.Complex128:
		return math.Float64frombits(le.Uint64(e))
	}
	panic(dt.String())
}

func halfValue(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	e := int(h>>10) & 0x1f
	m := float64(h & 0x3ff)
	if e == 0 {
		return sign * math.Ldexp(m, -24)
	}
	if e == 0x1f {
		return sign * math.Inf(1)
	}
	return sign * math.Ldexp(1024+m, e-25)
}

var standard = []godlpack.DType{
	godlpack.Bool, godlpack.Int8, godlpack.Int16, godlpack.Int32, godlpack.Int64,
	godlpack.Uint8, godlpack.Uint16, godlpack.Uint32, godlpack.Uint64,
	godlpack.Float16, godlpack.Float32, godlpack.Float64, godlpack.Bfloat16,
	godlpack.Complex64, godlpack.Complex128,
}

func TestRoundTripEmptyZerosEveryDType(t *testing.T) {
	c := snapshot()
	for _, dt := range godlpack.DTypes() {
		for _, shape := range [][]int64{nil, {0}, {5}, {2, 3}, {2, 0, 3}} {
			s, err := producer.Empty(dt, shape...)
			require.NoError(t, err, "%v", dt)
			assert.Zero(t, uintptr(s.Tensor().Data)%64)
			ts := exportImport(t, s)
			s.Close()
			for _, tt := range ts {
				assert.Equal(t, dt, tt.DType)
				n, err := tt.NumElements()
				require.NoError(t, err)
				b, err := tt.Copy()
				require.NoError(t, err, "%v %v", dt, shape)
				assert.EqualValues(t, (n*int64(dt.Bits)+7)/8, len(b))
			}
			closeAll(t, ts)

			if dt.Code == godlpack.CodeFloat8E8M0FNU {
				continue
			}
			s, err = producer.Zeros(dt, shape...)
			require.NoError(t, err, "%v", dt)
			ts = exportImport(t, s)
			s.Close()
			for _, tt := range ts {
				b, err := tt.Copy()
				require.NoError(t, err)
				assert.Equal(t, make([]byte, len(b)), b, "%v zeros", dt)
			}
			closeAll(t, ts)
		}
	}
	c.RequireDelta(t, 0, 0)
}

func TestRoundTripFullArangeEveryDType(t *testing.T) {
	c := snapshot()
	for _, dt := range standard {
		s, err := producer.Full(dt, 3, 2, 5)
		require.NoError(t, err, "%v", dt)
		ts := exportImport(t, s)
		s.Close()
		for _, tt := range ts {
			b, err := tt.Copy()
			require.NoError(t, err)
			require.EqualValues(t, 10*dt.ItemSize(), len(b))
			for i := 0; i < 10; i++ {
				want := 3.0
				if dt == godlpack.Bool {
					want = 1
				}
				assert.Equal(t, want, decode(dt, b, i), "%v full element %d", dt, i)
			}
		}
		closeAll(t, ts)

		s, err = producer.Arange(dt, 0, 7, 1)
		require.NoError(t, err, "%v", dt)
		ts = exportImport(t, s)
		s.Close()
		for _, tt := range ts {
			require.Equal(t, []int64{7}, tt.Shape)
			b, err := tt.Copy()
			require.NoError(t, err)
			for i := 0; i < 7; i++ {
				want := float64(i)
				if dt == godlpack.Bool && i > 0 {
					want = 1
				}
				assert.Equal(t, want, decode(dt, b, i), "%v arange element %d", dt, i)
			}
		}
		closeAll(t, ts)
	}
	c.RequireDelta(t, 0, 0)
}

func TestRoundTripHalfBitPatterns(t *testing.T) {
	c := snapshot()
	cases := []struct {
		dt   godlpack.DType
		v    float64
		bits uint16
	}{
		{godlpack.Float16, 1, 0x3C00},
		{godlpack.Float16, -1, 0xBC00},
		{godlpack.Float16, 65504, 0x7BFF},
		{godlpack.Float16, 1e5, 0x7C00},
		{godlpack.Float16, math.Ldexp(1, -24), 0x0001},
		{godlpack.Float16, math.Ldexp(1, -14), 0x0400},
		{godlpack.Float16, math.Ldexp(5, -25), 0x0002},
		{godlpack.Float16, 1 + math.Ldexp(1, -11), 0x3C00},
		{godlpack.Float16, 1 + 3*math.Ldexp(1, -11), 0x3C02},
		{godlpack.Float16, 0.1, 0x2E66},
		{godlpack.Bfloat16, 1, 0x3F80},
		{godlpack.Bfloat16, -2, 0xC000},
		{godlpack.Bfloat16, 65504, 0x4780},
		{godlpack.Bfloat16, math.Ldexp(1, -133), 0x0001},
		{godlpack.Bfloat16, 1 + math.Ldexp(1, -8), 0x3F80},
		{godlpack.Bfloat16, 1 + 3*math.Ldexp(1, -8), 0x3F82},
		{godlpack.Bfloat16, 0.1, 0x3DCD},
	}
	for _, tc := range cases {
		s, err := producer.Full(tc.dt, complex(tc.v, 0), 3)
		require.NoError(t, err)
		ts := exportImport(t, s)
		s.Close()
		for _, tt := range ts {
			b, err := tt.Copy()
			require.NoError(t, err)
			for i := 0; i < 3; i++ {
				assert.Equal(t, tc.bits, binary.LittleEndian.Uint16(b[2*i:]), "%v(%g)", tc.dt, tc.v)
			}
		}
		closeAll(t, ts)
	}
	// Arange in half precision: 0.25 steps are exact.
	s, err := producer.Arange(godlpack.Float16, -1, 1, 0.25)
	require.NoError(t, err)
	ts := exportImport(t, s)
	s.Close()
	want := []uint16{0xBC00, 0xBA00, 0xB800, 0xB400, 0x0000, 0x3400, 0x3800, 0x3A00}
	for _, tt := range ts {
		b, err := tt.Copy()
		require.NoError(t, err)
		got := make([]uint16, len(want))
		for i := range got {
			got[i] = binary.LittleEndian.Uint16(b[2*i:])
		}
		assert.Equal(t, want, got)
	}
	closeAll(t, ts)
	c.RequireDelta(t, 0, 0)
}

func TestRoundTripStrided(t *testing.T) {
	c := snapshot()
	const rows, cols = 3, 4
	data := make([]int32, rows*cols)
	for i := range data {
		data[i] = int32(i)
	}
	cases := []struct {
		name           string
		shape, strides []int64
		want           []int32
		compact        bool
	}{
		{"reversed", []int64{12}, []int64{-1}, []int32{11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0}, false},
		{"column-major view", []int64{rows, cols}, []int64{1, rows},
			[]int32{0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11}, false},
		{"transpose", []int64{cols, rows}, []int64{1, cols},
			[]int32{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}, false},
		{"rows reversed", []int64{rows, cols}, []int64{-cols, 1},
			[]int32{8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3}, false},
		{"both reversed", []int64{rows, cols}, []int64{-cols, -1},
			[]int32{11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0}, false},
		{"every other", []int64{6}, []int64{2}, []int32{0, 2, 4, 6, 8, 10}, false},
		{"every third backwards", []int64{4}, []int64{-3}, []int32{9, 6, 3, 0}, false},
		{"broadcast", []int64{2, 3}, []int64{0, 1}, []int32{0, 1, 2, 0, 1, 2}, false},
		{"size-1 dims odd strides", []int64{1, 12, 1}, []int64{-77, 1, 1000}, []int32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, true},
		{"3-d transposed", []int64{2, 3, 2}, []int64{1, 4, 2}, []int32{0, 2, 4, 6, 8, 10, 1, 3, 5, 7, 9, 11}, false},
		{"0-d", nil, nil, []int32{0}, true},
		{"zero-size strided", []int64{0, 3}, []int64{-5, 7}, []int32{}, true},
	}
	for _, tc := range cases {
		s, err := producer.FromSlice(data, tc.shape, tc.strides, false, nil)
		require.NoError(t, err, tc.name)
		ts := exportImport(t, s)
		s.Close()
		for _, tt := range ts {
			assert.Equal(t, tc.compact, tt.IsCompact(), tc.name)
			b, err := tt.Copy()
			require.NoError(t, err, tc.name)
			got := make([]int32, len(b)/4)
			for i := range got {
				got[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
			}
			assert.Equal(t, tc.want, got, tc.name)

			// CopyCompact into a larger buffer leaves the tail alone.
			dst := make([]byte, len(b)+4)
			for i := range dst {
				dst[i] = 0xEE
			}
			require.NoError(t, consumer.CopyCompact(dst, &tt.Tensor))
			assert.Equal(t, b, dst[:len(b)])
			assert.Equal(t, []byte{0xEE, 0xEE, 0xEE, 0xEE}, dst[len(b):])

			v, err := tt.AsInt32s()
			if tc.compact {
				require.NoError(t, err, tc.name)
				assert.Equal(t, tc.want, v, tc.name)
			} else {
				assert.ErrorIs(t, err, godlpack.ErrStrides, tc.name)
			}
		}
		closeAll(t, ts)
	}
	c.RequireDelta(t, 0, 0)
	runtime.KeepAlive(data)
}

func TestRoundTripZeroSizeAndZeroD(t *testing.T) {
	c := snapshot()
	s, err := producer.FromSlice([]float32{}, []int64{0, 3}, nil, false, nil)
	require.NoError(t, err)
	ts := exportImport(t, s)
	s.Close()
	for _, tt := range ts {
		assert.Equal(t, []int64{0, 3}, tt.Shape)
		v, err := tt.AsFloat32s()
		require.NoError(t, err)
		assert.Empty(t, v)
		b, err := tt.Copy()
		require.NoError(t, err)
		assert.Empty(t, b)
	}
	closeAll(t, ts)

	data := []float64{42}
	s, err = producer.FromSlice(data, nil, nil, false, nil)
	require.NoError(t, err)
	ts = exportImport(t, s)
	s.Close()
	for _, tt := range ts {
		assert.Zero(t, tt.NDim())
		v, err := tt.AsFloat64s()
		require.NoError(t, err)
		assert.Equal(t, []float64{42}, v)
	}
	closeAll(t, ts)
	c.RequireDelta(t, 0, 0)
	runtime.KeepAlive(data)
}

func TestReimportFlags(t *testing.T) {
	c := snapshot()
	s, err := producer.FromSlice([]int8{1}, []int64{1}, nil, true, nil)
	require.NoError(t, err)
	m, err := s.ExportVersioned(godlpack.FlagIsCopied)
	require.NoError(t, err)
	s.Close()
	tt, err := consumer.Import(unsafe.Pointer(m), true)
	require.NoError(t, err)
	assert.Equal(t, godlpack.FlagReadOnly|godlpack.FlagIsCopied, tt.Flags)
	assert.True(t, tt.ReadOnly)
	_, err = tt.AsInt8s()
	assert.NoError(t, err)
	_, err = consumer.MutableView[int8](tt)
	assert.ErrorIs(t, err, godlpack.ErrFlags)
	require.NoError(t, tt.Close())
	c.RequireDelta(t, 0, 0)
}
