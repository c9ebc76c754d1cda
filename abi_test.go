package godlpack_test

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/godlpack/godlpack"
)

func TestABISizesMatchC(t *testing.T) {
	c := godlpack.CSizes()
	goSizes := map[string]uintptr{
		"DLPackVersion":            unsafe.Sizeof(godlpack.DLPackVersion{}),
		"DLDevice":                 unsafe.Sizeof(godlpack.DLDevice{}),
		"DLDataType":               unsafe.Sizeof(godlpack.DLDataType{}),
		"DLTensor":                 unsafe.Sizeof(godlpack.DLTensor{}),
		"DLManagedTensor":          unsafe.Sizeof(godlpack.DLManagedTensor{}),
		"DLManagedTensorVersioned": unsafe.Sizeof(godlpack.DLManagedTensorVersioned{}),
	}
	require.Len(t, c, len(goSizes))
	for name, want := range goSizes {
		got, ok := c[name]
		require.True(t, ok, "CSizes lacks %s", name)
		assert.Equal(t, want, got, "sizeof(%s)", name)
	}
}

func TestABISizesX86_64(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Fatalf("the expected sizes below are for 64-bit targets; pointer size is %d", unsafe.Sizeof(uintptr(0)))
	}
	c := godlpack.CSizes()
	assert.EqualValues(t, 8, c["DLPackVersion"])
	assert.EqualValues(t, 8, c["DLDevice"])
	assert.EqualValues(t, 4, c["DLDataType"])
	assert.EqualValues(t, 48, c["DLTensor"])
	assert.EqualValues(t, 64, c["DLManagedTensor"])
	assert.EqualValues(t, 80, c["DLManagedTensorVersioned"])
	assert.EqualValues(t, 48, unsafe.Sizeof(godlpack.DLTensor{}))
	assert.EqualValues(t, 64, unsafe.Sizeof(godlpack.DLManagedTensor{}))
	assert.EqualValues(t, 80, unsafe.Sizeof(godlpack.DLManagedTensorVersioned{}))
}

func TestABIOffsetsMatchC(t *testing.T) {
	var dl godlpack.DLTensor
	var m godlpack.DLManagedTensor
	var v godlpack.DLManagedTensorVersioned
	goOffsets := map[string]uintptr{
		"DLTensor.device":      unsafe.Offsetof(dl.Device),
		"DLTensor.ndim":        unsafe.Offsetof(dl.NDim),
		"DLTensor.dtype":       unsafe.Offsetof(dl.DType),
		"DLTensor.shape":       unsafe.Offsetof(dl.Shape),
		"DLTensor.strides":     unsafe.Offsetof(dl.Strides),
		"DLTensor.byte_offset": unsafe.Offsetof(dl.ByteOffset),
		"Managed.manager_ctx":  unsafe.Offsetof(m.ManagerCtx),
		"Managed.deleter":      unsafe.Offsetof(m.Deleter),
		"Versioned.ctx":        unsafe.Offsetof(v.ManagerCtx),
		"Versioned.deleter":    unsafe.Offsetof(v.Deleter),
		"Versioned.flags":      unsafe.Offsetof(v.Flags),
		"Versioned.dl_tensor":  unsafe.Offsetof(v.DLTensor),
	}
	c := godlpack.COffsets()
	require.Len(t, c, len(goOffsets))
	for name, want := range goOffsets {
		got, ok := c[name]
		require.True(t, ok, "COffsets lacks %s", name)
		assert.Equal(t, want, got, "offsetof(%s)", name)
	}
	// Fields not listed by COffsets but fixed by the ABI.
	assert.Zero(t, unsafe.Offsetof(dl.Data))
	assert.Zero(t, unsafe.Offsetof(m.DLTensor))
	assert.Zero(t, unsafe.Offsetof(v.Version))
	assert.EqualValues(t, 4, unsafe.Offsetof(v.Version.Minor))
	var dev godlpack.DLDevice
	assert.EqualValues(t, 4, unsafe.Offsetof(dev.DeviceID))
	var dt godlpack.DLDataType
	assert.EqualValues(t, 1, unsafe.Offsetof(dt.Bits))
	assert.EqualValues(t, 2, unsafe.Offsetof(dt.Lanes))
}

func TestABIOffsetsX86_64(t *testing.T) {
	c := godlpack.COffsets()
	want := map[string]uintptr{
		"DLTensor.device": 8, "DLTensor.ndim": 16, "DLTensor.dtype": 20,
		"DLTensor.shape": 24, "DLTensor.strides": 32, "DLTensor.byte_offset": 40,
		"Managed.manager_ctx": 48, "Managed.deleter": 56,
		"Versioned.ctx": 8, "Versioned.deleter": 16, "Versioned.flags": 24, "Versioned.dl_tensor": 32,
	}
	assert.Equal(t, want, c)
}

func TestFlagsAndConstants(t *testing.T) {
	assert.Equal(t, uint64(1), godlpack.FlagReadOnly)
	assert.Equal(t, uint64(2), godlpack.FlagIsCopied)
	assert.Equal(t, uint64(4), godlpack.FlagIsSubbyteTypePadded)
	assert.Equal(t, uint64(7), godlpack.KnownFlags)
	assert.Equal(t, 64, godlpack.MaxNDim)
}

func TestShapeAndStridesSlices(t *testing.T) {
	shape := []int64{2, 3}
	strides := []int64{3, 1}
	dl := godlpack.DLTensor{NDim: 2, Shape: &shape[0], Strides: &strides[0]}
	assert.Equal(t, shape, dl.ShapeSlice())
	assert.Equal(t, strides, dl.StridesSlice())

	dl.Strides = nil
	assert.Nil(t, dl.StridesSlice())
	dl.NDim = 0
	assert.Nil(t, dl.ShapeSlice())
	dl.NDim = -1
	assert.Nil(t, dl.ShapeSlice())
	dl.NDim, dl.Shape = 2, nil
	assert.Nil(t, dl.ShapeSlice())
}

func TestCallDeleterNilIsNoop(t *testing.T) {
	assert.NotPanics(t, func() { godlpack.CallDeleter(nil, nil) })
}

func TestInvalidTensorError(t *testing.T) {
	err := godlpack.Invalid(godlpack.ErrShape, "shape[%d] = %d", 1, -2)
	var inv *godlpack.InvalidTensorError
	require.ErrorAs(t, err, &inv)
	assert.Equal(t, godlpack.ErrShape, inv.Kind)
	assert.Equal(t, "shape[1] = -2", inv.Detail)
	assert.ErrorIs(t, err, godlpack.ErrShape)
	assert.NotErrorIs(t, err, godlpack.ErrOverflow)
	assert.Equal(t, "godlpack: invalid shape: shape[1] = -2", err.Error())
}
