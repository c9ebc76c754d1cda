package godlpack

import (
	"fmt"
	"strconv"
	"strings"
)

// DLPack data type codes (DLDataTypeCode).
const (
	CodeInt               uint8 = 0
	CodeUInt              uint8 = 1
	CodeFloat             uint8 = 2
	CodeOpaqueHandle      uint8 = 3
	CodeBfloat            uint8 = 4
	CodeComplex           uint8 = 5
	CodeBool              uint8 = 6
	CodeFloat8E3M4        uint8 = 7
	CodeFloat8E4M3        uint8 = 8
	CodeFloat8E4M3B11FNUZ uint8 = 9
	CodeFloat8E4M3FN      uint8 = 10
	CodeFloat8E4M3FNUZ    uint8 = 11
	CodeFloat8E5M2        uint8 = 12
	CodeFloat8E5M2FNUZ    uint8 = 13
	CodeFloat8E8M0FNU     uint8 = 14
	CodeFloat6E2M3FN      uint8 = 15
	CodeFloat6E3M2FN      uint8 = 16
	CodeFloat4E2M1FN      uint8 = 17
)

// DType is a DLPack element type: type code, bits per lane and lane count.
type DType struct {
	Code  uint8
	Bits  uint8
	Lanes uint16
}

// The common element types, named as NumPy (and ml_dtypes) name them.
var (
	Bool       = DType{CodeBool, 8, 1}
	Int8       = DType{CodeInt, 8, 1}
	Int16      = DType{CodeInt, 16, 1}
	Int32      = DType{CodeInt, 32, 1}
	Int64      = DType{CodeInt, 64, 1}
	Uint8      = DType{CodeUInt, 8, 1}
	Uint16     = DType{CodeUInt, 16, 1}
	Uint32     = DType{CodeUInt, 32, 1}
	Uint64     = DType{CodeUInt, 64, 1}
	Float16    = DType{CodeFloat, 16, 1}
	Float32    = DType{CodeFloat, 32, 1}
	Float64    = DType{CodeFloat, 64, 1}
	Bfloat16   = DType{CodeBfloat, 16, 1}
	Complex64  = DType{CodeComplex, 64, 1}
	Complex128 = DType{CodeComplex, 128, 1}
)

// namedTypes lists every (code, bits) pair we can carry, with its name.
// Lanes are always 1 here; vector types are rejected on import.
var namedTypes = []struct {
	name string
	dt   DType
}{
	{"bool", Bool},
	{"int8", Int8}, {"int16", Int16}, {"int32", Int32}, {"int64", Int64},
	{"uint8", Uint8}, {"uint16", Uint16}, {"uint32", Uint32}, {"uint64", Uint64},
	{"float16", Float16}, {"float32", Float32}, {"float64", Float64},
	{"bfloat16", Bfloat16},
	{"complex64", Complex64}, {"complex128", Complex128},
	{"float8_e3m4", DType{CodeFloat8E3M4, 8, 1}},
	{"float8_e4m3", DType{CodeFloat8E4M3, 8, 1}},
	{"float8_e4m3b11fnuz", DType{CodeFloat8E4M3B11FNUZ, 8, 1}},
	{"float8_e4m3fn", DType{CodeFloat8E4M3FN, 8, 1}},
	{"float8_e4m3fnuz", DType{CodeFloat8E4M3FNUZ, 8, 1}},
	{"float8_e5m2", DType{CodeFloat8E5M2, 8, 1}},
	{"float8_e5m2fnuz", DType{CodeFloat8E5M2FNUZ, 8, 1}},
	{"float8_e8m0fnu", DType{CodeFloat8E8M0FNU, 8, 1}},
	{"float6_e2m3fn", DType{CodeFloat6E2M3FN, 6, 1}},
	{"float6_e3m2fn", DType{CodeFloat6E3M2FN, 6, 1}},
	{"float4_e2m1fn", DType{CodeFloat4E2M1FN, 4, 1}},
}

// DTypes returns every supported element type in a stable order.
func DTypes() []DType {
	out := make([]DType, len(namedTypes))
	for i, n := range namedTypes {
		out[i] = n.dt
	}
	return out
}

func (d DType) scalar() DType { return DType{d.Code, d.Bits, 1} }

// Known reports whether the code and bit width name a type we understand.
func (d DType) Known() bool {
	return int(d.Code) < len(knownBits) && knownBits[d.Code]&bitsMask(d.Bits) != 0
}

// knownBits[code] has bitsMask(bits) set for every known (code, bits) pair:
// Known sits on the import hot path, so it is a table lookup.
var knownBits = func() (k [CodeFloat4E2M1FN + 1]uint16) {
	for _, n := range namedTypes {
		k[n.dt.Code] |= bitsMask(n.dt.Bits)
	}
	return k
}()

func bitsMask(bits uint8) uint16 {
	switch bits {
	case 4:
		return 1 << 0
	case 6:
		return 1 << 1
	case 8:
		return 1 << 2
	case 16:
		return 1 << 3
	case 32:
		return 1 << 4
	case 64:
		return 1 << 5
	case 128:
		return 1 << 6
	}
	return 0
}

// String gives the NumPy-style name ("float32", "bfloat16", ...); vectors get
// an "xN" suffix and unknown types a descriptive form.
func (d DType) String() string {
	s := d.scalar()
	for _, n := range namedTypes {
		if n.dt == s {
			if d.Lanes != 1 {
				return n.name + "x" + strconv.Itoa(int(d.Lanes))
			}
			return n.name
		}
	}
	return fmt.Sprintf("dtype(code=%d, bits=%d, lanes=%d)", d.Code, d.Bits, d.Lanes)
}

// ParseDType is the inverse of String for known types; it also accepts the
// short aliases "float", "int", "complex" and "half".
func ParseDType(name string) (DType, error) {
	name = strings.TrimSpace(strings.ToLower(name))
	switch name {
	case "float", "double":
		return Float64, nil
	case "int", "long":
		return Int64, nil
	case "complex":
		return Complex128, nil
	case "half":
		return Float16, nil
	}
	// Look the whole name up first: "complex64" contains an 'x' that is not
	// a lanes suffix.
	if dt, ok := lookupDType(name); ok {
		return dt, nil
	}
	if i := strings.LastIndexByte(name, 'x'); i > 0 {
		if n, err := strconv.ParseUint(name[i+1:], 10, 16); err == nil && n > 0 {
			if dt, ok := lookupDType(name[:i]); ok {
				dt.Lanes = uint16(n)
				return dt, nil
			}
		}
	}
	return DType{}, fmt.Errorf("godlpack: unknown dtype %q", name)
}

func lookupDType(name string) (DType, bool) {
	for _, n := range namedTypes {
		if n.name == name {
			return n.dt, true
		}
	}
	return DType{}, false
}

// BitsPerElement is bits × lanes.
func (d DType) BitsPerElement() int64 { return int64(d.Bits) * int64(d.Lanes) }

// ItemSize is the size of one element in bytes, or 0 for sub-byte types.
func (d DType) ItemSize() int64 {
	b := d.BitsPerElement()
	if b%8 != 0 {
		return 0
	}
	return b / 8
}

// IsSubByte reports whether elements are narrower than a byte (float4/float6).
func (d DType) IsSubByte() bool { return d.BitsPerElement() < 8 }
