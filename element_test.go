package godlpack_test

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"

	"github.com/godlpack/godlpack"
)

type myFloat float32
type myBool bool

func checkDTypeOf[T godlpack.Element](t *testing.T, want godlpack.DType) {
	t.Helper()
	got := godlpack.DTypeOf[T]()
	assert.Equal(t, want, got)
	var z T
	assert.EqualValues(t, unsafe.Sizeof(z), got.ItemSize(), "%v", got)
}

func TestDTypeOf(t *testing.T) {
	checkDTypeOf[bool](t, godlpack.Bool)
	checkDTypeOf[int8](t, godlpack.Int8)
	checkDTypeOf[int16](t, godlpack.Int16)
	checkDTypeOf[int32](t, godlpack.Int32)
	checkDTypeOf[int64](t, godlpack.Int64)
	checkDTypeOf[uint8](t, godlpack.Uint8)
	checkDTypeOf[uint16](t, godlpack.Uint16)
	checkDTypeOf[uint32](t, godlpack.Uint32)
	checkDTypeOf[uint64](t, godlpack.Uint64)
	checkDTypeOf[float32](t, godlpack.Float32)
	checkDTypeOf[float64](t, godlpack.Float64)
	checkDTypeOf[complex64](t, godlpack.Complex64)
	checkDTypeOf[complex128](t, godlpack.Complex128)
	checkDTypeOf[myFloat](t, godlpack.Float32)
	checkDTypeOf[myBool](t, godlpack.Bool)
}
