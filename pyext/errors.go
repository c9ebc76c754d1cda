package pyext

// errors.go: Go errors as Python exceptions: the error types a function returns
// to raise TypeError, ValueError, BufferError...

/*
#include <stdlib.h>
#include "ext.h"
#include "errkind.h"
*/
import "C"

import (
	"errors"
	"unsafe"

	"github.com/godlpack/godlpack/internal/cpython/base"
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
	// IndexError: an index out of range (a class's GetItem does the range
	// check itself).
	IndexError struct{ Msg string }
	// KeyError: a key not found.
	KeyError struct{ Msg string }
)

// PyError is an exception that a Python callable raised when Go called it
// (a parameter of a Go func type whose func has an error result): Type is
// its type's name ("ValueError"), Msg its str(). Returned by the Go
// function, wrapped or not, it raises the same exception object again.
type PyError struct {
	Type string
	Msg  string
	exc  *pyRef // the exception object (callback.go)
}

func (e *PyError) Error() string {
	if e.Msg == "" {
		return e.Type
	}
	return e.Type + ": " + e.Msg
}

func (e *BufferError) Error() string  { return e.Msg }
func (e *TypeError) Error() string    { return e.Msg }
func (e *ValueError) Error() string   { return e.Msg }
func (e *RuntimeError) Error() string { return e.Msg }
func (e *IndexError) Error() string   { return e.Msg }
func (e *KeyError) Error() string     { return e.Msg }

// putError writes msg for C (base.PutError with cgo's types).
func putError(buf *C.char, n C.int, msg string) { base.PutError(unsafe.Pointer(buf), int(n), msg) }

func pyErrKind(err error) C.int {
	if k, ok := customKind(err); ok { // exceptions.go
		return k
	}
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
	case errors.As(err, new(*IndexError)):
		return C.GDL_ERR_INDEX
	case errors.As(err, new(*KeyError)):
		return C.GDL_ERR_KEY
	case errors.Is(err, errStop):
		return C.GDL_ERR_STOP
	}
	return C.int(base.Kind(err))
}
