package godlpack

import (
	"fmt"
	"strconv"
	"strings"
)

// DType is a DLPack element type: type code, bits per lane and lane count.
type DType struct {
	Code  uint8
	Bits  uint8
	Lanes uint16
}

// namedType pairs a type with its NumPy-style name (tables_gen.go).
type namedType struct {
	name string
	dt   DType
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
var knownBits = func() (k [maxCode + 1]uint16) {
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

// String gives the NumPy-style name ("float32", "bfloat16", ...); vectors
// (lanes > 1) get LanesSeparator and the lane count ("float32x4",
// "float4_e2m1fnx2") and unknown types a descriptive form.
func (d DType) String() string {
	s := d.scalar()
	for _, n := range namedTypes {
		if n.dt == s {
			if d.Lanes != 1 {
				return n.name + LanesSeparator + strconv.Itoa(int(d.Lanes))
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
	if i := strings.LastIndex(name, LanesSeparator); i > 0 {
		if n, err := strconv.ParseUint(name[i+len(LanesSeparator):], 10, 16); err == nil && n > 0 {
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
