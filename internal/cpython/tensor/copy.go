package tensor

/*
#include "godlpack/dlpack.h"
*/
import "C"

import (
	"unsafe"

	"github.com/godlpack/godlpack"
	"github.com/godlpack/godlpack/consumer"
	"github.com/godlpack/godlpack/internal/cpython/base"
)

// gdlCopyCompact copies a validated view into dst (compact row-major).
//
//export gdlCopyCompact
func gdlCopyCompact(view *C.DLTensor, dst unsafe.Pointer, errBuf *C.char, errLen C.int) C.int {
	t, err := consumer.ValidateDLTensor((*godlpack.DLTensor)(unsafe.Pointer(view)), true)
	if err == nil {
		var n int64
		if n, err = consumer.CompactSize(&t); err == nil {
			err = consumer.CopyCompact(unsafe.Slice((*byte)(dst), n), &t)
		}
	}
	return C.int(base.Report(err, unsafe.Pointer(errBuf), int(errLen)))
}
