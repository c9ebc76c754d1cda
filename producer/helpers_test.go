package producer_test

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/godlpack/godlpack"
	"github.com/godlpack/godlpack/internal/testkit/testprod"
)

// snapshot reads the process-wide owner and export counters.
var snapshot = testprod.Snapshot

func deleteVersioned(m *godlpack.DLManagedTensorVersioned) {
	godlpack.CallDeleter(m.Deleter, unsafe.Pointer(m))
}

func deleteLegacy(m *godlpack.DLManagedTensor) {
	godlpack.CallDeleter(m.Deleter, unsafe.Pointer(m))
}

// firstBytes views n bytes starting at the first element of dl.
func firstBytes(dl *godlpack.DLTensor, n int64) []byte {
	if n == 0 {
		return []byte{}
	}
	return unsafe.Slice((*byte)(unsafe.Add(dl.Data, dl.ByteOffset)), n)
}

// dataBytes views the whole compact data of a compact tensor.
func dataBytes(t *testing.T, dl *godlpack.DLTensor) []byte {
	t.Helper()
	tt := godlpack.Tensor{Shape: dl.ShapeSlice(), DType: godlpack.DType(dl.DType)}
	lo, hi, err := tt.ByteSpan()
	require.NoError(t, err)
	require.Zero(t, lo)
	return firstBytes(dl, hi)
}

// checkExported checks the fields every export must have.
func checkExported(t *testing.T, dl *godlpack.DLTensor, src *godlpack.Tensor) {
	t.Helper()
	assert.Equal(t, src.Data, dl.Data)
	assert.Equal(t, src.ByteOffset, dl.ByteOffset)
	assert.Equal(t, src.Device.DLDevice(), dl.Device)
	assert.Equal(t, godlpack.DLDataType(src.DType), dl.DType)
	require.EqualValues(t, len(src.Shape), dl.NDim)
	assert.Equal(t, src.Shape, nilIfEmpty(dl.ShapeSlice()))
	if dl.NDim > 0 {
		require.NotNil(t, dl.Shape)
		require.NotNil(t, dl.Strides, "strides must be filled in (DLPack 1.2)")
		assert.Equal(t, src.StridesOrCompact(), dl.StridesSlice())
	}
}

func nilIfEmpty(s []int64) []int64 {
	if len(s) == 0 {
		return nil
	}
	return s
}
