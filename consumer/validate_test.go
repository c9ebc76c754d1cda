package consumer_test

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/godlpack/godlpack"
	"github.com/godlpack/godlpack/consumer"
	"github.com/godlpack/godlpack/internal/testkit/invalid"
	"github.com/godlpack/godlpack/internal/testkit/testprod"
)

// cDims is C memory for shape and strides, freed at the end of the test.
func cDims(t *testing.T, vals ...int64) *int64 {
	p := testprod.Int64s(vals...)
	t.Cleanup(func() { testprod.Free(p) })
	return p
}

func cBuffer(t *testing.T, n int) unsafe.Pointer {
	p := testprod.Bytes(n)
	t.Cleanup(func() { testprod.FreePtr(p) })
	return p
}

func unreadable(t *testing.T) unsafe.Pointer {
	u := testprod.NewUnreadable()
	t.Cleanup(u.Free)
	return u.P
}

// goodTensor fills dl with a valid 2x3 float32 CPU tensor over C memory.
func goodTensor(t *testing.T, dl *godlpack.DLTensor) {
	dl.Data = cBuffer(t, 24)
	dl.Device = godlpack.DLDevice{DeviceType: int32(godlpack.CPU)}
	dl.NDim = 2
	dl.DType = godlpack.DLDataType{Code: godlpack.CodeFloat, Bits: 32, Lanes: 1}
	dl.Shape = cDims(t, 2, 3)
	dl.Strides = cDims(t, 3, 1)
}

type refusal struct {
	name   string
	kind   error
	mutate func(t *testing.T, dl *godlpack.DLTensor)
}

// refusals that apply to a DLTensor whatever carries it. Pointer fields that
// must not be followed point at unreadable memory.
func dlRefusals() []refusal {
	return []refusal{
		{"ndim -1", godlpack.ErrNDim, func(t *testing.T, dl *godlpack.DLTensor) {
			dl.NDim, dl.Shape, dl.Strides = -1, (*int64)(unreadable(t)), (*int64)(unreadable(t))
		}},
		{"ndim 65", godlpack.ErrNDim, func(t *testing.T, dl *godlpack.DLTensor) {
			dl.NDim, dl.Shape, dl.Strides = 65, (*int64)(unreadable(t)), (*int64)(unreadable(t))
		}},
		{"ndim INT32_MIN", godlpack.ErrNDim, func(t *testing.T, dl *godlpack.DLTensor) {
			dl.NDim, dl.Shape = math.MinInt32, (*int64)(unreadable(t))
		}},
		{"NULL shape", godlpack.ErrNilPointer, func(t *testing.T, dl *godlpack.DLTensor) { dl.Shape = nil }},
		{"NULL shape 1-d", godlpack.ErrNilPointer, func(t *testing.T, dl *godlpack.DLTensor) {
			dl.NDim, dl.Shape, dl.Strides = 1, nil, cDims(t, 1)
		}},
		{"negative shape", godlpack.ErrShape, func(t *testing.T, dl *godlpack.DLTensor) { dl.Shape = cDims(t, 2, -3) }},
		{"negative shape with a zero", godlpack.ErrShape, func(t *testing.T, dl *godlpack.DLTensor) { dl.Shape = cDims(t, 0, -1) }},
		{"shape product overflow", godlpack.ErrOverflow, func(t *testing.T, dl *godlpack.DLTensor) {
			dl.Shape, dl.Strides = cDims(t, 1<<32, 1<<32), cDims(t, 1<<32, 1)
		}},
		{"byte size overflow", godlpack.ErrOverflow, func(t *testing.T, dl *godlpack.DLTensor) {
			dl.NDim, dl.Shape, dl.Strides = 1, cDims(t, 1<<61), cDims(t, 1)
		}},
		{"stride span overflow", godlpack.ErrOverflow, func(t *testing.T, dl *godlpack.DLTensor) {
			dl.Strides = cDims(t, math.MaxInt64/2, 1)
			dl.Shape = cDims(t, 3, 3)
		}},
		{"stride sum overflow", godlpack.ErrOverflow, func(t *testing.T, dl *godlpack.DLTensor) {
			dl.Shape, dl.Strides = cDims(t, 2, 2), cDims(t, math.MaxInt64/2+1, math.MaxInt64/2+1)
		}},
		{"INT64_MIN stride", godlpack.ErrOverflow, func(t *testing.T, dl *godlpack.DLTensor) {
			dl.Strides = cDims(t, math.MinInt64, 1)
		}},
		{"byte_offset wraps", godlpack.ErrOverflow, func(t *testing.T, dl *godlpack.DLTensor) {
			dl.ByteOffset = math.MaxUint64 - 8
		}},
		{"byte_offset beyond int64", godlpack.ErrOverflow, func(t *testing.T, dl *godlpack.DLTensor) {
			dl.ByteOffset = 1 << 63
		}},
		{"negative strides below address 0", godlpack.ErrOverflow, func(t *testing.T, dl *godlpack.DLTensor) {
			testprod.SetAddr(&dl.Data, 0x10000)
			dl.Strides = cDims(t, -(1 << 20), 1)
		}},
		{"view past the top of memory", godlpack.ErrOverflow, func(t *testing.T, dl *godlpack.DLTensor) {
			testprod.SetAddr(&dl.Data, ^uintptr(0)-8)
		}},
		{"NULL data with elements", godlpack.ErrNilData, func(t *testing.T, dl *godlpack.DLTensor) { dl.Data = nil }},
		{"NULL data 0-d", godlpack.ErrNilData, func(t *testing.T, dl *godlpack.DLTensor) {
			dl.Data, dl.NDim = nil, 0
		}},
		{"dangling data with elements", godlpack.ErrNilData, func(t *testing.T, dl *godlpack.DLTensor) {
			testprod.SetAddr(&dl.Data, 4)
		}},
		{"first-page data with elements", godlpack.ErrNilData, func(t *testing.T, dl *godlpack.DLTensor) {
			testprod.SetAddr(&dl.Data, 4095)
			dl.ByteOffset = 1 << 20
		}},
		{"unknown dtype code", godlpack.ErrDType, func(t *testing.T, dl *godlpack.DLTensor) {
			dl.DType.Code, dl.Shape = 99, (*int64)(unreadable(t))
		}},
		{"opaque handle", godlpack.ErrDType, func(t *testing.T, dl *godlpack.DLTensor) {
			dl.DType = godlpack.DLDataType{Code: godlpack.CodeOpaqueHandle, Bits: 64, Lanes: 1}
		}},
		{"unknown bits", godlpack.ErrDType, func(t *testing.T, dl *godlpack.DLTensor) { dl.DType.Bits = 24 }},
		{"bits 0", godlpack.ErrDType, func(t *testing.T, dl *godlpack.DLTensor) {
			dl.DType.Bits, dl.Shape = 0, (*int64)(unreadable(t))
		}},
		{"lanes 3 of float4", godlpack.ErrLanes, func(t *testing.T, dl *godlpack.DLTensor) {
			dl.DType = godlpack.DLDataType{Code: godlpack.CodeFloat4E2M1FN, Bits: 4, Lanes: 3}
			dl.Shape = (*int64)(unreadable(t))
		}},
		{"lanes 0", godlpack.ErrLanes, func(t *testing.T, dl *godlpack.DLTensor) { dl.DType.Lanes = 0 }},
		{"unknown device type", godlpack.ErrDevice, func(t *testing.T, dl *godlpack.DLTensor) {
			dl.Device.DeviceType, dl.Shape = 5, (*int64)(unreadable(t))
		}},
		{"device type 0", godlpack.ErrDevice, func(t *testing.T, dl *godlpack.DLTensor) { dl.Device.DeviceType = 0 }},
		{"device type 19", godlpack.ErrDevice, func(t *testing.T, dl *godlpack.DLTensor) { dl.Device.DeviceType = 19 }},
		{"negative device id", godlpack.ErrDevice, func(t *testing.T, dl *godlpack.DLTensor) {
			dl.Device.DeviceID, dl.Shape = -1, (*int64)(unreadable(t))
		}},
	}
}

func TestImportVersionedRefusals(t *testing.T) {
	for _, r := range dlRefusals() {
		t.Run(r.name, func(t *testing.T) {
			v := testprod.NewVersioned()
			defer v.Free()
			goodTensor(t, &v.M.DLTensor)
			r.mutate(t, &v.M.DLTensor)

			// Validation alone takes no ownership.
			_, err := consumer.ValidateVersioned(v.M)
			invalid.Require(t, err, r.kind)
			assert.Zero(t, v.Calls())

			tt, err := consumer.ImportVersioned(v.M)
			assert.Nil(t, tt)
			invalid.Require(t, err, r.kind)
			assert.EqualValues(t, 1, v.Calls(), "the deleter runs exactly once on refusal")
		})
	}
}

func TestImportLegacyRefusals(t *testing.T) {
	for _, r := range dlRefusals() {
		t.Run(r.name, func(t *testing.T) {
			l := testprod.NewLegacy()
			defer l.Free()
			goodTensor(t, &l.M.DLTensor)
			r.mutate(t, &l.M.DLTensor)

			_, err := consumer.ValidateLegacy(l.M)
			invalid.Require(t, err, r.kind)
			assert.Zero(t, l.Calls())

			tt, err := consumer.Import(unsafe.Pointer(l.M), false)
			assert.Nil(t, tt)
			invalid.Require(t, err, r.kind)
			assert.EqualValues(t, 1, l.Calls(), "the deleter runs exactly once on refusal")
		})
	}
}

func TestImportNilManaged(t *testing.T) {
	total := testprod.TotalCalls()
	_, err := consumer.ImportVersioned(nil)
	invalid.Require(t, err, godlpack.ErrNilPointer)
	_, err = consumer.ImportLegacy(nil)
	invalid.Require(t, err, godlpack.ErrNilPointer)
	_, err = consumer.Import(nil, true)
	invalid.Require(t, err, godlpack.ErrNilPointer)
	_, err = consumer.Import(nil, false)
	invalid.Require(t, err, godlpack.ErrNilPointer)
	_, err = consumer.ValidateVersioned(nil)
	invalid.Require(t, err, godlpack.ErrNilPointer)
	_, err = consumer.ValidateLegacy(nil)
	invalid.Require(t, err, godlpack.ErrNilPointer)
	_, err = consumer.ValidateDLTensor(nil, true)
	invalid.Require(t, err, godlpack.ErrNilPointer)
	assert.Equal(t, total, testprod.TotalCalls())
}

func TestImportVersionMismatch(t *testing.T) {
	for _, ver := range []godlpack.DLPackVersion{{Major: 2, Minor: 0}, {Major: 2, Minor: 7}, {Major: math.MaxUint32, Minor: 0}, {Major: 0, Minor: 0}, {Major: 0, Minor: 8}} {
		// Only version, manager_ctx and deleter are readable: a consumer that
		// looked at flags or dl_tensor of an unknown major would fault.
		v := testprod.NewGuardedVersioned(ver.Major, ver.Minor)
		_, err := consumer.ValidateVersioned(v.M)
		invalid.Require(t, err, godlpack.ErrVersion, "%v", ver)
		assert.Zero(t, v.Calls())
		tt, err := consumer.ImportVersioned(v.M)
		assert.Nil(t, tt)
		invalid.Require(t, err, godlpack.ErrVersion, "%v", ver)
		assert.EqualValues(t, 1, v.Calls(), "%v: deleter exactly once", ver)
		v.Free()
	}
	for _, minor := range []uint32{0, 99} {
		v := testprod.NewVersioned()
		goodTensor(t, &v.M.DLTensor)
		v.M.Version = godlpack.DLPackVersion{Major: 1, Minor: minor}
		assert.NoError(t, consumer.CheckVersioned(v.M), "1.%d", minor)
		v.Free()
	}
}

func TestNullDeleter(t *testing.T) {
	v := testprod.NewVersioned()
	defer v.Free()
	goodTensor(t, &v.M.DLTensor)
	v.M.Deleter = nil
	tt, err := consumer.ImportVersioned(v.M)
	require.NoError(t, err)
	require.NoError(t, tt.Close())
	assert.ErrorIs(t, tt.Close(), consumer.ErrClosed)

	// Refused with a NULL deleter: no crash, nothing called.
	v.M.DLTensor.NDim = -1
	_, err = consumer.ImportVersioned(v.M)
	invalid.Require(t, err, godlpack.ErrNDim)

	g := testprod.NewGuardedVersioned(2, 0)
	defer g.Free()
	g.M.Deleter = nil
	_, err = consumer.ImportVersioned(g.M)
	invalid.Require(t, err, godlpack.ErrVersion)

	l := testprod.NewLegacy()
	defer l.Free()
	l.M.Deleter = nil
	_, err = consumer.ImportLegacy(l.M) // all zero: bits 0
	invalid.Require(t, err, godlpack.ErrDType)
	goodTensor(t, &l.M.DLTensor)
	tl, err := consumer.ImportLegacy(l.M)
	require.NoError(t, err)
	assert.NoError(t, tl.Close())
	assert.Zero(t, v.Calls()+g.Calls()+l.Calls())
}

func TestNullStrides(t *testing.T) {
	cases := []struct {
		ver    godlpack.DLPackVersion
		accept bool
	}{
		{godlpack.DLPackVersion{Major: 1, Minor: 0}, true},
		{godlpack.DLPackVersion{Major: 1, Minor: 1}, true},
		{godlpack.DLPackVersion{Major: 1, Minor: 2}, false},
		{godlpack.DLPackVersion{Major: 1, Minor: 3}, false},
		{godlpack.DLPackVersion{Major: 1, Minor: 50}, false},
	}
	for _, c := range cases {
		v := testprod.NewVersioned()
		goodTensor(t, &v.M.DLTensor)
		v.M.Version = c.ver
		v.M.DLTensor.Strides = nil
		tt, err := consumer.ImportVersioned(v.M)
		if c.accept {
			require.NoError(t, err, "%v", c.ver)
			assert.Nil(t, tt.Strides, "NULL strides mean compact")
			assert.True(t, tt.IsCompact())
			assert.Equal(t, []int64{2, 3}, tt.Shape)
			assert.Equal(t, godlpack.Version{Major: c.ver.Major, Minor: c.ver.Minor}, tt.Version)
			assert.Zero(t, v.Calls())
			require.NoError(t, tt.Close())
		} else {
			invalid.Require(t, err, godlpack.ErrStrides, "%v", c.ver)
		}
		assert.EqualValues(t, 1, v.Calls(), "%v", c.ver)
		v.Free()

		// NULL strides are always fine for 0-d tensors.
		v = testprod.NewVersioned()
		goodTensor(t, &v.M.DLTensor)
		v.M.Version = c.ver
		v.M.DLTensor.NDim, v.M.DLTensor.Shape, v.M.DLTensor.Strides = 0, nil, nil
		tt, err = consumer.ImportVersioned(v.M)
		require.NoError(t, err, "%v", c.ver)
		assert.Empty(t, tt.Shape)
		require.NoError(t, tt.Close())
		v.Free()
	}

	l := testprod.NewLegacy()
	defer l.Free()
	goodTensor(t, &l.M.DLTensor)
	l.M.DLTensor.Strides = nil
	tt, err := consumer.ImportLegacy(l.M)
	require.NoError(t, err, "legacy tensors may have NULL strides")
	assert.Nil(t, tt.Strides)
	require.NoError(t, tt.Close())
	assert.EqualValues(t, 1, l.Calls())
}

func TestNullDataEmptyAccepted(t *testing.T) {
	for _, shape := range [][]int64{{0}, {3, 0}, {0, 1 << 62, 1 << 62}, {1 << 62, 1 << 62, 0}} {
		v := testprod.NewVersioned()
		goodTensor(t, &v.M.DLTensor)
		v.M.DLTensor.Data = nil
		v.M.DLTensor.NDim = int32(len(shape))
		v.M.DLTensor.Shape = cDims(t, shape...)
		v.M.DLTensor.Strides = cDims(t, make([]int64, len(shape))...)
		tt, err := consumer.ImportVersioned(v.M)
		require.NoError(t, err, "%v", shape)
		assert.Nil(t, tt.Data)
		n, err := tt.NumElements()
		require.NoError(t, err)
		assert.Zero(t, n)
		got, err := tt.AsFloat32s()
		require.NoError(t, err)
		assert.Empty(t, got)
		b, err := tt.Copy()
		require.NoError(t, err)
		assert.Empty(t, b)
		require.NoError(t, tt.Close())
		assert.EqualValues(t, 1, v.Calls())
		v.Free()
	}
}

func TestAcceptedFields(t *testing.T) {
	v := testprod.NewVersioned()
	defer v.Free()
	goodTensor(t, &v.M.DLTensor)
	v.M.Version = godlpack.DLPackVersion{Major: 1, Minor: 1}
	v.M.Flags = godlpack.FlagReadOnly | godlpack.FlagIsCopied | 1<<40 // unknown bits are carried, not refused
	v.M.DLTensor.Device = godlpack.DLDevice{DeviceType: int32(godlpack.CUDA), DeviceID: 3}
	v.M.DLTensor.ByteOffset = 4
	v.M.DLTensor.Shape = cDims(t, 2, 1)
	v.M.DLTensor.Strides = cDims(t, 2, 77)
	tt, err := consumer.ImportVersioned(v.M)
	require.NoError(t, err)
	assert.Equal(t, godlpack.Version{Major: 1, Minor: 1}, tt.Version)
	assert.True(t, tt.Versioned)
	assert.True(t, tt.ReadOnly)
	assert.Equal(t, v.M.Flags, tt.Flags)
	assert.Equal(t, godlpack.Device{Type: godlpack.CUDA, ID: 3}, tt.Device)
	assert.Equal(t, godlpack.Float32, tt.DType)
	assert.Equal(t, v.M.DLTensor.Data, tt.Data)
	assert.EqualValues(t, 4, tt.ByteOffset)
	assert.Equal(t, []int64{2, 1}, tt.Shape)
	assert.Equal(t, []int64{2, 77}, tt.Strides)
	// The shape and strides were copied: the producer may scribble afterwards.
	unsafe.Slice(v.M.DLTensor.Shape, 2)[0] = 1000
	unsafe.Slice(v.M.DLTensor.Strides, 2)[0] = -1000
	assert.Equal(t, []int64{2, 1}, tt.Shape)
	assert.Equal(t, []int64{2, 77}, tt.Strides)
	// Not CPU memory: no views, no copies.
	_, err = tt.AsFloat32s()
	invalid.Require(t, err, godlpack.ErrDevice)
	_, err = tt.Copy()
	invalid.Require(t, err, godlpack.ErrDevice)
	assert.Zero(t, v.Calls())
	require.NoError(t, tt.Close())
	assert.EqualValues(t, 1, v.Calls())
}

func TestEveryDeviceTypeAccepted(t *testing.T) {
	for _, dt := range godlpack.DeviceTypes() {
		v := testprod.NewVersioned()
		goodTensor(t, &v.M.DLTensor)
		v.M.DLTensor.Device = godlpack.DLDevice{DeviceType: int32(dt), DeviceID: 1}
		tt, err := consumer.ImportVersioned(v.M)
		require.NoError(t, err, "%v", dt)
		assert.Equal(t, dt, tt.Device.Type)
		_, err = tt.AsFloat32s()
		if dt.IsCPUAccessible() {
			assert.NoError(t, err, "%v", dt)
		} else {
			invalid.Require(t, err, godlpack.ErrDevice, "%v", dt)
		}
		require.NoError(t, tt.Close())
		v.Free()
	}
}

func TestEveryDTypeAccepted(t *testing.T) {
	for _, dt := range godlpack.DTypes() {
		v := testprod.NewVersioned()
		goodTensor(t, &v.M.DLTensor)
		v.M.DLTensor.DType = godlpack.DLDataType(dt)
		tt, err := consumer.ImportVersioned(v.M)
		require.NoError(t, err, "%v", dt)
		assert.Equal(t, dt, tt.DType)
		require.NoError(t, tt.Close())
		v.Free()
	}
}

func TestSubbytePadded(t *testing.T) {
	f4 := godlpack.DLDataType{Code: godlpack.CodeFloat4E2M1FN, Bits: 4, Lanes: 1}
	v := testprod.NewVersioned()
	defer v.Free()
	goodTensor(t, &v.M.DLTensor)
	v.M.DLTensor.DType = f4
	v.M.Flags = godlpack.FlagIsSubbyteTypePadded
	tt, err := consumer.ImportVersioned(v.M)
	require.NoError(t, err)
	assert.EqualValues(t, 8, tt.DType.Bits, "padded elements take a byte each")
	_, hi, err := tt.ByteSpan()
	require.NoError(t, err)
	assert.EqualValues(t, 6, hi)
	require.NoError(t, tt.Close())

	// Packed: 6 float4 in 3 bytes.
	v2 := testprod.NewVersioned()
	defer v2.Free()
	goodTensor(t, &v2.M.DLTensor)
	v2.M.DLTensor.DType = f4
	tt, err = consumer.ImportVersioned(v2.M)
	require.NoError(t, err)
	_, hi, err = tt.ByteSpan()
	require.NoError(t, err)
	assert.EqualValues(t, 3, hi)
	require.NoError(t, tt.Close())

	// Padding doubles the byte span: one that fits packed may not fit padded.
	v3 := testprod.NewVersioned()
	defer v3.Free()
	goodTensor(t, &v3.M.DLTensor)
	v3.M.DLTensor.DType = f4
	v3.M.DLTensor.NDim = 1
	v3.M.DLTensor.Shape = cDims(t, 1<<60+1)
	v3.M.DLTensor.Strides = cDims(t, 1)
	_, err = consumer.ValidateVersioned(v3.M)
	require.NoError(t, err, "4*(2^60+1) bits fit in int64")
	v3.M.Flags = godlpack.FlagIsSubbyteTypePadded
	_, err = consumer.ImportVersioned(v3.M)
	invalid.Require(t, err, godlpack.ErrOverflow, "8*(2^60+1) bits overflow int64")
	assert.EqualValues(t, 1, v3.Calls(), "a refused import still calls the deleter once")
}

// TestDanglingPointersOfEmptyTensors: producers written in Rust hand out
// NonNull::dangling() (the alignment, e.g. 0x4 or 0x8) for the data of empty
// tensors and the shape of 0-d ones. They must be accepted and must never
// reach a Go pointer variable, where the runtime would abort the process.
// Fresh goroutines have small stacks, so stack copies happen during the import.
func TestDanglingPointersOfEmptyTensors(t *testing.T) {
	const rounds = 200
	errs := make(chan error, rounds)
	for i := 0; i < rounds; i++ {
		go func(i int) {
			v := testprod.NewVersioned()
			defer v.Free()
			dl := &v.M.DLTensor
			dl.Device = godlpack.DLDevice{DeviceType: int32(godlpack.CPU)}
			dl.DType = godlpack.DLDataType{Code: godlpack.CodeFloat, Bits: 32, Lanes: 1}
			testprod.SetAddr(&dl.Data, 4)
			if i%2 == 0 {
				dl.NDim = 2
				dl.Shape = testprod.Int64s(0, 3)
				dl.Strides = testprod.Int64s(3, 1)
				defer testprod.Free(dl.Shape)
				defer testprod.Free(dl.Strides)
			} else {
				// 0-d with dangling shape and strides: has one element, so
				// the dangling data is refused, but nothing may crash.
				testprod.SetInt64sAddr(&dl.Shape, 8)
				testprod.SetInt64sAddr(&dl.Strides, 8)
			}
			tt, err := consumer.ImportVersioned(v.M)
			if i%2 == 0 {
				if err == nil {
					if tt.Data != nil {
						err = errors.New("dangling data kept")
					} else if b, cerr := tt.Copy(); cerr != nil || len(b) != 0 {
						err = fmt.Errorf("copy of empty tensor: %v %v", b, cerr)
					} else {
						err = tt.Close()
					}
				}
			} else if errors.Is(err, godlpack.ErrNilData) {
				err = nil
			} else {
				err = fmt.Errorf("0-d dangling data: got %v", err)
			}
			if err == nil && v.Calls() != 1 {
				err = fmt.Errorf("deleter called %d times", v.Calls())
			}
			errs <- err
		}(i)
	}
	for i := 0; i < rounds; i++ {
		require.NoError(t, <-errs)
	}
}
