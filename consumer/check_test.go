package consumer_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/godlpack/godlpack"
	"github.com/godlpack/godlpack/consumer"
	"github.com/godlpack/godlpack/producer"
)

// The Check functions are the allocation-free form of Validate used on the
// Python import path: same verdicts, nothing allocated for a valid tensor.
func TestCheckAgreesWithValidateAndDoesNotAllocate(t *testing.T) {
	src, err := producer.FromSlice(make([]float32, 12), []int64{3, 4}, []int64{1, 3}, false, nil)
	require.NoError(t, err)
	defer src.Close()
	m, err := src.ExportVersioned(0)
	require.NoError(t, err)
	defer m.Free()
	l, err := src.ExportLegacy()
	require.NoError(t, err)
	defer l.Free()

	require.NoError(t, consumer.CheckVersioned(m))
	require.NoError(t, consumer.CheckLegacy(l))
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = consumer.CheckVersioned(m) }))
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = consumer.CheckLegacy(l) }))

	// A refusal from both, with the same kind.
	saved := m.DLTensor.DType
	m.DLTensor.DType.Lanes = 0
	_, verr := consumer.ValidateVersioned(m)
	cerr := consumer.CheckVersioned(m)
	m.DLTensor.DType = saved
	assert.ErrorIs(t, verr, godlpack.ErrLanes)
	assert.ErrorIs(t, cerr, godlpack.ErrLanes)
	assert.ErrorIs(t, consumer.CheckVersioned(nil), godlpack.ErrNilPointer)
	assert.ErrorIs(t, consumer.CheckLegacy(nil), godlpack.ErrNilPointer)

	// Validate copies shape and strides out of the producer's memory.
	v, err := consumer.ValidateVersioned(m)
	require.NoError(t, err)
	assert.Equal(t, []int64{3, 4}, v.Shape)
	assert.Equal(t, []int64{1, 3}, v.Strides)
	assert.NotSame(t, m.DLTensor.Shape, &v.Shape[0])
}

func TestDeviceTypeKnownMatchesTheNames(t *testing.T) {
	for d := godlpack.DeviceType(-2); d < 40; d++ {
		named := !strings.HasPrefix(d.String(), "device_type(")
		assert.Equal(t, named, d.Known(), "%d", d)
	}
}
