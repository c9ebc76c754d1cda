package main

// The one source of the dtype, device and limit tables. Edit here, then run
// `go generate ./...` (or `make generate`): Go (tables_gen.go), C
// (core/tables_gen.[ch]) and Python (python/godlpack/_tables.py) follow.
// Version numbers are read from where they are defined: the DLPack version
// from include/godlpack/dlpack.h (upstream's header), the C API ABI version
// from include/godlpack/godlpack.h, the package version from pyproject.toml.

// codes are DLDataTypeCode values of dlpack.h (Go constant suffix, value).
var codes = []code{
	{"Int", 0}, {"UInt", 1}, {"Float", 2}, {"OpaqueHandle", 3}, {"Bfloat", 4},
	{"Complex", 5}, {"Bool", 6},
	{"Float8E3M4", 7}, {"Float8E4M3", 8}, {"Float8E4M3B11FNUZ", 9}, {"Float8E4M3FN", 10},
	{"Float8E4M3FNUZ", 11}, {"Float8E5M2", 12}, {"Float8E5M2FNUZ", 13}, {"Float8E8M0FNU", 14},
	{"Float6E2M3FN", 15}, {"Float6E3M2FN", 16}, {"Float4E2M1FN", 17},
}

// dtypes are the element types godlpack carries, named as NumPy and
// ml_dtypes name them, in the order every listing uses. goName is the
// exported Go variable ("" for none).
var dtypes = []dtype{
	{"bool", "Bool", "Bool", 8},
	{"int8", "Int8", "Int", 8}, {"int16", "Int16", "Int", 16}, {"int32", "Int32", "Int", 32}, {"int64", "Int64", "Int", 64},
	{"uint8", "Uint8", "UInt", 8}, {"uint16", "Uint16", "UInt", 16}, {"uint32", "Uint32", "UInt", 32}, {"uint64", "Uint64", "UInt", 64},
	{"float16", "Float16", "Float", 16}, {"float32", "Float32", "Float", 32}, {"float64", "Float64", "Float", 64},
	{"bfloat16", "Bfloat16", "Bfloat", 16},
	{"complex64", "Complex64", "Complex", 64}, {"complex128", "Complex128", "Complex", 128},
	{"float8_e3m4", "", "Float8E3M4", 8},
	{"float8_e4m3", "", "Float8E4M3", 8},
	{"float8_e4m3b11fnuz", "", "Float8E4M3B11FNUZ", 8},
	{"float8_e4m3fn", "", "Float8E4M3FN", 8},
	{"float8_e4m3fnuz", "", "Float8E4M3FNUZ", 8},
	{"float8_e5m2", "", "Float8E5M2", 8},
	{"float8_e5m2fnuz", "", "Float8E5M2FNUZ", 8},
	{"float8_e8m0fnu", "", "Float8E8M0FNU", 8},
	{"float6_e2m3fn", "", "Float6E2M3FN", 6},
	{"float6_e3m2fn", "", "Float6E3M2FN", 6},
	{"float4_e2m1fn", "", "Float4E2M1FN", 4},
}

// lanesSeparator joins a dtype's name and its lane count in the name of a
// vector dtype (lanes > 1): "float32x4", "float4_e2m1fnx2" (PyTorch's
// float4_e2m1fn_x2), as TVM spells them. Go's DType.String and ParseDType and
// the Python Tensor.dtype use it.
const lanesSeparator = "x"

// devices are the DLDeviceType values of DLPack 1.3. cpu marks memory the
// host CPU may dereference.
var devices = []device{
	{"cpu", "CPU", 1, true},
	{"cuda", "CUDA", 2, false},
	{"cuda_host", "CUDAHost", 3, true},
	{"opencl", "OpenCL", 4, false},
	{"vulkan", "Vulkan", 7, false},
	{"metal", "Metal", 8, false},
	{"vpi", "VPI", 9, false},
	{"rocm", "ROCM", 10, false},
	{"rocm_host", "ROCMHost", 11, true},
	{"ext_dev", "ExtDev", 12, false},
	{"cuda_managed", "CUDAManaged", 13, true},
	{"oneapi", "OneAPI", 14, false},
	{"webgpu", "WebGPU", 15, false},
	{"hexagon", "Hexagon", 16, false},
	{"maia", "MAIA", 17, false},
	{"trn", "Trn", 18, false},
}

// limits are the import rules' numbers (name, value, why).
var limits = []limit{
	{"MaxNDim", "MAX_NDIM", 64, "the most dimensions accepted; no real library goes past 64"},
	{"MaxImportMajor", "MAX_IMPORT_MAJOR", 1, "the newest DLPack major version whose layout we know"},
	{"MinDataAddress", "MIN_DATA_ADDRESS", 4096, "lower data addresses count as NULL: producers hand dangling pointers such as 0x4 for empty tensors, and no data lives in the first page"},
	{"StridesRequiredMinor", "STRIDES_REQUIRED_MINOR", 2, "from DLPack 1.2 on, strides must be non-NULL when ndim > 0"},
}

// refusals are the kinds of import refusal, in the order of the C enum
// (GDL_E_*, 0 is success) and of the Go sentinel errors (Err*).
var refusals = []refusal{
	{"NilPointer", "NIL_POINTER", "NULL pointer"},
	{"Version", "VERSION", "unsupported DLPack version"},
	{"NDim", "NDIM", "invalid ndim"},
	{"Shape", "SHAPE", "invalid shape"},
	{"Strides", "STRIDES", "invalid strides"},
	{"Overflow", "OVERFLOW", "size overflows int64"},
	{"DType", "DTYPE", "unsupported dtype"},
	{"Lanes", "LANES", "invalid lanes"},
	{"Device", "DEVICE", "unsupported device"},
	{"NilData", "NIL_DATA", "NULL data with non-zero size"},
	{"Flags", "FLAGS", "invalid flags"},
}
