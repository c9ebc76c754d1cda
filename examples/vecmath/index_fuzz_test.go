package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/godlpack/godlpack/pyext"
)

func pickled(dim, n int64, name string, rows []float64) []byte {
	var b bytes.Buffer
	_ = binary.Write(&b, binary.LittleEndian, dim)
	_ = binary.Write(&b, binary.LittleEndian, n)
	b.WriteString(name)
	_ = binary.Write(&b, binary.LittleEndian, rows)
	return b.Bytes()
}

// A crafted dim whose row size 8*dim overflows: 2^61 used to panic (division
// by zero), 2^61+1 wrapped to 8 bytes a row and was accepted.
func TestUnmarshalRefusesADimWhoseRowSizeOverflows(t *testing.T) {
	for _, dim := range []int64{1 << 61, 1<<61 + 1, 1<<62 + 1, 1<<63 - 1, 3} {
		var ix Index
		err := ix.UnmarshalBinary(pickled(dim, 0, "", []float64{1}))
		var ve *pyext.ValueError
		require.True(t, errors.As(err, &ve), "dim %d: %v", dim, err)
	}
}

// Any bytes: a ValueError or an Index that pickles back to the same bytes,
// never a panic, and never rows that are not whole.
func FuzzIndexUnmarshal(f *testing.F) {
	f.Add(pickled(2, 1, "a", []float64{1, 2, 3, 4}))
	f.Add(pickled(1<<61+1, 0, "", []float64{1}))
	f.Add(pickled(3, 0, "", nil))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		var ix Index
		if err := ix.UnmarshalBinary(data); err != nil {
			var ve *pyext.ValueError
			require.True(t, errors.As(err, &ve), "not a ValueError: %v", err)
			return
		}
		require.Positive(t, ix.dim)
		require.Zero(t, len(ix.data)%ix.dim)
		back, err := ix.MarshalBinary()
		require.NoError(t, err)
		require.Equal(t, data, back)
	})
}
