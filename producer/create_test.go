package producer_test

import (
	"encoding/binary"
	"math"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/godlpack/godlpack"
	"github.com/godlpack/godlpack/internal/testkit/invalid"
	"github.com/godlpack/godlpack/producer"
)

// standard are the dtypes Full and Arange can write.
var standard = []godlpack.DType{
	godlpack.Bool, godlpack.Int8, godlpack.Int16, godlpack.Int32, godlpack.Int64,
	godlpack.Uint8, godlpack.Uint16, godlpack.Uint32, godlpack.Uint64,
	godlpack.Float16, godlpack.Float32, godlpack.Float64, godlpack.Bfloat16,
	godlpack.Complex64, godlpack.Complex128,
}

func isStandard(dt godlpack.DType) bool {
	for _, s := range standard {
		if s == dt {
			return true
		}
	}
	return false
}

func TestEmptyEveryDType(t *testing.T) {
	shapes := [][]int64{nil, {0}, {3, 0, 2}, {7}, {3, 5}, {2, 3, 4}, {1, 1, 129}}
	for _, dt := range godlpack.DTypes() {
		for _, shape := range shapes {
			c := snapshot()
			s, err := producer.Empty(dt, shape...)
			require.NoError(t, err, "%v %v", dt, shape)
			c.RequireDelta(t, 1, 0)
			tt := s.Tensor()
			assert.Equal(t, dt, tt.DType)
			assert.Equal(t, godlpack.CPUDevice, tt.Device)
			assert.Equal(t, nilIfEmpty(shape), nilIfEmpty(tt.Shape))
			assert.Nil(t, tt.Strides)
			assert.Zero(t, tt.ByteOffset)
			assert.False(t, tt.ReadOnly)
			require.NotNil(t, tt.Data, "even empty tensors get memory")
			assert.Zero(t, uintptr(tt.Data)%64, "%v %v: data %p is not 64-byte aligned", dt, shape, tt.Data)

			m, err := s.ExportVersioned(0)
			require.NoError(t, err)
			c.RequireDelta(t, 1, 1)
			checkExported(t, &m.DLTensor, tt)
			assert.Equal(t, godlpack.DLPackVersion{Major: 1, Minor: 3}, m.Version)
			assert.Zero(t, m.Flags)
			assert.NotNil(t, m.ManagerCtx)
			// The memory is writable over its whole span.
			b := dataBytes(t, &m.DLTensor)
			for i := range b {
				b[i] = byte(i)
			}
			s.Close()
			c.RequireDelta(t, 1, 1, "the export keeps the memory alive")
			for i := range b {
				require.Equal(t, byte(i), b[i])
			}
			deleteVersioned(m)
			c.RequireDelta(t, 0, 0)
		}
	}
}

func TestEmptyAlignmentManySizes(t *testing.T) {
	c := snapshot()
	var sources []*producer.Source
	for n := int64(0); n < 200; n++ {
		s, err := producer.Empty(godlpack.Uint8, n)
		require.NoError(t, err)
		assert.Zero(t, uintptr(s.Tensor().Data)%64, "size %d", n)
		sources = append(sources, s)
	}
	// Distinct allocations do not overlap.
	for i := 1; i < len(sources); i++ {
		assert.NotEqual(t, sources[i-1].Tensor().Data, sources[i].Tensor().Data)
	}
	for _, s := range sources {
		s.Close()
	}
	c.RequireDelta(t, 0, 0)
}

func TestEmptyErrors(t *testing.T) {
	c := snapshot()
	_, err := producer.Empty(godlpack.DType{Code: godlpack.CodeFloat, Bits: 32, Lanes: 4}, 2)
	invalid.Require(t, err, godlpack.ErrDType)
	_, err = producer.Empty(godlpack.DType{Code: godlpack.CodeOpaqueHandle, Bits: 64, Lanes: 1}, 2)
	invalid.Require(t, err, godlpack.ErrDType)
	_, err = producer.Empty(godlpack.DType{Code: 99, Bits: 8, Lanes: 1}, 2)
	invalid.Require(t, err, godlpack.ErrDType)
	_, err = producer.Empty(godlpack.Float32, 2, -1)
	invalid.Require(t, err, godlpack.ErrShape)
	_, err = producer.Empty(godlpack.Float32, 1<<40, 1<<40)
	invalid.Require(t, err, godlpack.ErrOverflow)
	_, err = producer.Empty(godlpack.Float64, 1<<61)
	invalid.Require(t, err, godlpack.ErrOverflow)
	_, err = producer.Empty(godlpack.Uint8, make([]int64, 65)...)
	invalid.Require(t, err, godlpack.ErrNDim)
	c.RequireDelta(t, 0, 0, "refusals allocate nothing")

	// 64 dimensions are fine.
	shape := make([]int64, 64)
	for i := range shape {
		shape[i] = 1
	}
	s, err := producer.Empty(godlpack.Uint8, shape...)
	require.NoError(t, err)
	m, err := s.ExportLegacy()
	require.NoError(t, err)
	assert.EqualValues(t, 64, m.DLTensor.NDim)
	assert.Equal(t, shape, m.DLTensor.ShapeSlice())
	s.Close()
	deleteLegacy(m)
	c.RequireDelta(t, 0, 0)
}

func TestZerosEveryDType(t *testing.T) {
	c := snapshot()
	for _, dt := range godlpack.DTypes() {
		if dt.Code == godlpack.CodeFloat8E8M0FNU {
			_, err := producer.Zeros(dt, 4)
			invalid.Require(t, err, godlpack.ErrDType, "float8_e8m0fnu has no zero")
			continue
		}
		// Dirty the allocator first so zeros cannot come for free.
		for i := 0; i < 4; i++ {
			d, err := producer.Empty(dt, 37, 3)
			require.NoError(t, err)
			b := unsafe.Slice((*byte)(d.Tensor().Data), 37*3*dt.BitsPerElement()/8)
			for j := range b {
				b[j] = 0xA5
			}
			d.Close()
		}
		s, err := producer.Zeros(dt, 37, 3)
		require.NoError(t, err, "%v", dt)
		_, hi, err := s.Tensor().ByteSpan()
		require.NoError(t, err)
		assert.Equal(t, (37*3*dt.BitsPerElement()+7)/8, hi)
		b := unsafe.Slice((*byte)(s.Tensor().Data), hi)
		assert.Equal(t, make([]byte, hi), b, "%v", dt)
		s.Close()
	}
	_, err := producer.Zeros(godlpack.Float32, -3)
	invalid.Require(t, err, godlpack.ErrShape)
	s, err := producer.Zeros(godlpack.Float32)
	require.NoError(t, err)
	assert.Equal(t, []byte{0, 0, 0, 0}, unsafe.Slice((*byte)(s.Tensor().Data), 4))
	s.Close()
	c.RequireDelta(t, 0, 0)
}

// encode is an independent little-endian encoding of v as one element of dt.
// reference is the expected bytes of one element: computed independently for
// the standard dtypes, and by the Encoder for the float8 formats (whose codes
// minifloat_test.go and tests/runtime/test_float8.py check against ml_dtypes).
func reference(t *testing.T, dt godlpack.DType, v float64) []byte {
	if isStandard(dt) {
		return encode(dt, v)
	}
	enc, err := producer.Encoder(dt)
	require.NoError(t, err, "%v", dt)
	b := make([]byte, dt.ItemSize())
	enc(b, complex(v, 0))
	return b
}

func encode(dt godlpack.DType, v float64) []byte {
	le := binary.LittleEndian
	switch dt {
	case godlpack.Bool:
		if v != 0 {
			return []byte{1}
		}
		return []byte{0}
	case godlpack.Int8:
		return []byte{byte(int8(v))}
	case godlpack.Uint8:
		return []byte{uint8(v)}
	case godlpack.Int16:
		return le.AppendUint16(nil, uint16(int16(v)))
	case godlpack.Uint16:
		return le.AppendUint16(nil, uint16(v))
	case godlpack.Int32:
		return le.AppendUint32(nil, uint32(int32(v)))
	case godlpack.Uint32:
		return le.AppendUint32(nil, uint32(v))
	case godlpack.Int64:
		return le.AppendUint64(nil, uint64(int64(v)))
	case godlpack.Uint64:
		return le.AppendUint64(nil, uint64(v))
	case godlpack.Float16:
		return le.AppendUint16(nil, producer.Float16Bits(v))
	case godlpack.Bfloat16:
		return le.AppendUint16(nil, producer.Bfloat16Bits(v))
	case godlpack.Float32:
		return le.AppendUint32(nil, math.Float32bits(float32(v)))
	case godlpack.Float64:
		return le.AppendUint64(nil, math.Float64bits(v))
	case godlpack.Complex64:
		return le.AppendUint32(le.AppendUint32(nil, math.Float32bits(float32(v))), 0)
	case godlpack.Complex128:
		return le.AppendUint64(le.AppendUint64(nil, math.Float64bits(v)), 0)
	}
	panic(dt.String())
}

func TestFullEveryDType(t *testing.T) {
	c := snapshot()
	for _, dt := range godlpack.DTypes() {
		for _, v := range []float64{0, 1, 7, 100} {
			s, err := producer.Full(dt, complex(v, 0), 3, 4)
			if dt.IsSubByte() {
				invalid.Require(t, err, godlpack.ErrDType, "%v", dt)
				continue
			}
			require.NoError(t, err, "%v", dt)
			b := unsafe.Slice((*byte)(s.Tensor().Data), 12*dt.ItemSize())
			want := reference(t, dt, v)
			for i := 0; i < 12; i++ {
				require.Equal(t, want, b[i*len(want):(i+1)*len(want)], "%v full of %v, element %d", dt, v, i)
			}
			s.Close()
		}
	}
	c.RequireDelta(t, 0, 0, "refused Full closes what it allocated")
}

func TestFullValues(t *testing.T) {
	le := binary.LittleEndian
	read := func(s *producer.Source, n int) []byte {
		return unsafe.Slice((*byte)(s.Tensor().Data), n)
	}
	check := func(dt godlpack.DType, v complex128, want []byte) {
		t.Helper()
		s, err := producer.Full(dt, v, 2)
		require.NoError(t, err)
		defer s.Close()
		got := read(s, 2*len(want))
		assert.Equal(t, want, got[:len(want)], "%v <- %v", dt, v)
		assert.Equal(t, want, got[len(want):], "%v <- %v", dt, v)
	}
	check(godlpack.Float16, 1, le.AppendUint16(nil, 0x3C00))
	check(godlpack.Float16, 65504, le.AppendUint16(nil, 0x7BFF))
	check(godlpack.Float16, 65520, le.AppendUint16(nil, 0x7C00))
	check(godlpack.Float16, complex(math.Ldexp(1, -24), 0), le.AppendUint16(nil, 0x0001))
	check(godlpack.Float16, complex(math.Ldexp(3, -25), 0), le.AppendUint16(nil, 0x0002))
	check(godlpack.Float16, complex(1+math.Ldexp(1, -11), 0), le.AppendUint16(nil, 0x3C00))
	check(godlpack.Float16, -2, le.AppendUint16(nil, 0xC000))
	check(godlpack.Bfloat16, 1, le.AppendUint16(nil, 0x3F80))
	check(godlpack.Bfloat16, 65504, le.AppendUint16(nil, 0x4780))
	check(godlpack.Bfloat16, complex(math.Ldexp(1, -133), 0), le.AppendUint16(nil, 0x0001))
	check(godlpack.Bfloat16, complex(1+math.Ldexp(1, -8), 0), le.AppendUint16(nil, 0x3F80))
	check(godlpack.Bfloat16, complex(1+3*math.Ldexp(1, -8), 0), le.AppendUint16(nil, 0x3F82))
	check(godlpack.Bool, complex(0, 1), []byte{1})
	check(godlpack.Int8, -1, []byte{0xFF})
	check(godlpack.Uint8, 3.99, []byte{3})
	check(godlpack.Int64, -7, le.AppendUint64(nil, uint64(math.MaxUint64-6)))
	check(godlpack.Complex64, complex(1.5, -2.5), le.AppendUint32(le.AppendUint32(nil, math.Float32bits(1.5)), math.Float32bits(-2.5)))
	check(godlpack.Complex128, complex(-1, 1e300), le.AppendUint64(le.AppendUint64(nil, math.Float64bits(-1)), math.Float64bits(1e300)))

	// 0-d and empty.
	s, err := producer.Full(godlpack.Float32, 2.5)
	require.NoError(t, err)
	assert.Equal(t, le.AppendUint32(nil, math.Float32bits(2.5)), read(s, 4))
	s.Close()
	s, err = producer.Full(godlpack.Float32, 2.5, 0, 4)
	require.NoError(t, err)
	n, err := s.Tensor().NumElements()
	require.NoError(t, err)
	assert.Zero(t, n)
	s.Close()
	_, err = producer.Full(godlpack.Float32, 1, -1)
	invalid.Require(t, err, godlpack.ErrShape)
}

func TestArangeLengths(t *testing.T) {
	cases := []struct {
		start, stop, step float64
		want              []float64
	}{
		{0, 5, 1, []float64{0, 1, 2, 3, 4}},
		{0, 5, 2, []float64{0, 2, 4}},
		{5, 0, -1, []float64{5, 4, 3, 2, 1}},
		{0, 0, 1, nil},
		{1, 0, 1, nil},
		{0, 1, -1, nil},
		{0, 1, 0.25, []float64{0, 0.25, 0.5, 0.75}},
		{-1, 1, 0.5, []float64{-1, -0.5, 0, 0.5}},
		{0.5, 3, 1, []float64{0.5, 1.5, 2.5}},
		{0, math.Inf(-1), 1, nil},
	}
	for _, c := range cases {
		s, err := producer.Arange(godlpack.Float64, c.start, c.stop, c.step)
		require.NoError(t, err, "%v", c)
		tt := s.Tensor()
		require.Equal(t, []int64{int64(len(c.want))}, tt.Shape, "arange(%g, %g, %g)", c.start, c.stop, c.step)
		got := unsafe.Slice((*float64)(tt.Data), len(c.want))
		if len(c.want) > 0 {
			assert.Equal(t, c.want, got)
		}
		s.Close()
	}
}

func TestArangeEveryDType(t *testing.T) {
	c := snapshot()
	for _, dt := range godlpack.DTypes() {
		s, err := producer.Arange(dt, 0, 10, 1)
		if dt.IsSubByte() {
			invalid.Require(t, err, godlpack.ErrDType, "%v", dt)
			continue
		}
		require.NoError(t, err, "%v", dt)
		require.Equal(t, []int64{10}, s.Tensor().Shape)
		size := dt.ItemSize()
		b := unsafe.Slice((*byte)(s.Tensor().Data), 10*size)
		for i := 0; i < 10; i++ {
			assert.Equal(t, reference(t, dt, float64(i)), b[int64(i)*size:int64(i+1)*size], "%v element %d", dt, i)
		}
		s.Close()
	}
	c.RequireDelta(t, 0, 0)

	// Half-precision steps in known bit patterns: 0, 0.5, 1, 1.5.
	s, err := producer.Arange(godlpack.Float16, 0, 2, 0.5)
	require.NoError(t, err)
	assert.Equal(t, []uint16{0x0000, 0x3800, 0x3C00, 0x3E00}, unsafe.Slice((*uint16)(s.Tensor().Data), 4))
	s.Close()
	s, err = producer.Arange(godlpack.Bfloat16, 0, 2, 0.5)
	require.NoError(t, err)
	assert.Equal(t, []uint16{0x0000, 0x3F00, 0x3F80, 0x3FC0}, unsafe.Slice((*uint16)(s.Tensor().Data), 4))
	s.Close()
	// Integer dtypes: NumPy's values, from the first two truncated toward
	// zero (-1 and trunc(-0.75) = 0), then steps of their difference.
	s, err = producer.Arange(godlpack.Int32, -1.5, 1.5, 0.75)
	require.NoError(t, err)
	assert.Equal(t, []int32{-1, 0, 1, 2}, unsafe.Slice((*int32)(s.Tensor().Data), 4))
	s.Close()
	s, err = producer.Arange(godlpack.Int64, 0, 10, 2.5)
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 2, 4, 6}, unsafe.Slice((*int64)(s.Tensor().Data), 4))
	s.Close()
	c.RequireDelta(t, 0, 0)
}

func TestArangeErrors(t *testing.T) {
	c := snapshot()
	for _, a := range [][3]float64{
		{0, 1, 0},
		{0, 1, math.NaN()},
		{0, 1, math.Inf(1)},
		{math.NaN(), 1, 1},
		{0, math.NaN(), 1},
	} {
		_, err := producer.Arange(godlpack.Float32, a[0], a[1], a[2])
		assert.Error(t, err, "%v", a)
	}
	_, err := producer.Arange(godlpack.Float32, 0, math.Inf(1), 1)
	invalid.Require(t, err, godlpack.ErrOverflow)
	_, err = producer.Arange(godlpack.Float32, 0, 1e30, 1)
	invalid.Require(t, err, godlpack.ErrOverflow)
	// An element an integer dtype cannot hold is refused, never wrapped.
	for _, a := range []struct {
		dt                godlpack.DType
		start, stop, step float64
	}{
		{godlpack.Int64, 0, 1e20, 1e19},  // the second element, 1e19
		{godlpack.Uint16, -1, 2, 1},      // the first, -1
		{godlpack.Uint8, 250, 260, 1},    // the last, 259 (NumPy wraps it to 3)
		{godlpack.Int8, 0, -300, -100.5}, // the last, -200
		{godlpack.Uint64, 0, 1e20, 1e19},
	} {
		_, err = producer.Arange(a.dt, a.start, a.stop, a.step)
		assert.ErrorIs(t, err, producer.ErrOutOfRange, "%v", a)
	}
	s, err := producer.Arange(godlpack.Uint64, 0, 1.9e19, 9e18) // beyond int64, within uint64
	require.NoError(t, err)
	assert.Equal(t, []uint64{0, 9e18, 18e18}, unsafe.Slice((*uint64)(s.Tensor().Data), 3))
	s.Close()
	c.RequireDelta(t, 0, 0)
}
