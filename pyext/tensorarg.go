package pyext

// tensorarg.go: godlpack.Tensor parameters: C's image of an exact NumPy array
// in Go's layout, its shape in a pinned block, or Go's conversion.

// #include "ext.h"
import "C"

import (
	"runtime"
	"unsafe"

	"github.com/godlpack/godlpack"
)

// tensorArg is a godlpack.Tensor argument, with its own shape and strides
// (the function may keep the Tensor, not its memory), in Go memory that
// needs no Go allocation per call.
func tensorArg(v *C.gdl_value) (t godlpack.Tensor) {
	if v.img != nil {
		return *(*godlpack.Tensor)(v.img)
	}
	tensorInto(&t, v)
	return t
}

// tensorImaged: godlpack.Tensor has the layout of C's gdl_tensor_image (a
// 64-bit platform), so that C writes the typed wrappers' argument itself
// (images_test.go checks the offsets). C does so for an exact NumPy
// array while the GIL serializes conversions (gdl_value.serial), copying
// its shape and strides into tensorBlock; every other argument is
// converted by tensorInto.
var tensorImaged = unsafe.Sizeof(uintptr(0)) == 8 && tensorLayoutMatches()

// tensorLayoutMatches compares godlpack.Tensor's fields with C's image.
func tensorLayoutMatches() bool {
	var t godlpack.Tensor
	var m C.gdl_tensor_image
	return unsafe.Sizeof(t) == unsafe.Sizeof(m) &&
		unsafe.Offsetof(t.Shape) == unsafe.Offsetof(m.shape) &&
		unsafe.Offsetof(t.Strides) == unsafe.Offsetof(m.strides) &&
		unsafe.Offsetof(t.DType) == unsafe.Offsetof(m.code) &&
		unsafe.Offsetof(t.DType.Lanes)+unsafe.Offsetof(t.DType) == unsafe.Offsetof(m.lanes) &&
		unsafe.Offsetof(t.Device) == unsafe.Offsetof(m.device_type) &&
		unsafe.Offsetof(t.Device.ID)+unsafe.Offsetof(t.Device) == unsafe.Offsetof(m.device_id) &&
		unsafe.Offsetof(t.ByteOffset) == unsafe.Offsetof(m.byte_offset) &&
		unsafe.Offsetof(t.ReadOnly) == unsafe.Offsetof(m.read_only)
}

// tensorBlock is the Go memory C copies Tensor arguments' shapes and
// strides into (C's gdl_tensor_block), pinned while C holds its address
// (the cgo pointer rules). A full block is unpinned and left to the
// Tensors that share it, as an arena block is. Only a holder of the GIL
// touches it, in a serial conversion.
var tensorBlock struct {
	pin runtime.Pinner
	buf *[512]int64
}

// refillTensorBlock gives C a fresh block when the current one is full
// (or there is none yet): called after a serial conversion C could not
// image.
func refillTensorBlock() {
	b := &C.gdl_tensor_block
	if !tensorImaged || (b.base != nil && int(b.used)+2*C.GDL_NP_TENSOR_NDIM <= int(b.cap)) {
		return // room for any argument C images
	}
	buf := new([512]int64)
	tensorBlock.pin.Unpin()
	tensorBlock.pin.Pin(buf)
	tensorBlock.buf = buf
	b.base = (*C.int64_t)(unsafe.Pointer(&buf[0]))
	b.used, b.cap = 0, C.int32_t(len(buf))
}

// tensorInto writes argument v into *t, reading the managed tensor C
// validated, its shape and strides copied into arena memory; field by field,
// where the typed wrappers keep their argument (a Tensor built and then
// copied stalled on store forwarding at each copy).
func tensorInto(t *godlpack.Tensor, v *C.gdl_value) {
	dl, flags := managedOf(v)
	nd := int(dl.NDim)
	shape, strides := []int64{}, []int64(nil) // 0-d: empty, not nil (no allocation)
	if nd > 0 {
		n := nd
		if dl.Strides != nil {
			n += nd
		}
		d := int64Arena.take(n, v.serial != 0)
		src := unsafe.Slice(dl.Shape, nd)
		for k := range nd { // not copy: a memmove call per slice
			d[k] = src[k]
		}
		shape = d[:nd:nd]
		if dl.Strides != nil {
			src = unsafe.Slice(dl.Strides, nd)
			for k := range nd {
				d[nd+k] = src[k]
			}
			strides = d[nd:n:n]
		}
	}
	t.Data = dataOf(dl)
	t.Shape = shape
	t.Strides = strides
	t.DType = godlpack.DType{Code: dl.DType.Code, Bits: dl.DType.Bits, Lanes: dl.DType.Lanes}
	t.Device = godlpack.DeviceOf(dl.Device)
	t.ByteOffset = dl.ByteOffset
	t.ReadOnly = flags&godlpack.FlagReadOnly != 0
	if v.serial != 0 {
		refillTensorBlock()
	}
}
