// Package pyembed embeds CPython in Go test binaries, so the capsule rules
// can be tested from Go (their tensors come from internal/testkit/testprod). It links libpython: the Makefile passes the flags
// (CGO_LDFLAGS) when it runs go test. Never import it from the extension.
package pyembed

/*
#include "../../../capsule/need_python.h"
#include <Python.h>
#include <stdlib.h>

static void init(void) { Py_InitializeEx(0); PyEval_SaveThread(); }
static const char* err_name(void) {
  PyObject* t = PyErr_Occurred();
  return t ? ((PyTypeObject*)t)->tp_name : NULL;
}
static PyObject* named_capsule(void* p, const char* name) { return PyCapsule_New(p, name, NULL); }
*/
import "C"

import (
	"runtime"
	"sync"
	"unsafe"
)

var once sync.Once

// Init starts the interpreter once and releases the GIL.
func Init() { once.Do(func() { C.init() }) }

// WithGIL runs f on one OS thread holding the GIL.
func WithGIL(f func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	st := C.PyGILState_Ensure()
	defer C.PyGILState_Release(st)
	f()
}

// CapsuleName is the capsule's current name. GIL held.
func CapsuleName(obj unsafe.Pointer) string {
	n := C.PyCapsule_GetName((*C.PyObject)(obj))
	if n == nil {
		return ""
	}
	return C.GoString(n)
}

// NamedCapsule makes a capsule with any (static) name and no destructor.
func NamedCapsule(p unsafe.Pointer, name *byte) unsafe.Pointer {
	return unsafe.Pointer(C.named_capsule(p, (*C.char)(unsafe.Pointer(name))))
}

// Int makes a Python int (not a capsule). GIL held.
func Int(v int) unsafe.Pointer { return unsafe.Pointer(C.PyLong_FromLong(C.long(v))) }

// Decref drops a reference. GIL held.
func Decref(obj unsafe.Pointer) { C.Py_DecRef((*C.PyObject)(obj)) }

// ErrName is the pending exception's type name ("" if none). GIL held.
func ErrName() string {
	n := C.err_name()
	if n == nil {
		return ""
	}
	return C.GoString(n)
}

// SetRuntimeError sets a pending RuntimeError. GIL held.
func SetRuntimeError() {
	msg := C.CString("pending")
	defer C.free(unsafe.Pointer(msg))
	C.PyErr_SetString(C.PyExc_RuntimeError, msg)
}

// ClearErr clears the pending exception. GIL held.
func ClearErr() { C.PyErr_Clear() }
