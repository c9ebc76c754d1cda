// Package consumer imports DLPack managed tensors made by any producer:
// it validates every field before reading through a pointer (with the C
// core's rules, core.Check*), takes ownership, and calls the producer's
// deleter exactly once.
package consumer

import (
	"unsafe"

	"github.com/godlpack/godlpack"
	"github.com/godlpack/godlpack/core"
)

// CheckVersioned refuses a versioned managed tensor that breaks the import
// rules; it allocates nothing unless it refuses.
func CheckVersioned(m *godlpack.DLManagedTensorVersioned) error { return core.CheckVersioned(m) }

// CheckLegacy is CheckVersioned for a legacy managed tensor.
func CheckLegacy(m *godlpack.DLManagedTensor) error { return core.CheckLegacy(m) }

// ValidateVersioned checks a versioned managed tensor and returns the view it
// describes (shape and strides copied into Go memory). It takes no ownership.
func ValidateVersioned(m *godlpack.DLManagedTensorVersioned) (godlpack.Tensor, error) {
	if err := core.CheckVersioned(m); err != nil {
		return godlpack.Tensor{}, err
	}
	t := viewOf(&m.DLTensor)
	t.ReadOnly = m.Flags&godlpack.FlagReadOnly != 0
	if t.DType.IsSubByte() && m.Flags&godlpack.FlagIsSubbyteTypePadded != 0 {
		t.DType.Bits = 8 // padded: each element takes a whole byte
	}
	return t, nil
}

// ValidateLegacy checks a legacy managed tensor (strides may be NULL).
func ValidateLegacy(m *godlpack.DLManagedTensor) (godlpack.Tensor, error) {
	if err := core.CheckLegacy(m); err != nil {
		return godlpack.Tensor{}, err
	}
	return viewOf(&m.DLTensor), nil
}

// ValidateDLTensor checks every field of dl before anything is dereferenced
// and copies its shape and strides. NULL strides are refused unless
// allowNilStrides (producers older than DLPack 1.2), and then mean compact.
func ValidateDLTensor(dl *godlpack.DLTensor, allowNilStrides bool) (godlpack.Tensor, error) {
	if err := core.CheckDLTensor(dl, allowNilStrides); err != nil {
		return godlpack.Tensor{}, err
	}
	return viewOf(dl), nil
}

// viewOf describes a validated DLTensor in Go memory. A data address in the
// first page counts as NULL (godlpack.MinDataAddress): the Go runtime aborts
// on such values in pointer-typed slots, and only empty views carry them.
func viewOf(dl *godlpack.DLTensor) godlpack.Tensor {
	t := godlpack.Tensor{
		DType:      godlpack.DType{Code: dl.DType.Code, Bits: dl.DType.Bits, Lanes: dl.DType.Lanes},
		Device:     godlpack.DeviceOf(dl.Device),
		ByteOffset: dl.ByteOffset,
		Shape:      append([]int64{}, dl.ShapeSlice()...),
	}
	if dl.Strides != nil {
		t.Strides = append([]int64{}, dl.StridesSlice()...)
	}
	if addr := *(*uintptr)(unsafe.Pointer(&dl.Data)); addr >= godlpack.MinDataAddress {
		t.Data = dl.Data
	}
	return t
}
