package pyext

/*
#include <stdlib.h>
#include "ext.h"
#include "errkind.h"
*/
import "C"

import (
	"errors"
	"unsafe"

	"github.com/godlpack/godlpack/pyext/internal/base"
)

// Errors that choose the Python exception class.
type (
	// BufferError: a DLPack refusal (wrong dtype, device, layout...).
	BufferError struct{ Msg string }
	// TypeError: an argument of the wrong type.
	TypeError struct{ Msg string }
	// ValueError: an argument with a wrong value.
	ValueError struct{ Msg string }
	// RuntimeError: anything else that went wrong.
	RuntimeError struct{ Msg string }
)

func (e *BufferError) Error() string  { return e.Msg }
func (e *TypeError) Error() string    { return e.Msg }
func (e *ValueError) Error() string   { return e.Msg }
func (e *RuntimeError) Error() string { return e.Msg }

// putError writes msg for C (base.PutError with cgo's types).
func putError(buf *C.char, n C.int, msg string) { base.PutError(unsafe.Pointer(buf), int(n), msg) }

func pyErrKind(err error) C.int {
	var (
		b *BufferError
		t *TypeError
		v *ValueError
		r *RuntimeError
	)
	switch {
	case errors.As(err, &b):
		return C.GDL_ERR_BUFFER
	case errors.As(err, &t):
		return C.GDL_ERR_TYPE
	case errors.As(err, &v):
		return C.GDL_ERR_VALUE
	case errors.As(err, &r):
		return C.GDL_ERR_RUNTIME
	}
	return C.int(base.Kind(err))
}
