package gopydl

// Per-dtype forms of export, view and data, one pattern per Go element type
// (gopy cannot wrap generic functions).

// ExportBool returns a fresh DLManagedTensorVersioned* viewing data (pinned
// until its deleter runs) with shape (nil: 1-d).
func ExportBool(data []bool, shape []int64) (uintptr, error) { return export(data, shape, false) }

// ViewBool imports ptr as a CPU, contiguous bool array (BufferError otherwise).
func ViewBool(ptr uintptr) (*Array, error) { return view[bool](ptr, false) }

// MutableBool is ViewBool that also refuses read-only arrays.
func MutableBool(ptr uintptr) (*Array, error) { return view[bool](ptr, true) }

// Bools returns the elements as a []bool aliasing the array's memory.
func (a *Array) Bools() ([]bool, error) { return data[bool](a) }

// ExportInt8 returns a fresh DLManagedTensorVersioned* viewing data (pinned
// until its deleter runs) with shape (nil: 1-d).
func ExportInt8(data []int8, shape []int64) (uintptr, error) { return export(data, shape, false) }

// ViewInt8 imports ptr as a CPU, contiguous int8 array (BufferError otherwise).
func ViewInt8(ptr uintptr) (*Array, error) { return view[int8](ptr, false) }

// MutableInt8 is ViewInt8 that also refuses read-only arrays.
func MutableInt8(ptr uintptr) (*Array, error) { return view[int8](ptr, true) }

// Int8s returns the elements as a []int8 aliasing the array's memory.
func (a *Array) Int8s() ([]int8, error) { return data[int8](a) }

// ExportInt16 returns a fresh DLManagedTensorVersioned* viewing data (pinned
// until its deleter runs) with shape (nil: 1-d).
func ExportInt16(data []int16, shape []int64) (uintptr, error) { return export(data, shape, false) }

// ViewInt16 imports ptr as a CPU, contiguous int16 array (BufferError otherwise).
func ViewInt16(ptr uintptr) (*Array, error) { return view[int16](ptr, false) }

// MutableInt16 is ViewInt16 that also refuses read-only arrays.
func MutableInt16(ptr uintptr) (*Array, error) { return view[int16](ptr, true) }

// Int16s returns the elements as a []int16 aliasing the array's memory.
func (a *Array) Int16s() ([]int16, error) { return data[int16](a) }

// ExportInt32 returns a fresh DLManagedTensorVersioned* viewing data (pinned
// until its deleter runs) with shape (nil: 1-d).
func ExportInt32(data []int32, shape []int64) (uintptr, error) { return export(data, shape, false) }

// ViewInt32 imports ptr as a CPU, contiguous int32 array (BufferError otherwise).
func ViewInt32(ptr uintptr) (*Array, error) { return view[int32](ptr, false) }

// MutableInt32 is ViewInt32 that also refuses read-only arrays.
func MutableInt32(ptr uintptr) (*Array, error) { return view[int32](ptr, true) }

// Int32s returns the elements as a []int32 aliasing the array's memory.
func (a *Array) Int32s() ([]int32, error) { return data[int32](a) }

// ExportInt64 returns a fresh DLManagedTensorVersioned* viewing data (pinned
// until its deleter runs) with shape (nil: 1-d).
func ExportInt64(data []int64, shape []int64) (uintptr, error) { return export(data, shape, false) }

// ViewInt64 imports ptr as a CPU, contiguous int64 array (BufferError otherwise).
func ViewInt64(ptr uintptr) (*Array, error) { return view[int64](ptr, false) }

// MutableInt64 is ViewInt64 that also refuses read-only arrays.
func MutableInt64(ptr uintptr) (*Array, error) { return view[int64](ptr, true) }

// Int64s returns the elements as a []int64 aliasing the array's memory.
func (a *Array) Int64s() ([]int64, error) { return data[int64](a) }

// ExportUint8 returns a fresh DLManagedTensorVersioned* viewing data (pinned
// until its deleter runs) with shape (nil: 1-d).
func ExportUint8(data []uint8, shape []int64) (uintptr, error) { return export(data, shape, false) }

// ViewUint8 imports ptr as a CPU, contiguous uint8 array (BufferError otherwise).
func ViewUint8(ptr uintptr) (*Array, error) { return view[uint8](ptr, false) }

// MutableUint8 is ViewUint8 that also refuses read-only arrays.
func MutableUint8(ptr uintptr) (*Array, error) { return view[uint8](ptr, true) }

// Uint8s returns the elements as a []uint8 aliasing the array's memory.
func (a *Array) Uint8s() ([]uint8, error) { return data[uint8](a) }

// ExportUint16 returns a fresh DLManagedTensorVersioned* viewing data (pinned
// until its deleter runs) with shape (nil: 1-d).
func ExportUint16(data []uint16, shape []int64) (uintptr, error) { return export(data, shape, false) }

// ViewUint16 imports ptr as a CPU, contiguous uint16 array (BufferError otherwise).
func ViewUint16(ptr uintptr) (*Array, error) { return view[uint16](ptr, false) }

// MutableUint16 is ViewUint16 that also refuses read-only arrays.
func MutableUint16(ptr uintptr) (*Array, error) { return view[uint16](ptr, true) }

// Uint16s returns the elements as a []uint16 aliasing the array's memory.
func (a *Array) Uint16s() ([]uint16, error) { return data[uint16](a) }

// ExportUint32 returns a fresh DLManagedTensorVersioned* viewing data (pinned
// until its deleter runs) with shape (nil: 1-d).
func ExportUint32(data []uint32, shape []int64) (uintptr, error) { return export(data, shape, false) }

// ViewUint32 imports ptr as a CPU, contiguous uint32 array (BufferError otherwise).
func ViewUint32(ptr uintptr) (*Array, error) { return view[uint32](ptr, false) }

// MutableUint32 is ViewUint32 that also refuses read-only arrays.
func MutableUint32(ptr uintptr) (*Array, error) { return view[uint32](ptr, true) }

// Uint32s returns the elements as a []uint32 aliasing the array's memory.
func (a *Array) Uint32s() ([]uint32, error) { return data[uint32](a) }

// ExportUint64 returns a fresh DLManagedTensorVersioned* viewing data (pinned
// until its deleter runs) with shape (nil: 1-d).
func ExportUint64(data []uint64, shape []int64) (uintptr, error) { return export(data, shape, false) }

// ViewUint64 imports ptr as a CPU, contiguous uint64 array (BufferError otherwise).
func ViewUint64(ptr uintptr) (*Array, error) { return view[uint64](ptr, false) }

// MutableUint64 is ViewUint64 that also refuses read-only arrays.
func MutableUint64(ptr uintptr) (*Array, error) { return view[uint64](ptr, true) }

// Uint64s returns the elements as a []uint64 aliasing the array's memory.
func (a *Array) Uint64s() ([]uint64, error) { return data[uint64](a) }

// ExportFloat32 returns a fresh DLManagedTensorVersioned* viewing data (pinned
// until its deleter runs) with shape (nil: 1-d).
func ExportFloat32(data []float32, shape []int64) (uintptr, error) { return export(data, shape, false) }

// ViewFloat32 imports ptr as a CPU, contiguous float32 array (BufferError otherwise).
func ViewFloat32(ptr uintptr) (*Array, error) { return view[float32](ptr, false) }

// MutableFloat32 is ViewFloat32 that also refuses read-only arrays.
func MutableFloat32(ptr uintptr) (*Array, error) { return view[float32](ptr, true) }

// Float32s returns the elements as a []float32 aliasing the array's memory.
func (a *Array) Float32s() ([]float32, error) { return data[float32](a) }

// ExportFloat64 returns a fresh DLManagedTensorVersioned* viewing data (pinned
// until its deleter runs) with shape (nil: 1-d).
func ExportFloat64(data []float64, shape []int64) (uintptr, error) { return export(data, shape, false) }

// ViewFloat64 imports ptr as a CPU, contiguous float64 array (BufferError otherwise).
func ViewFloat64(ptr uintptr) (*Array, error) { return view[float64](ptr, false) }

// MutableFloat64 is ViewFloat64 that also refuses read-only arrays.
func MutableFloat64(ptr uintptr) (*Array, error) { return view[float64](ptr, true) }

// Float64s returns the elements as a []float64 aliasing the array's memory.
func (a *Array) Float64s() ([]float64, error) { return data[float64](a) }

// ExportComplex64 returns a fresh DLManagedTensorVersioned* viewing data (pinned
// until its deleter runs) with shape (nil: 1-d).
func ExportComplex64(data []complex64, shape []int64) (uintptr, error) {
	return export(data, shape, false)
}

// ViewComplex64 imports ptr as a CPU, contiguous complex64 array (BufferError otherwise).
func ViewComplex64(ptr uintptr) (*Array, error) { return view[complex64](ptr, false) }

// MutableComplex64 is ViewComplex64 that also refuses read-only arrays.
func MutableComplex64(ptr uintptr) (*Array, error) { return view[complex64](ptr, true) }

// Complex64s returns the elements as a []complex64 aliasing the array's memory.
func (a *Array) Complex64s() ([]complex64, error) { return data[complex64](a) }

// ExportComplex128 returns a fresh DLManagedTensorVersioned* viewing data (pinned
// until its deleter runs) with shape (nil: 1-d).
func ExportComplex128(data []complex128, shape []int64) (uintptr, error) {
	return export(data, shape, false)
}

// ViewComplex128 imports ptr as a CPU, contiguous complex128 array (BufferError otherwise).
func ViewComplex128(ptr uintptr) (*Array, error) { return view[complex128](ptr, false) }

// MutableComplex128 is ViewComplex128 that also refuses read-only arrays.
func MutableComplex128(ptr uintptr) (*Array, error) { return view[complex128](ptr, true) }

// Complex128s returns the elements as a []complex128 aliasing the array's memory.
func (a *Array) Complex128s() ([]complex128, error) { return data[complex128](a) }
