package godlpack

import "unsafe"

// The structs below mirror include/godlpack/dlpack.h field for field, so a
// pointer to C memory holding a DLPack struct can be read as one of these
// without copying. abi_cgo.go exposes the C layout and the tests compare them.

// DLPackVersion is the version stamped into a DLManagedTensorVersioned.
type DLPackVersion struct {
	Major uint32
	Minor uint32
}

// DLDevice is the C DLDevice: device type and ordinal.
type DLDevice struct {
	DeviceType int32
	DeviceID   int32
}

// DLDataType is the C DLDataType.
type DLDataType struct {
	Code  uint8
	Bits  uint8
	Lanes uint16
}

// DLTensor is the C DLTensor. Shape and Strides point at NDim int64 values;
// Strides count elements and may be nil (compact row-major) before DLPack 1.2.
type DLTensor struct {
	Data       unsafe.Pointer
	Device     DLDevice
	NDim       int32
	DType      DLDataType
	Shape      *int64
	Strides    *int64
	ByteOffset uint64
}

// DLManagedTensor is the legacy (0.x) managed tensor. Deleter is a C function
// pointer; call it through CallDeleter, never from Go directly.
type DLManagedTensor struct {
	DLTensor   DLTensor
	ManagerCtx unsafe.Pointer
	Deleter    unsafe.Pointer
}

// DLManagedTensorVersioned is the 1.x managed tensor (version first).
type DLManagedTensorVersioned struct {
	Version    DLPackVersion
	ManagerCtx unsafe.Pointer
	Deleter    unsafe.Pointer
	Flags      uint64
	DLTensor   DLTensor
}

// Flag bits of DLManagedTensorVersioned.Flags.
const (
	FlagReadOnly            uint64 = 1 << 0
	FlagIsCopied            uint64 = 1 << 1
	FlagIsSubbyteTypePadded uint64 = 1 << 2
	knownFlags                     = FlagReadOnly | FlagIsCopied | FlagIsSubbyteTypePadded
)

// KnownFlags is the mask of every flag bit defined by the DLPack version we implement.
const KnownFlags = knownFlags

// ShapeSlice views the C shape array of t (nil when NDim is 0).
// The caller must have validated NDim and the Shape pointer.
func (t *DLTensor) ShapeSlice() []int64 {
	if t.NDim <= 0 || t.Shape == nil {
		return nil
	}
	return unsafe.Slice(t.Shape, int(t.NDim))
}

// StridesSlice views the C strides array of t (nil when absent).
func (t *DLTensor) StridesSlice() []int64 {
	if t.NDim <= 0 || t.Strides == nil {
		return nil
	}
	return unsafe.Slice(t.Strides, int(t.NDim))
}
