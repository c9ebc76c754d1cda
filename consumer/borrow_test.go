package consumer_test

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/godlpack/godlpack"
	"github.com/godlpack/godlpack/consumer"
	"github.com/godlpack/godlpack/internal/testkit/testprod"
)

// A borrowed Tensor is validated like an imported one but never calls the
// deleter: its owner does.
func TestBorrowNeverReleases(t *testing.T) {
	v := testprod.NewVersioned()
	defer v.Free()
	goodTensor(t, &v.M.DLTensor)
	v.M.Flags = godlpack.FlagReadOnly
	tt, err := consumer.Borrow(unsafe.Pointer(v.M), true)
	require.NoError(t, err)
	assert.Equal(t, []int64{2, 3}, tt.Shape)
	assert.True(t, tt.ReadOnly)
	assert.True(t, tt.Versioned)
	assert.Equal(t, godlpack.Version{Major: 1, Minor: 3}, tt.Version)
	xs, err := tt.AsFloat32s()
	require.NoError(t, err)
	assert.Len(t, xs, 6)
	_, err = consumer.MutableView[float32](tt)
	assert.Error(t, err, "a read-only borrowed tensor gives no mutable view")
	assert.ErrorIs(t, tt.Close(), consumer.ErrBorrowed)
	assert.False(t, tt.Closed())
	assert.Zero(t, v.Calls())

	l := testprod.NewLegacy()
	defer l.Free()
	goodTensor(t, &l.M.DLTensor)
	tl, err := consumer.Borrow(unsafe.Pointer(l.M), false)
	require.NoError(t, err)
	assert.False(t, tl.Versioned)
	assert.ErrorIs(t, tl.Close(), consumer.ErrBorrowed)
	assert.Zero(t, l.Calls())
}

// A refusal releases nothing either: the owner still holds the tensor.
func TestBorrowRefusalKeepsOwnership(t *testing.T) {
	v := testprod.NewVersioned()
	defer v.Free()
	goodTensor(t, &v.M.DLTensor)
	v.M.DLTensor.NDim = -1
	_, err := consumer.Borrow(unsafe.Pointer(v.M), true)
	assert.ErrorIs(t, err, godlpack.ErrNDim)
	assert.Zero(t, v.Calls())
	_, err = consumer.Borrow(nil, true)
	assert.ErrorIs(t, err, godlpack.ErrNilPointer)
}

// Views refuse memory not aligned for their element type.
func TestViewRefusesUnalignedData(t *testing.T) {
	v := testprod.NewVersioned()
	defer v.Free()
	goodTensor(t, &v.M.DLTensor)
	v.M.DLTensor.ByteOffset = 1
	tt, err := consumer.Borrow(unsafe.Pointer(v.M), true)
	require.NoError(t, err)
	_, err = tt.AsFloat32s()
	assert.ErrorIs(t, err, godlpack.ErrStrides)
	assert.ErrorContains(t, err, "not aligned")
	v.M.DLTensor.ByteOffset = 4
	tt, err = consumer.Borrow(unsafe.Pointer(v.M), true)
	require.NoError(t, err)
	_, err = tt.AsFloat32s()
	assert.NoError(t, err)
}
