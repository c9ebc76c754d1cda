package base

/*
#include "errkind.h"
*/
import "C"

import (
	"errors"
	"strings"
	"unsafe"

	"github.com/godlpack/godlpack"
	"github.com/godlpack/godlpack/producer"
)

// Error kinds as errkind.h numbers them: the C side raises the matching
// Python exception (errors.c).
const (
	ErrNone     int32 = C.GDL_ERR_NONE
	ErrValue    int32 = C.GDL_ERR_VALUE
	ErrBuffer   int32 = C.GDL_ERR_BUFFER
	ErrMemory   int32 = C.GDL_ERR_MEMORY
	ErrOverflow int32 = C.GDL_ERR_OVERFLOW
	ErrType     int32 = C.GDL_ERR_TYPE
	ErrPanic    int32 = C.GDL_ERR_PANIC
	ErrRuntime  int32 = C.GDL_ERR_RUNTIME
	ErrPython   int32 = C.GDL_ERR_PYTHON
)

// PutError writes msg as a NUL-terminated string into the C buffer buf of n
// bytes (cut to fit).
func PutError(buf unsafe.Pointer, n int, msg string) {
	if buf == nil || n <= 0 {
		return
	}
	b := unsafe.Slice((*byte)(buf), n)
	k := copy(b[:len(b)-1], msg)
	b[k] = 0
}

// Kind picks the Python exception class for an error of godlpack's Go
// packages: refusals of a tensor are BufferError, allocation failures
// MemoryError, values out of a dtype's range OverflowError, the rest
// ValueError.
func Kind(err error) int32 {
	var inv *godlpack.InvalidTensorError
	switch {
	case err == nil:
		return ErrNone
	case errors.Is(err, producer.ErrOutOfMemory):
		return ErrMemory
	case errors.Is(err, producer.ErrOutOfRange):
		return ErrOverflow
	case errors.As(err, &inv):
		return ErrBuffer
	}
	return ErrValue
}

// Report writes err for C and returns its kind (ErrNone for nil).
func Report(err error, buf unsafe.Pointer, n int) int32 {
	if err == nil {
		return ErrNone
	}
	PutError(buf, n, strings.TrimPrefix(err.Error(), "godlpack: "))
	return Kind(err)
}
