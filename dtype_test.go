package godlpack_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/godlpack/godlpack"
)

func TestDTypesAreDistinctKnownScalars(t *testing.T) {
	all := godlpack.DTypes()
	assert.Len(t, all, 26)
	seen := map[godlpack.DType]bool{}
	names := map[string]bool{}
	for _, dt := range all {
		assert.False(t, seen[dt], "duplicate %v", dt)
		seen[dt] = true
		assert.False(t, names[dt.String()], "duplicate name %s", dt)
		names[dt.String()] = true
		assert.True(t, dt.Known(), "%v", dt)
		assert.EqualValues(t, 1, dt.Lanes, "%v", dt)
		assert.NotZero(t, dt.Bits, "%v", dt)
	}
	// DTypes returns a copy.
	all[0] = godlpack.DType{Code: 99, Bits: 1, Lanes: 1}
	assert.Equal(t, godlpack.Bool, godlpack.DTypes()[0])
}

func TestDTypeStringParseRoundTrip(t *testing.T) {
	for _, dt := range godlpack.DTypes() {
		name := dt.String()
		assert.NotContains(t, name, "dtype(", "%#v has no name", dt)
		got, err := godlpack.ParseDType(name)
		if assert.NoError(t, err, name) {
			assert.Equal(t, dt, got, name)
		}
		// Case and surrounding space are ignored.
		got, err = godlpack.ParseDType("  " + strings.ToUpper(name) + "\t")
		if assert.NoError(t, err, name) {
			assert.Equal(t, dt, got, name)
		}
		// Vector forms round-trip too.
		for _, lanes := range []uint16{2, 4, 16, 65535} {
			v := godlpack.DType{Code: dt.Code, Bits: dt.Bits, Lanes: lanes}
			assert.True(t, strings.HasSuffix(v.String(), "x"+itoa(int(lanes))), v.String())
			got, err := godlpack.ParseDType(v.String())
			if assert.NoError(t, err, v.String()) {
				assert.Equal(t, v, got, v.String())
			}
		}
	}
}

func itoa(n int) string {
	var b []byte
	for n > 0 || len(b) == 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}

func TestDTypeNames(t *testing.T) {
	cases := map[godlpack.DType]string{
		godlpack.Bool: "bool", godlpack.Int8: "int8", godlpack.Int16: "int16",
		godlpack.Int32: "int32", godlpack.Int64: "int64", godlpack.Uint8: "uint8",
		godlpack.Uint16: "uint16", godlpack.Uint32: "uint32", godlpack.Uint64: "uint64",
		godlpack.Float16: "float16", godlpack.Float32: "float32", godlpack.Float64: "float64",
		godlpack.Bfloat16: "bfloat16", godlpack.Complex64: "complex64", godlpack.Complex128: "complex128",
		{Code: godlpack.CodeFloat8E3M4, Bits: 8, Lanes: 1}:        "float8_e3m4",
		{Code: godlpack.CodeFloat8E4M3, Bits: 8, Lanes: 1}:        "float8_e4m3",
		{Code: godlpack.CodeFloat8E4M3B11FNUZ, Bits: 8, Lanes: 1}: "float8_e4m3b11fnuz",
		{Code: godlpack.CodeFloat8E4M3FN, Bits: 8, Lanes: 1}:      "float8_e4m3fn",
		{Code: godlpack.CodeFloat8E4M3FNUZ, Bits: 8, Lanes: 1}:    "float8_e4m3fnuz",
		{Code: godlpack.CodeFloat8E5M2, Bits: 8, Lanes: 1}:        "float8_e5m2",
		{Code: godlpack.CodeFloat8E5M2FNUZ, Bits: 8, Lanes: 1}:    "float8_e5m2fnuz",
		{Code: godlpack.CodeFloat8E8M0FNU, Bits: 8, Lanes: 1}:     "float8_e8m0fnu",
		{Code: godlpack.CodeFloat6E2M3FN, Bits: 6, Lanes: 1}:      "float6_e2m3fn",
		{Code: godlpack.CodeFloat6E3M2FN, Bits: 6, Lanes: 1}:      "float6_e3m2fn",
		{Code: godlpack.CodeFloat4E2M1FN, Bits: 4, Lanes: 1}:      "float4_e2m1fn",
		{Code: godlpack.CodeFloat, Bits: 32, Lanes: 4}:            "float32x4",
		{Code: godlpack.CodeComplex, Bits: 64, Lanes: 2}:          "complex64x2",
		{Code: godlpack.CodeOpaqueHandle, Bits: 64, Lanes: 1}:     "dtype(code=3, bits=64, lanes=1)",
		{Code: godlpack.CodeFloat, Bits: 24, Lanes: 1}:            "dtype(code=2, bits=24, lanes=1)",
		{Code: 200, Bits: 8, Lanes: 3}:                            "dtype(code=200, bits=8, lanes=3)",
	}
	for dt, want := range cases {
		assert.Equal(t, want, dt.String(), "%#v", dt)
	}
	// The DLPack codes of the named types are those of dlpack.h.
	assert.Equal(t, godlpack.DType{Code: 6, Bits: 8, Lanes: 1}, godlpack.Bool)
	assert.Equal(t, godlpack.DType{Code: 5, Bits: 64, Lanes: 1}, godlpack.Complex64)
	assert.Equal(t, godlpack.DType{Code: 4, Bits: 16, Lanes: 1}, godlpack.Bfloat16)
	assert.EqualValues(t, 17, godlpack.CodeFloat4E2M1FN)
}

func TestParseDTypeAliasesAndVectors(t *testing.T) {
	cases := map[string]godlpack.DType{
		"float":        godlpack.Float64,
		"double":       godlpack.Float64,
		"int":          godlpack.Int64,
		"long":         godlpack.Int64,
		"complex":      godlpack.Complex128,
		"half":         godlpack.Float16,
		"HALF":         godlpack.Float16,
		"float32x4":    {Code: godlpack.CodeFloat, Bits: 32, Lanes: 4},
		"float32x1":    godlpack.Float32,
		"int8x16":      {Code: godlpack.CodeInt, Bits: 8, Lanes: 16},
		"complex64":    godlpack.Complex64,
		"complex128":   godlpack.Complex128,
		"complex64x2":  {Code: godlpack.CodeComplex, Bits: 64, Lanes: 2},
		"complex128x3": {Code: godlpack.CodeComplex, Bits: 128, Lanes: 3},
		"bfloat16x8":   {Code: godlpack.CodeBfloat, Bits: 16, Lanes: 8},
	}
	for name, want := range cases {
		got, err := godlpack.ParseDType(name)
		if assert.NoError(t, err, name) {
			assert.Equal(t, want, got, name)
		}
	}
}

func TestParseDTypeUnknown(t *testing.T) {
	for _, name := range []string{
		"", "float128", "int4", "complex32", "x", "float32x", "float32x0", "float32x65536",
		"float32x-1", "xfloat32", "float32 x4", "comple", "floatx4", "uint", "bool8", "bfloat",
		"dtype(code=2, bits=32, lanes=1)",
	} {
		_, err := godlpack.ParseDType(name)
		if assert.Error(t, err, "%q", name) {
			assert.Contains(t, err.Error(), "unknown dtype", "%q", name)
		}
	}
}

func TestDTypeKnown(t *testing.T) {
	assert.True(t, godlpack.DType{Code: godlpack.CodeFloat, Bits: 32, Lanes: 4}.Known(), "lanes do not matter")
	assert.False(t, godlpack.DType{Code: godlpack.CodeFloat, Bits: 8, Lanes: 1}.Known())
	assert.False(t, godlpack.DType{Code: godlpack.CodeOpaqueHandle, Bits: 64, Lanes: 1}.Known())
	assert.False(t, godlpack.DType{Code: godlpack.CodeBool, Bits: 1, Lanes: 1}.Known())
	assert.False(t, godlpack.DType{Code: 18, Bits: 8, Lanes: 1}.Known())
	assert.False(t, godlpack.DType{}.Known())
}

func TestItemSizeAndSubByte(t *testing.T) {
	for _, dt := range godlpack.DTypes() {
		bits := int64(dt.Bits)
		assert.Equal(t, bits, dt.BitsPerElement(), "%v", dt)
		if bits%8 == 0 {
			assert.Equal(t, bits/8, dt.ItemSize(), "%v", dt)
			assert.False(t, dt.IsSubByte(), "%v", dt)
		} else {
			assert.Zero(t, dt.ItemSize(), "%v", dt)
			assert.True(t, dt.IsSubByte(), "%v", dt)
		}
	}
	sizes := map[godlpack.DType]int64{
		godlpack.Bool: 1, godlpack.Int8: 1, godlpack.Uint8: 1, godlpack.Int16: 2, godlpack.Uint16: 2,
		godlpack.Float16: 2, godlpack.Bfloat16: 2, godlpack.Int32: 4, godlpack.Uint32: 4,
		godlpack.Float32: 4, godlpack.Int64: 8, godlpack.Uint64: 8, godlpack.Float64: 8,
		godlpack.Complex64: 8, godlpack.Complex128: 16,
	}
	for dt, want := range sizes {
		assert.Equal(t, want, dt.ItemSize(), "%v", dt)
	}
	f4 := godlpack.DType{Code: godlpack.CodeFloat4E2M1FN, Bits: 4, Lanes: 1}
	f6 := godlpack.DType{Code: godlpack.CodeFloat6E2M3FN, Bits: 6, Lanes: 1}
	assert.True(t, f4.IsSubByte())
	assert.True(t, f6.IsSubByte())
	assert.Zero(t, f6.ItemSize())
	// Two packed float4 lanes make a byte; four float6 lanes make three.
	f4x2 := godlpack.DType{Code: godlpack.CodeFloat4E2M1FN, Bits: 4, Lanes: 2}
	assert.False(t, f4x2.IsSubByte())
	assert.EqualValues(t, 1, f4x2.ItemSize())
	f6x4 := godlpack.DType{Code: godlpack.CodeFloat6E2M3FN, Bits: 6, Lanes: 4}
	assert.EqualValues(t, 3, f6x4.ItemSize())
	assert.EqualValues(t, 24, f6x4.BitsPerElement())
	f32x4 := godlpack.DType{Code: godlpack.CodeFloat, Bits: 32, Lanes: 4}
	assert.EqualValues(t, 16, f32x4.ItemSize())
	assert.EqualValues(t, 128*65535, godlpack.DType{Code: godlpack.CodeComplex, Bits: 128, Lanes: 65535}.BitsPerElement())
}

func TestDeviceTypes(t *testing.T) {
	want := map[godlpack.DeviceType]struct {
		name string
		cpu  bool
	}{
		godlpack.CPU:         {"cpu", true},
		godlpack.CUDA:        {"cuda", false},
		godlpack.CUDAHost:    {"cuda_host", true},
		godlpack.OpenCL:      {"opencl", false},
		godlpack.Vulkan:      {"vulkan", false},
		godlpack.Metal:       {"metal", false},
		godlpack.VPI:         {"vpi", false},
		godlpack.ROCM:        {"rocm", false},
		godlpack.ROCMHost:    {"rocm_host", true},
		godlpack.ExtDev:      {"ext_dev", false},
		godlpack.CUDAManaged: {"cuda_managed", true},
		godlpack.OneAPI:      {"oneapi", false},
		godlpack.WebGPU:      {"webgpu", false},
		godlpack.Hexagon:     {"hexagon", false},
		godlpack.MAIA:        {"maia", false},
		godlpack.Trn:         {"trn", false},
	}
	all := godlpack.DeviceTypes()
	require.Len(t, all, len(want))
	for i, dt := range all {
		if i > 0 {
			assert.Less(t, all[i-1], dt, "ascending order")
		}
		w, ok := want[dt]
		require.True(t, ok, "unexpected device type %d", dt)
		assert.True(t, dt.Known(), "%v", dt)
		assert.Equal(t, w.name, dt.String())
		assert.Equal(t, w.cpu, dt.IsCPUAccessible(), "%v", dt)
		d := godlpack.Device{Type: dt, ID: 3}
		assert.Equal(t, w.cpu, d.IsCPUAccessible(), "%v", d)
		assert.Equal(t, w.name+":3", d.String())
		assert.Equal(t, d, godlpack.DeviceOf(d.DLDevice()))
		assert.Equal(t, godlpack.DLDevice{DeviceType: int32(dt), DeviceID: 3}, d.DLDevice())
	}
	// The numeric values are dlpack.h's.
	assert.EqualValues(t, 1, godlpack.CPU)
	assert.EqualValues(t, 2, godlpack.CUDA)
	assert.EqualValues(t, 3, godlpack.CUDAHost)
	assert.EqualValues(t, 4, godlpack.OpenCL)
	assert.EqualValues(t, 7, godlpack.Vulkan)
	assert.EqualValues(t, 10, godlpack.ROCM)
	assert.EqualValues(t, 11, godlpack.ROCMHost)
	assert.EqualValues(t, 13, godlpack.CUDAManaged)
	assert.EqualValues(t, 18, godlpack.Trn)
	for _, unknown := range []godlpack.DeviceType{0, 5, 6, 19, -1, 1000} {
		assert.False(t, unknown.Known(), "%d", unknown)
		assert.False(t, unknown.IsCPUAccessible(), "%d", unknown)
		assert.Equal(t, "device_type("+strconvItoa(int(unknown))+")", unknown.String())
	}
	assert.Equal(t, godlpack.Device{Type: godlpack.CPU, ID: 0}, godlpack.CPUDevice)
	assert.Equal(t, "cpu:0", godlpack.CPUDevice.String())
}

func strconvItoa(n int) string {
	if n < 0 {
		return "-" + itoa(-n)
	}
	return itoa(n)
}

func TestVersion(t *testing.T) {
	assert.Equal(t, godlpack.Version{Major: 1, Minor: 3}, godlpack.APIVersion)
	assert.Equal(t, "1.3", godlpack.APIVersion.String())
	assert.Equal(t, godlpack.DLPackVersion{Major: 1, Minor: 3}, godlpack.APIVersion.DL())
	assert.EqualValues(t, 1, godlpack.MaxImportMajor)
	v := func(a, b uint32) godlpack.Version { return godlpack.Version{Major: a, Minor: b} }
	assert.True(t, v(1, 1).Less(v(1, 2)))
	assert.True(t, v(0, 9).Less(v(1, 0)))
	assert.False(t, v(1, 2).Less(v(1, 2)))
	assert.False(t, v(2, 0).Less(v(1, 9)))
	assert.False(t, v(1, 3).Less(v(1, 2)))
}
