package producer_test

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/godlpack/godlpack"
	"github.com/godlpack/godlpack/producer"
)

// halfValue decodes IEEE binary16 bits exactly.
func halfValue(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	e := int(h>>10) & 0x1f
	m := float64(h & 0x3ff)
	switch e {
	case 0:
		return sign * math.Ldexp(m, -24)
	case 0x1f:
		if m != 0 {
			return math.NaN()
		}
		return sign * math.Inf(1)
	}
	return sign * math.Ldexp(1024+m, e-25)
}

// bfloatValue decodes bfloat16 bits exactly.
func bfloatValue(b uint16) float64 { return float64(math.Float32frombits(uint32(b) << 16)) }

func TestFloat16BitsKnownValues(t *testing.T) {
	cases := []struct {
		v    float64
		want uint16
	}{
		{0, 0x0000},
		{math.Copysign(0, -1), 0x8000},
		{1, 0x3C00},
		{-1, 0xBC00},
		{2, 0x4000},
		{0.5, 0x3800},
		{-2.5, 0xC100},
		{0.1, 0x2E66},
		{1.0 / 3, 0x3555},
		{math.Pi, 0x4248},
		{65504, 0x7BFF},               // largest finite
		{65519.99, 0x7BFF},            // just below the rounding boundary
		{65520, 0x7C00},               // halfway to 65536: ties to even = inf
		{1e6, 0x7C00},                 // overflow
		{-1e6, 0xFC00},                // overflow
		{math.Inf(1), 0x7C00},         //
		{math.Inf(-1), 0xFC00},        //
		{math.Ldexp(1, -14), 0x0400},  // smallest normal
		{math.Ldexp(1, -24), 0x0001},  // smallest subnormal
		{-math.Ldexp(1, -24), 0x8001}, //
		{math.Ldexp(1023, -24), 0x03FF},
		{math.Ldexp(3, -25), 0x0002},             // 1.5 ulp: tie, rounds to even 2
		{math.Ldexp(5, -25), 0x0002},             // 2.5 ulp: tie, rounds to even 2
		{math.Ldexp(1, -25), 0x0000},             // half the smallest subnormal: ties to 0
		{math.Ldexp(1, -25) * 1.0001, 0x0001},    // just above that: rounds up
		{math.Ldexp(1, -26), 0x0000},             // underflow
		{math.Ldexp(2047, -25), 0x0400},          // rounds up from subnormal into normal
		{1 + math.Ldexp(1, -11), 0x3C00},         // tie between 0x3C00 and 0x3C01: even
		{1 + 3*math.Ldexp(1, -11), 0x3C02},       // tie between 0x3C01 and 0x3C02: even
		{1 + math.Ldexp(1, -11) + 1e-12, 0x3C01}, // just above a tie (lost if rounded through float32 first)
		{1 + 3*math.Ldexp(1, -11) - 1e-12, 0x3C01},
		{2049, 0x6800}, // tie, even
		{2051, 0x6802}, // tie, even
		{2050, 0x6801},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, producer.Float16Bits(c.v), "Float16Bits(%g): got %#04x want %#04x", c.v, producer.Float16Bits(c.v), c.want)
	}
	nan := producer.Float16Bits(math.NaN())
	assert.Equal(t, uint16(0x7C00), nan&0x7C00, "NaN keeps an all-ones exponent")
	assert.NotZero(t, nan&0x03FF, "NaN keeps a non-zero mantissa")
}

func TestFloat16BitsExhaustive(t *testing.T) {
	for h := 0; h < 0x10000; h++ {
		v := halfValue(uint16(h))
		if math.IsNaN(v) {
			continue
		}
		require.Equal(t, uint16(h), producer.Float16Bits(v), "exact value %g (%#04x)", v, h)
		// Midpoints to the next pattern of larger magnitude round to even,
		// and anything off the midpoint rounds to the nearer one.
		if h&0x7FFF >= 0x7BFF {
			continue
		}
		next := halfValue(uint16(h + 1))
		mid := (v + next) / 2
		even := uint16(h)
		if h&1 == 1 {
			even = uint16(h + 1)
		}
		require.Equal(t, even, producer.Float16Bits(mid), "midpoint %g of %#04x", mid, h)
		below := math.Nextafter(mid, v)
		above := math.Nextafter(mid, next)
		require.Equal(t, uint16(h), producer.Float16Bits(below), "just below midpoint of %#04x", h)
		require.Equal(t, uint16(h+1), producer.Float16Bits(above), "just above midpoint of %#04x", h)
	}
}

func TestBfloat16BitsKnownValues(t *testing.T) {
	cases := []struct {
		v    float64
		want uint16
	}{
		{0, 0x0000},
		{math.Copysign(0, -1), 0x8000},
		{1, 0x3F80},
		{-1, 0xBF80},
		{2, 0x4000},
		{0.1, 0x3DCD},
		{math.Pi, 0x4049},
		{65504, 0x4780},
		{3.3895313892515355e38, 0x7F7F}, // largest finite
		{math.MaxFloat32, 0x7F80},       // rounds up to inf
		{1e39, 0x7F80},
		{-1e39, 0xFF80},
		{math.Inf(1), 0x7F80},
		{math.Ldexp(1, -126), 0x0080},             // smallest normal
		{math.Ldexp(1, -133), 0x0001},             // smallest subnormal
		{math.Ldexp(1, -134), 0x0000},             // tie with 0: even
		{math.Ldexp(3, -134), 0x0002},             // tie between 1 and 2: even
		{1 + math.Ldexp(1, -8), 0x3F80},           // tie between 0x3F80 and 0x3F81: even
		{1 + 3*math.Ldexp(1, -8), 0x3F82},         // tie between 0x3F81 and 0x3F82: even
		{1 + math.Ldexp(1, -8) + 1e-10, 0x3F81},   // just above a tie (lost if rounded through float32 first)
		{1 + 3*math.Ldexp(1, -8) - 1e-10, 0x3F81}, //
		{257, 0x4380},                             // tie, even
		{259, 0x4382},                             // tie, even
	}
	for _, c := range cases {
		assert.Equal(t, c.want, producer.Bfloat16Bits(c.v), "Bfloat16Bits(%g): got %#04x want %#04x", c.v, producer.Bfloat16Bits(c.v), c.want)
	}
	nan := producer.Bfloat16Bits(math.NaN())
	assert.Equal(t, uint16(0x7F80), nan&0x7F80)
	assert.NotZero(t, nan&0x007F)
	negNaN := producer.Bfloat16Bits(math.Copysign(math.NaN(), -1))
	assert.NotZero(t, negNaN&0x007F)
}

func TestBfloat16BitsExhaustive(t *testing.T) {
	for b := 0; b < 0x10000; b++ {
		v := bfloatValue(uint16(b))
		if math.IsNaN(v) {
			continue
		}
		require.Equal(t, uint16(b), producer.Bfloat16Bits(v), "exact value %g (%#04x)", v, b)
		if b&0x7FFF >= 0x7F7F {
			continue
		}
		next := bfloatValue(uint16(b + 1))
		mid := (v + next) / 2
		even := uint16(b)
		if b&1 == 1 {
			even = uint16(b + 1)
		}
		require.Equal(t, even, producer.Bfloat16Bits(mid), "midpoint %g of %#04x", mid, b)
		require.Equal(t, uint16(b), producer.Bfloat16Bits(math.Nextafter(mid, v)), "just below midpoint of %#04x", b)
		require.Equal(t, uint16(b+1), producer.Bfloat16Bits(math.Nextafter(mid, next)), "just above midpoint of %#04x", b)
	}
}

func TestEncoder(t *testing.T) {
	le := binary.LittleEndian
	cases := []struct {
		dt   godlpack.DType
		v    complex128
		want []byte
	}{
		{godlpack.Bool, 0, []byte{0}},
		{godlpack.Bool, 2.5, []byte{1}},
		{godlpack.Bool, complex(0, 1), []byte{1}},
		{godlpack.Int8, -1, []byte{0xFF}},
		{godlpack.Int8, 200, []byte{200}}, // wraps like a C cast
		{godlpack.Int8, -2.9, []byte{0xFE}},
		{godlpack.Uint8, 255, []byte{0xFF}},
		{godlpack.Uint8, 256, []byte{0}},
		{godlpack.Int16, -2, le.AppendUint16(nil, 0xFFFE)},
		{godlpack.Uint16, 65535.7, le.AppendUint16(nil, 0xFFFF)},
		{godlpack.Int32, 123456.9, le.AppendUint32(nil, 123456)},
		{godlpack.Int32, -123456.9, le.AppendUint32(nil, uint32(0xFFFFFFFF-123456+1))},
		{godlpack.Uint32, 4294967295, le.AppendUint32(nil, 0xFFFFFFFF)},
		{godlpack.Int64, -1, le.AppendUint64(nil, math.MaxUint64)},
		{godlpack.Int64, complex(math.NaN(), 0), le.AppendUint64(nil, 0)},
		{godlpack.Int64, complex(math.Inf(-1), 0), le.AppendUint64(nil, 1<<63)},
		{godlpack.Int64, 1e300, le.AppendUint64(nil, math.MaxUint64)},
		{godlpack.Uint64, 1 << 63, le.AppendUint64(nil, 1<<63)},
		{godlpack.Uint64, 18446744073709549568, le.AppendUint64(nil, 18446744073709549568)},
		{godlpack.Float16, 1, le.AppendUint16(nil, 0x3C00)},
		{godlpack.Bfloat16, 1, le.AppendUint16(nil, 0x3F80)},
		{godlpack.Float32, 1.5, le.AppendUint32(nil, math.Float32bits(1.5))},
		{godlpack.Float64, -0.25, le.AppendUint64(nil, math.Float64bits(-0.25))},
		{godlpack.Complex64, complex(1, -2), le.AppendUint32(le.AppendUint32(nil, math.Float32bits(1)), math.Float32bits(-2))},
		{godlpack.Complex128, complex(3, 4), le.AppendUint64(le.AppendUint64(nil, math.Float64bits(3)), math.Float64bits(4))},
	}
	for _, c := range cases {
		enc, err := producer.Encoder(c.dt)
		require.NoError(t, err, "%v", c.dt)
		require.EqualValues(t, c.dt.ItemSize(), len(c.want))
		dst := make([]byte, len(c.want))
		enc(dst, c.v)
		assert.Equal(t, c.want, dst, "%v <- %v", c.dt, c.v)
	}
	for _, dt := range godlpack.DTypes() {
		if dt.Code >= godlpack.CodeFloat8E3M4 {
			_, err := producer.Encoder(dt)
			if dt.IsSubByte() { // packed float6/float4 have no element writer
				assert.ErrorIs(t, err, godlpack.ErrDType, "%v", dt)
			} else {
				assert.NoError(t, err, "%v", dt)
			}
		}
	}
	_, err := producer.Encoder(godlpack.DType{Code: godlpack.CodeFloat, Bits: 32, Lanes: 2})
	assert.ErrorIs(t, err, godlpack.ErrDType)
}
