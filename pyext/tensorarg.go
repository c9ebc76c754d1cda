package pyext

// #include "ext.h"
import "C"

import (
	"sync/atomic"
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
		d := dims(n)
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

// dimsBlock is arena memory for Tensor arguments' shapes and strides: one
// allocation serves many calls (a Go allocation per call was a fifth of a
// Tensor argument's cost). Each slice handed out is capacity-limited, so an
// append copies instead of writing a neighbour; a block stays alive while
// any Tensor kept from it does (at most its 4 KiB).
type dimsBlock struct {
	buf  [512]int64
	next atomic.Int32
}

var dimsCur atomic.Pointer[dimsBlock]

// dims is n fresh int64s: from the current block, or a new one when it is
// full. Safe for concurrent calls (functions that release the GIL).
func dims(n int) []int64 {
	if n > 64 {
		return make([]int64, n)
	}
	for {
		b := dimsCur.Load()
		if b != nil {
			if end := int(b.next.Add(int32(n))); end <= len(b.buf) {
				return b.buf[end-n : end : end]
			}
		}
		dimsCur.CompareAndSwap(b, new(dimsBlock))
	}
}
