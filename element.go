package godlpack

import "reflect"

// Element is a Go type whose memory layout equals a DLPack dtype's.
type Element interface {
	~bool | ~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64 |
		~float32 | ~float64 | ~complex64 | ~complex128
}

// DTypeOf gives the DLPack dtype of a Go element type (named types map by
// their underlying kind).
func DTypeOf[T Element]() DType {
	return kindDTypes[reflect.TypeFor[T]().Kind()]
}

var kindDTypes = map[reflect.Kind]DType{
	reflect.Bool: Bool, reflect.Int8: Int8, reflect.Int16: Int16, reflect.Int32: Int32,
	reflect.Int64: Int64, reflect.Uint8: Uint8, reflect.Uint16: Uint16, reflect.Uint32: Uint32,
	reflect.Uint64: Uint64, reflect.Float32: Float32, reflect.Float64: Float64,
	reflect.Complex64: Complex64, reflect.Complex128: Complex128,
}

// DTypeOfKind is DTypeOf for an element kind known only at run time.
func DTypeOfKind(k reflect.Kind) (DType, bool) {
	d, ok := kindDTypes[k]
	return d, ok
}
