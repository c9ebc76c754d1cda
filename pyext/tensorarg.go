package pyext

// #include "ext.h"
import "C"

import (
	"unsafe"

	"github.com/godlpack/godlpack"
)

// tensorArg is a godlpack.Tensor argument, with its own shape and strides
// (the function may keep the Tensor, not its memory): cView's fields, read
// in one pass, and the two arrays copied into arena memory.
func tensorArg(v *C.gdl_value) godlpack.Tensor {
	var dl *godlpack.DLTensor
	var flags uint64
	if v.versioned != 0 {
		m := (*godlpack.DLManagedTensorVersioned)(v.p)
		dl, flags = &m.DLTensor, m.Flags
	} else {
		dl = &(*godlpack.DLManagedTensor)(v.p).DLTensor
	}
	t := godlpack.Tensor{
		DType:      godlpack.DType{Code: dl.DType.Code, Bits: dl.DType.Bits, Lanes: dl.DType.Lanes},
		Device:     godlpack.DeviceOf(dl.Device),
		ByteOffset: dl.ByteOffset,
		ReadOnly:   flags&godlpack.FlagReadOnly != 0,
		Shape:      []int64{}, // 0-d: empty, not nil (no allocation)
	}
	if nd := int(dl.NDim); nd > 0 && dl.Shape != nil {
		n := nd
		if dl.Strides != nil {
			n += nd
		}
		d := int64Arena.take(n)
		copy(d, unsafe.Slice(dl.Shape, nd))
		t.Shape = d[:nd:nd]
		if dl.Strides != nil {
			copy(d[nd:], unsafe.Slice(dl.Strides, nd))
			t.Strides = d[nd:n:n]
		}
	}
	// Addresses in the first page are NULL for us (godlpack.MinDataAddress):
	// only empty views carry them, and Go must never hold them as pointers.
	if addr := *(*uintptr)(unsafe.Pointer(&dl.Data)); addr >= godlpack.MinDataAddress {
		t.Data = dl.Data
	}
	return t
}
