// Package consumer imports DLPack managed tensors made by any producer:
// it validates every field before reading through a pointer, takes
// ownership, and calls the producer's deleter exactly once.
package consumer

import (
	"math"
	"unsafe"

	"github.com/godlpack/godlpack"
)

// minDataAddress is the lowest data address we keep as a pointer. Producers
// may hand a dangling non-NULL pointer for empty tensors (Rust's
// NonNull::dangling() is the alignment, e.g. 0x4), and the Go runtime aborts
// the process when it finds a value below one page in a pointer-typed stack
// slot ("invalid pointer found on stack"). No data lives in the first page.
const minDataAddress = 4096

// stridesRequired is the version from which producers must fill strides.
var stridesRequired = godlpack.Version{Major: 1, Minor: 2}

// CheckVersion refuses a versioned tensor whose layout we cannot know. Only
// the version, manager_ctx and deleter fields are stable across majors.
func CheckVersion(v godlpack.DLPackVersion) error {
	if v.Major > godlpack.MaxImportMajor {
		return godlpack.Invalid(godlpack.ErrVersion, "DLPack %d.%d is newer than the %d.x we understand",
			v.Major, v.Minor, godlpack.MaxImportMajor)
	}
	if v.Major == 0 {
		return godlpack.Invalid(godlpack.ErrVersion, "a versioned tensor claims DLPack %d.%d", v.Major, v.Minor)
	}
	return nil
}

// ValidateVersioned checks a versioned managed tensor and returns the view it
// describes (shape and strides copied into Go memory). It takes no ownership.
func ValidateVersioned(m *godlpack.DLManagedTensorVersioned) (godlpack.Tensor, error) {
	t, err := inspectVersioned(m)
	if err != nil {
		return godlpack.Tensor{}, err
	}
	return owned(t), nil
}

// CheckVersioned is ValidateVersioned without building the view: it
// allocates nothing unless it refuses, for callers on a hot path.
func CheckVersioned(m *godlpack.DLManagedTensorVersioned) error {
	_, err := inspectVersioned(m)
	return err
}

// inspectVersioned validates m; the view aliases m's shape and strides.
func inspectVersioned(m *godlpack.DLManagedTensorVersioned) (godlpack.Tensor, error) {
	if m == nil {
		return godlpack.Tensor{}, godlpack.Invalid(godlpack.ErrNilPointer, "managed tensor is NULL")
	}
	if err := CheckVersion(m.Version); err != nil {
		return godlpack.Tensor{}, err
	}
	v := godlpack.Version{Major: m.Version.Major, Minor: m.Version.Minor}
	t, addr, err := inspect(&m.DLTensor, v.Less(stridesRequired))
	if err != nil {
		return godlpack.Tensor{}, err
	}
	t.ReadOnly = m.Flags&godlpack.FlagReadOnly != 0
	if t.DType.IsSubByte() && m.Flags&godlpack.FlagIsSubbyteTypePadded != 0 {
		// Padded sub-byte elements take a whole byte each, which can make
		// the span overflow where the packed one did not: check again.
		t.DType.Bits = 8
		if err := checkExtent(&t, addr); err != nil {
			return godlpack.Tensor{}, err
		}
	}
	return t, nil
}

// ValidateLegacy checks a legacy managed tensor (strides may be NULL).
func ValidateLegacy(m *godlpack.DLManagedTensor) (godlpack.Tensor, error) {
	if m == nil {
		return godlpack.Tensor{}, godlpack.Invalid(godlpack.ErrNilPointer, "managed tensor is NULL")
	}
	return ValidateDLTensor(&m.DLTensor, true)
}

// CheckLegacy is ValidateLegacy without building the view.
func CheckLegacy(m *godlpack.DLManagedTensor) error {
	if m == nil {
		return godlpack.Invalid(godlpack.ErrNilPointer, "managed tensor is NULL")
	}
	_, _, err := inspect(&m.DLTensor, true)
	return err
}

// ValidateDLTensor checks every field of dl before anything is dereferenced
// and copies its shape and strides. NULL strides are refused unless
// allowNilStrides (producers older than DLPack 1.2), and then mean compact.
func ValidateDLTensor(dl *godlpack.DLTensor, allowNilStrides bool) (godlpack.Tensor, error) {
	t, _, err := inspect(dl, allowNilStrides)
	if err != nil {
		return godlpack.Tensor{}, err
	}
	return owned(t), nil
}

// owned copies a view's shape and strides out of the producer's memory.
func owned(t godlpack.Tensor) godlpack.Tensor {
	t.Shape = append(make([]int64, 0, len(t.Shape)), t.Shape...)
	if t.Strides != nil {
		t.Strides = append(make([]int64, 0, len(t.Strides)), t.Strides...)
	}
	return t
}

// inspect validates dl in place: the returned view's shape and strides alias
// dl's arrays, so nothing is allocated unless dl is refused. It also returns
// the producer's data address (see minDataAddress).
func inspect(dl *godlpack.DLTensor, allowNilStrides bool) (godlpack.Tensor, uintptr, error) {
	var t godlpack.Tensor
	if dl == nil {
		return t, 0, godlpack.Invalid(godlpack.ErrNilPointer, "DLTensor is NULL")
	}
	if dl.NDim < 0 || dl.NDim > godlpack.MaxNDim {
		return t, 0, godlpack.Invalid(godlpack.ErrNDim, "ndim = %d, want 0..%d", dl.NDim, godlpack.MaxNDim)
	}
	if err := checkDType(dl.DType); err != nil {
		return t, 0, err
	}
	dev := godlpack.DeviceOf(dl.Device)
	if !dev.Type.Known() {
		return t, 0, godlpack.Invalid(godlpack.ErrDevice, "unknown device type %d", dl.Device.DeviceType)
	}
	if dev.ID < 0 {
		return t, 0, godlpack.Invalid(godlpack.ErrDevice, "negative device id %d", dev.ID)
	}
	n := int(dl.NDim)
	if n > 0 && dl.Shape == nil {
		return t, 0, godlpack.Invalid(godlpack.ErrNilPointer, "shape is NULL with ndim = %d", n)
	}
	t.Shape = dl.ShapeSlice()
	if n > 0 && dl.Strides == nil && !allowNilStrides {
		return t, 0, godlpack.Invalid(godlpack.ErrStrides, "strides are NULL with ndim = %d (required since DLPack 1.2)", n)
	}
	t.Strides = dl.StridesSlice()
	t.DType = godlpack.DType{Code: dl.DType.Code, Bits: dl.DType.Bits, Lanes: dl.DType.Lanes}
	t.Device = dev
	// Read data as an integer first, and keep it only when it can be a real
	// address (see minDataAddress); otherwise it counts as NULL.
	addr := *(*uintptr)(unsafe.Pointer(&dl.Data))
	if addr >= minDataAddress {
		t.Data = dl.Data
	}
	t.ByteOffset = dl.ByteOffset
	if err := checkExtent(&t, addr); err != nil {
		return godlpack.Tensor{}, 0, err
	}
	return t, addr, nil
}

func checkDType(d godlpack.DLDataType) error {
	dt := godlpack.DType{Code: d.Code, Bits: d.Bits, Lanes: d.Lanes}
	switch {
	case d.Bits == 0:
		return godlpack.Invalid(godlpack.ErrDType, "%v has 0 bits", dt)
	case d.Lanes != 1:
		return godlpack.Invalid(godlpack.ErrLanes, "%v has %d lanes", dt, d.Lanes)
	case !dt.Known():
		return godlpack.Invalid(godlpack.ErrDType, "unknown type code %d with %d bits", d.Code, d.Bits)
	}
	return nil
}

// checkExtent refuses shapes and strides whose byte span overflows, NULL
// data under a non-empty view, and views that wrap the address space. addr is
// the producer's data address, for the message when t.Data was dropped.
func checkExtent(t *godlpack.Tensor, addr uintptr) error {
	n, err := t.NumElements()
	if err != nil {
		return err
	}
	lo, hi, err := t.ByteSpan()
	if err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	if t.Data == nil {
		if addr != 0 {
			return godlpack.Invalid(godlpack.ErrNilData, "data %#x lies in the first page, for %d elements", addr, n)
		}
		return godlpack.Invalid(godlpack.ErrNilData, "data is NULL for %d elements", n)
	}
	base := uint64(uintptr(t.Data))
	first := base + t.ByteOffset
	if first < base || t.ByteOffset > math.MaxInt64 {
		return godlpack.Invalid(godlpack.ErrOverflow, "byte_offset %d wraps the address space", t.ByteOffset)
	}
	if uint64(-lo) > first || first+uint64(hi) < first {
		return godlpack.Invalid(godlpack.ErrOverflow, "the view wraps the address space")
	}
	return nil
}
