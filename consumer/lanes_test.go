package consumer_test

import (
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

// Vector dtypes (lanes > 1), such as PyTorch's float4_e2m1fn_x2 (code 17,
// bits 4, lanes 2), are carried as bytes: shape and strides count vectors,
// an element is bits*lanes/8 bytes, and copies move whole vectors.
var vectorDTypes = []struct {
	dt   godlpack.DType
	name string
	size int64
}{
	{godlpack.DType{Code: godlpack.CodeFloat4E2M1FN, Bits: 4, Lanes: 2}, "float4_e2m1fnx2", 1},
	{godlpack.DType{Code: godlpack.CodeFloat, Bits: 32, Lanes: 4}, "float32x4", 16},
	{godlpack.DType{Code: godlpack.CodeFloat, Bits: 16, Lanes: 2}, "float16x2", 4},
	{godlpack.DType{Code: godlpack.CodeFloat6E2M3FN, Bits: 6, Lanes: 4}, "float6_e2m3fnx4", 3},
	{godlpack.DType{Code: godlpack.CodeUInt, Bits: 8, Lanes: 3}, "uint8x3", 3},
}

// vectorTensor fills dl with a 3x4 tensor of dt over C memory holding the
// bytes 0, 1, 2, ... and returns that memory.
func vectorTensor(t *testing.T, dl *godlpack.DLTensor, dt godlpack.DType, size int64) []byte {
	buf := unsafe.Slice((*byte)(cBuffer(t, int(12*size))), 12*size)
	for i := range buf {
		buf[i] = byte(i)
	}
	dl.Data = unsafe.Pointer(&buf[0])
	dl.Device = godlpack.DLDevice{DeviceType: int32(godlpack.CPU)}
	dl.NDim = 2
	dl.DType = godlpack.DLDataType{Code: dt.Code, Bits: dt.Bits, Lanes: dt.Lanes}
	dl.Shape = cDims(t, 3, 4)
	dl.Strides = cDims(t, 4, 1)
	return buf
}

func TestImportVectorDTypesAsBytes(t *testing.T) {
	for _, c := range vectorDTypes {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.name, c.dt.String())
			assert.Equal(t, c.size, c.dt.ItemSize())
			for _, versioned := range []bool{true, false} {
				var tt *consumer.Tensor
				var buf []byte
				var calls func() int64
				if versioned {
					v := testprod.NewVersioned()
					defer v.Free()
					buf = vectorTensor(t, &v.M.DLTensor, c.dt, c.size)
					require.NoError(t, consumer.CheckVersioned(v.M))
					var err error
					tt, err = consumer.ImportVersioned(v.M)
					require.NoError(t, err)
					calls = v.Calls
				} else {
					l := testprod.NewLegacy()
					defer l.Free()
					buf = vectorTensor(t, &l.M.DLTensor, c.dt, c.size)
					require.NoError(t, consumer.CheckLegacy(l.M))
					var err error
					tt, err = consumer.ImportLegacy(l.M)
					require.NoError(t, err)
					calls = l.Calls
				}
				assert.Equal(t, c.dt, tt.DType, "the lanes are kept")
				assert.Equal(t, []int64{3, 4}, tt.Shape)
				assert.Equal(t, []int64{4, 1}, tt.Strides)
				n, err := tt.NumElements()
				require.NoError(t, err)
				assert.EqualValues(t, 12, n)
				lo, hi, err := tt.ByteSpan()
				require.NoError(t, err)
				assert.Equal(t, [2]int64{0, 12 * c.size}, [2]int64{lo, hi})

				b, err := tt.Copy()
				require.NoError(t, err)
				assert.Equal(t, buf, b)

				// Every other vector of each row: whole vectors, bytewise.
				strided := tt.Tensor
				strided.Shape, strided.Strides = []int64{3, 2}, []int64{4, 2}
				want := []byte{}
				for r := int64(0); r < 3; r++ {
					for k := int64(0); k < 2; k++ {
						at := (4*r + 2*k) * c.size
						want = append(want, buf[at:at+c.size]...)
					}
				}
				size, err := consumer.CompactSize(&strided)
				require.NoError(t, err)
				assert.Equal(t, 6*c.size, size)
				got := make([]byte, size)
				require.NoError(t, consumer.CopyCompact(got, &strided))
				assert.Equal(t, want, got)

				// Typed views read elements: a vector is none of Go's element types.
				_, err = consumer.View[uint8](tt)
				invalid.Require(t, err, godlpack.ErrDType)
				_, err = tt.AsFloat32s()
				invalid.Require(t, err, godlpack.ErrDType)

				assert.Zero(t, calls())
				require.NoError(t, tt.Close())
				assert.EqualValues(t, 1, calls(), "the deleter runs exactly once")
			}
		})
	}
}

func TestVectorLanesRefusals(t *testing.T) {
	fp4 := godlpack.CodeFloat4E2M1FN
	cases := []struct {
		name       string
		kind       error
		code, bits uint8
		lanes      uint16
		shape      []int64
		padded     bool // versioned only
	}{
		{"0 lanes", godlpack.ErrLanes, godlpack.CodeFloat, 32, 0, nil, false},
		{"0 lanes of float4", godlpack.ErrLanes, fp4, 4, 0, nil, false},
		{"3 lanes of float4: 12 bits", godlpack.ErrLanes, fp4, 4, 3, nil, false},
		{"2 lanes of float6: 12 bits", godlpack.ErrLanes, godlpack.CodeFloat6E2M3FN, 6, 2, nil, false},
		{"5 lanes of float6: 30 bits", godlpack.ErrLanes, godlpack.CodeFloat6E3M2FN, 6, 5, nil, false},
		{"unknown code with lanes", godlpack.ErrDType, 99, 8, 2, nil, false},
		{"opaque handle with lanes", godlpack.ErrDType, godlpack.CodeOpaqueHandle, 64, 2, nil, false},
		{"65535 lanes of uint8 times 2**50", godlpack.ErrOverflow, godlpack.CodeUInt, 8, 65535, []int64{1 << 50}, false},
		{"65535 lanes of complex128 times 2**41", godlpack.ErrOverflow, godlpack.CodeComplex, 128, 65535, []int64{1 << 41}, false},
		{"float32x4 bytes overflow, elements do not", godlpack.ErrOverflow, godlpack.CodeFloat, 32, 4, []int64{1 << 59}, false},
		{"padded float4x2", godlpack.ErrFlags, fp4, 4, 2, nil, true},
		{"padded float6x4", godlpack.ErrFlags, godlpack.CodeFloat6E2M3FN, 6, 4, nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mutate := func(dl *godlpack.DLTensor) {
				goodTensor(t, dl)
				dl.DType = godlpack.DLDataType{Code: c.code, Bits: c.bits, Lanes: c.lanes}
				if c.shape != nil {
					dl.NDim, dl.Shape, dl.Strides = 1, cDims(t, c.shape...), cDims(t, 1)
				} else if c.kind != godlpack.ErrFlags {
					dl.Shape = (*int64)(unreadable(t)) // refused before the shape is read
				}
			}
			v := testprod.NewVersioned()
			defer v.Free()
			mutate(&v.M.DLTensor)
			if c.padded {
				v.M.Flags = godlpack.FlagIsSubbyteTypePadded
			}
			invalid.Require(t, consumer.CheckVersioned(v.M), c.kind)
			tt, err := consumer.ImportVersioned(v.M)
			assert.Nil(t, tt)
			invalid.Require(t, err, c.kind)
			assert.EqualValues(t, 1, v.Calls(), "the deleter runs exactly once on refusal")
			if c.padded {
				return
			}
			l := testprod.NewLegacy()
			defer l.Free()
			mutate(&l.M.DLTensor)
			_, err = consumer.ImportLegacy(l.M)
			invalid.Require(t, err, c.kind)
			assert.EqualValues(t, 1, l.Calls())
		})
	}
}

func TestLargestVectorIsCountedExactly(t *testing.T) {
	// 65535 lanes of complex128: 1 MiB (less 16 bytes) per element.
	v := testprod.NewVersioned()
	defer v.Free()
	goodTensor(t, &v.M.DLTensor)
	v.M.DLTensor.DType = godlpack.DLDataType{Code: godlpack.CodeComplex, Bits: 128, Lanes: math.MaxUint16}
	v.M.DLTensor.Data = cBuffer(t, 6*65535*16)
	tt, err := consumer.ImportVersioned(v.M)
	require.NoError(t, err)
	defer tt.Close()
	assert.Equal(t, "complex128x65535", tt.DType.String())
	_, hi, err := tt.ByteSpan()
	require.NoError(t, err)
	assert.EqualValues(t, 6*65535*16, hi)
	b, err := tt.Copy()
	require.NoError(t, err)
	assert.Len(t, b, 6*65535*16)
}

func TestPaddedFlagStillAppliesToScalarSubByte(t *testing.T) {
	v := testprod.NewVersioned()
	defer v.Free()
	goodTensor(t, &v.M.DLTensor)
	v.M.DLTensor.DType = godlpack.DLDataType{Code: godlpack.CodeFloat4E2M1FN, Bits: 4, Lanes: 1}
	v.M.Flags = godlpack.FlagIsSubbyteTypePadded
	got, err := consumer.ValidateVersioned(v.M)
	require.NoError(t, err)
	assert.EqualValues(t, 8, got.DType.Bits, "padded: a byte per element")
}
