package producer

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMinifloatDecodeInvertsEncodeOnEveryCode(t *testing.T) {
	for code, f := range minifloats {
		for c := 0; c < 256; c++ {
			v := f.decode(uint8(c))
			if math.IsNaN(v) {
				continue
			}
			if f.flavor == fnuz && c == 0 { // the only zero
				require.Equal(t, 0.0, v)
				continue
			}
			require.Equal(t, uint8(c), f.encode(v), "format %d code %#x value %g", code, c, v)
		}
	}
}

func TestFloat16ValueInvertsFloat16Bits(t *testing.T) {
	for h := 0; h < 1<<16; h++ {
		v := float16Value(uint16(h))
		if math.IsNaN(v) {
			continue
		}
		require.Equal(t, uint16(h), Float16Bits(v), "bits %#x value %g", h, v)
	}
}
