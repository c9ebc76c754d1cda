package consumer

import (
	"unsafe"

	"github.com/godlpack/godlpack"
)

// View returns the tensor's elements as a Go slice aliasing the foreign
// memory, valid until Close. It refuses closed, non-CPU, non-compact,
// unaligned and wrongly typed tensors. Do not write through it when t.ReadOnly is set;
// MutableView refuses read-only tensors instead. The slice does not keep t
// reachable: once a view is taken, only Close frees the memory (a Tensor
// dropped without Close is leaked and counted by LeakedTensors).
func View[T godlpack.Element](t *Tensor) ([]T, error) {
	if t.Closed() {
		return nil, ErrClosed
	}
	if want := godlpack.DTypeOf[T](); t.DType != want {
		return nil, godlpack.Invalid(godlpack.ErrDType, "tensor is %v, not %v", t.DType, want)
	}
	if !t.Device.IsCPUAccessible() {
		return nil, godlpack.Invalid(godlpack.ErrDevice, "%v memory is not CPU-accessible", t.Device)
	}
	if !t.IsCompact() {
		return nil, godlpack.Invalid(godlpack.ErrStrides, "tensor is not contiguous; use CopyCompact")
	}
	n, err := t.NumElements()
	if err != nil || n == 0 {
		return []T{}, err
	}
	var zero T
	if uintptr(t.First())%unsafe.Alignof(zero) != 0 {
		return nil, godlpack.Invalid(godlpack.ErrStrides, "data at %p is not aligned for %v; use CopyCompact",
			t.First(), t.DType)
	}
	t.own.viewed.Store(true)
	return unsafe.Slice((*T)(t.First()), n), nil
}

// MutableView is View for writing: it also refuses read-only tensors.
func MutableView[T godlpack.Element](t *Tensor) ([]T, error) {
	if t.ReadOnly {
		return nil, godlpack.Invalid(godlpack.ErrFlags, "tensor is read-only")
	}
	return View[T](t)
}

// Typed shorthands for View.
func (t *Tensor) AsBools() ([]bool, error)           { return View[bool](t) }
func (t *Tensor) AsInt8s() ([]int8, error)           { return View[int8](t) }
func (t *Tensor) AsInt16s() ([]int16, error)         { return View[int16](t) }
func (t *Tensor) AsInt32s() ([]int32, error)         { return View[int32](t) }
func (t *Tensor) AsInt64s() ([]int64, error)         { return View[int64](t) }
func (t *Tensor) AsUint8s() ([]uint8, error)         { return View[uint8](t) }
func (t *Tensor) AsUint16s() ([]uint16, error)       { return View[uint16](t) }
func (t *Tensor) AsUint32s() ([]uint32, error)       { return View[uint32](t) }
func (t *Tensor) AsUint64s() ([]uint64, error)       { return View[uint64](t) }
func (t *Tensor) AsFloat32s() ([]float32, error)     { return View[float32](t) }
func (t *Tensor) AsFloat64s() ([]float64, error)     { return View[float64](t) }
func (t *Tensor) AsComplex64s() ([]complex64, error) { return View[complex64](t) }
func (t *Tensor) AsComplex128s() ([]complex128, error) {
	return View[complex128](t)
}
