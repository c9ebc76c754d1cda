package producer_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/godlpack/godlpack"
	"github.com/godlpack/godlpack/producer"
)

// Codes as ml_dtypes writes them (tests/runtime/test_float8.py compares thousands of
// values, ties and subnormals included, against ml_dtypes itself).
func TestFloat8EncodingsMatchMLDtypes(t *testing.T) {
	inputs := []float64{0, math.Copysign(0, -1), 1, -1.5, 1e9, -1e9, math.Inf(1), math.NaN(), 1e-9}
	want := map[string][]byte{
		"float8_e3m4":        {0x00, 0x80, 0x30, 0xb8, 0x70, 0xf0, 0x70, 0x78, 0x00},
		"float8_e4m3":        {0x00, 0x80, 0x38, 0xbc, 0x78, 0xf8, 0x78, 0x7c, 0x00},
		"float8_e4m3b11fnuz": {0x00, 0x00, 0x58, 0xdc, 0x80, 0x80, 0x80, 0x80, 0x00},
		"float8_e4m3fn":      {0x00, 0x80, 0x38, 0xbc, 0x7f, 0xff, 0x7f, 0x7f, 0x00},
		"float8_e4m3fnuz":    {0x00, 0x00, 0x40, 0xc4, 0x80, 0x80, 0x80, 0x80, 0x00},
		"float8_e5m2":        {0x00, 0x80, 0x3c, 0xbe, 0x7c, 0xfc, 0x7c, 0x7e, 0x00},
		"float8_e5m2fnuz":    {0x00, 0x00, 0x40, 0xc2, 0x80, 0x80, 0x80, 0x80, 0x00},
		"float8_e8m0fnu":     {0xff, 0xff, 0x7f, 0xff, 0x9d, 0xff, 0xff, 0xff, 0x61},
	}
	for name, codes := range want {
		dt, err := godlpack.ParseDType(name)
		require.NoError(t, err)
		enc, err := producer.Encoder(dt)
		require.NoError(t, err, name)
		for i, x := range inputs {
			var b [1]byte
			enc(b[:], complex(x, 0))
			assert.Equal(t, codes[i], b[0], "%s(%v)", name, x)
		}
	}
}

func TestPackedSubByteTypesHaveNoEncoder(t *testing.T) {
	for _, name := range []string{"float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn"} {
		dt, _ := godlpack.ParseDType(name)
		_, err := producer.Encoder(dt)
		assert.ErrorIs(t, err, godlpack.ErrDType, name)
	}
}
