package producer

import (
	"math"
	"unsafe"

	"github.com/godlpack/godlpack"
	"github.com/godlpack/godlpack/core"
)

// FromSlice exports data zero-copy, viewed with shape and strides (elements;
// nil strides means row-major). The slice is pinned with runtime.Pinner until
// the Source is closed and every export has been deleted; the caller must not
// resize it meanwhile. onFinal, if not nil, runs once after that.
func FromSlice[T godlpack.Element](data []T, shape, strides []int64, readOnly bool, onFinal func()) (*Source, error) {
	return FromSliceAs(data, godlpack.DTypeOf[T](), shape, strides, readOnly, onFinal)
}

// FromSliceAs is FromSlice with an explicit dtype of the same element size,
// e.g. []uint16 carrying float16 or bfloat16 bits.
func FromSliceAs[T godlpack.Element](data []T, dt godlpack.DType, shape, strides []int64, readOnly bool, onFinal func()) (*Source, error) {
	var z T
	if dt.ItemSize() != int64(unsafe.Sizeof(z)) || !dt.Known() || dt.Lanes != 1 {
		return nil, godlpack.Invalid(godlpack.ErrDType, "dtype %v does not match Go element size %d", dt, unsafe.Sizeof(z))
	}
	t := godlpack.Tensor{Shape: append([]int64(nil), shape...), DType: dt, Device: godlpack.CPUDevice, ReadOnly: readOnly}
	if strides != nil {
		t.Strides = append([]int64(nil), strides...)
	}
	if err := checkFits(&t, int64(len(data))*int64(unsafe.Sizeof(z))); err != nil {
		return nil, err
	}
	g := &goMemory{keep: data, onFinal: onFinal}
	if len(data) > 0 {
		// Pin the backing array: C will hold its address after we return.
		g.pin.Pin(&data[0])
		t.Data = unsafe.Pointer(&data[0])
	}
	lo, _, _ := t.ByteSpan()
	if lo < 0 {
		// Negative strides: the first element is not at the start of the slice.
		t.ByteOffset = uint64(-lo)
	}
	owner := core.GoOwner(g)
	if owner.Nil() {
		g.Release()
		return nil, ErrOutOfMemory
	}
	return newSource(t, owner)
}

// checkFits validates shape/strides and that the view lies within size bytes,
// with the view's first element placed so that its lowest byte is at 0.
func checkFits(t *godlpack.Tensor, size int64) error {
	if len(t.Shape) > godlpack.MaxNDim {
		return godlpack.Invalid(godlpack.ErrNDim, "ndim %d > %d", len(t.Shape), godlpack.MaxNDim)
	}
	if t.Strides != nil && len(t.Strides) != len(t.Shape) {
		return godlpack.Invalid(godlpack.ErrStrides, "%d strides for %d dims", len(t.Strides), len(t.Shape))
	}
	lo, hi, err := t.ByteSpan()
	if err != nil {
		return err
	}
	if hi-lo > size {
		return godlpack.Invalid(godlpack.ErrShape, "view spans %d bytes but the memory has %d", hi-lo, size)
	}
	return nil
}

// FromPointer exports n elements of Go memory at data (the first element of
// a Go slice or array, kept alive by keep) zero-copy with the given shape,
// pinned until the last export is deleted. For callers that hold the
// element type only at run time (reflection); FromSlice is the typed form.
func FromPointer(data unsafe.Pointer, keep any, dt godlpack.DType, shape []int64) (*Source, error) {
	if !dt.Known() || dt.Lanes != 1 || dt.IsSubByte() {
		return nil, godlpack.Invalid(godlpack.ErrDType, "cannot export Go memory as %v", dt)
	}
	t := godlpack.Tensor{Shape: append([]int64(nil), shape...), DType: dt, Device: godlpack.CPUDevice, Data: data}
	if err := checkFits(&t, math.MaxInt64); err != nil {
		return nil, err
	}
	g := &goMemory{keep: keep}
	if data != nil {
		g.pin.Pin(data)
	}
	owner := core.GoOwner(g)
	if owner.Nil() {
		g.Release()
		return nil, ErrOutOfMemory
	}
	return newSource(t, owner)
}
