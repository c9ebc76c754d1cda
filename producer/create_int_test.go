package producer_test

import (
	"math"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/godlpack/godlpack"
	"github.com/godlpack/godlpack/producer"
)

func int64sOf(t *testing.T, s *producer.Source) []int64 {
	n, err := s.Tensor().NumElements()
	require.NoError(t, err)
	return unsafe.Slice((*int64)(s.Tensor().Data), n)
}

func TestFullIntIsExact(t *testing.T) {
	for _, v := range []int64{math.MaxInt64, math.MinInt64, 1<<53 + 1, -7} {
		s, err := producer.FullInt(godlpack.Int64, v, 3)
		require.NoError(t, err)
		assert.Equal(t, []int64{v, v, v}, int64sOf(t, s))
		s.Close()
	}
	s, err := producer.FullInt(godlpack.Uint8, 257, 2) // wraps like a C cast
	require.NoError(t, err)
	assert.Equal(t, []byte{1, 1}, unsafe.Slice((*byte)(s.Tensor().Data), 2))
	s.Close()
}

func TestArangeIntIsExactAndSized(t *testing.T) {
	s, err := producer.ArangeInt(godlpack.Int64, math.MaxInt64-5, math.MaxInt64, 2)
	require.NoError(t, err)
	assert.Equal(t, []int64{math.MaxInt64 - 5, math.MaxInt64 - 3, math.MaxInt64 - 1}, int64sOf(t, s))
	s.Close()
	for _, c := range []struct{ start, stop, step, n int64 }{
		{0, 10, 3, 4}, {10, 0, -3, 4}, {0, 0, 1, 0}, {5, 0, 1, 0}, {-3, 3, 2, 3},
	} {
		s, err := producer.ArangeInt(godlpack.Int32, c.start, c.stop, c.step)
		require.NoError(t, err)
		assert.Equal(t, []int64{c.n}, s.Tensor().Shape, "%+v", c)
		s.Close()
	}
	_, err = producer.ArangeInt(godlpack.Int64, 0, 1, 0)
	assert.Error(t, err)
	_, err = producer.ArangeInt(godlpack.Int64, math.MinInt64, math.MaxInt64, 1)
	assert.ErrorIs(t, err, godlpack.ErrOverflow)
}
