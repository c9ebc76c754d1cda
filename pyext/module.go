package pyext

/*
#include <stdlib.h>
#include "ext_module.h"
#include "errkind.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
	"unsafe"
)

// Module is a Python extension module whose functions are Go functions.
// Define it at package level, and return Init() from the module's PyInit:
//
//	var mod = pyext.NewModule("vecmath", "Vector math in Go.").
//		Def("scale", scale, "scale(x, a): multiply x by a, in place.", pyext.ReleaseGIL)
//
//	//export PyInit_vecmath
//	func PyInit_vecmath() unsafe.Pointer { return mod.Init() }
//
// A parameter is a Go scalar (float32/64, int and uint types, bool,
// string) or an array: a typed slice such as []float32 (a zero-copy view of
// any DLPack object's compact CPU memory of exactly that dtype, checked in C
// before the call; anything else is refused with BufferError), a
// godlpack.Tensor (any validated view, on any device: CUDA data is ready on
// the legacy default stream), or a *consumer.Tensor (the same, with typed
// views, which refuse memory the CPU cannot read; borrowed: Close returns
// consumer.ErrBorrowed). Managed memory is synchronised before Go reads it.
// Arrays stay valid until the function returns: never keep them.
//
// Results are any number of scalars, slices ([]T, returned zero-copy as a
// Tensor of the module: the memory becomes Python's), *producer.Source
// (exported and closed), and a last error. Errors become Python exceptions:
// Error values of this package choose the class (BufferError for refused
// tensors, godlpack.InvalidTensorError too), producer.ErrOutOfMemory is
// MemoryError, anything else ValueError. A panic becomes RuntimeError.
//
// Args (an Option) names a function's parameters for keyword arguments and
// defaults; Class adds a Go type as a Python class (NewClass).
type Module struct {
	name, doc string
	funcs     []*goFunc
	classes   []*classInfo
	excs      []*Exception
	execs     []func(module unsafe.Pointer) error
	err       error
	// freeThreaded: the module declares Py_MOD_GIL_NOT_USED (FreeThreaded).
	freeThreaded bool
}

// modules lists the modules whose Init ran, for their exec hooks.
var modules struct {
	sync.Mutex
	list []*Module
}

// OnExec adds fn, run with the new module object (a PyObject*) and the GIL
// each time the module is created, after its functions were added: for
// constants or functions written in C. A returned error fails the import
// (ErrPythonSet: fn set a Python exception itself).
func (m *Module) OnExec(fn func(module unsafe.Pointer) error) *Module {
	m.execs = append(m.execs, fn)
	return m
}

// FreeThreaded declares that the module runs without the GIL on a
// free-threaded CPython (3.13t and later): its definition says
// Py_MOD_GIL_NOT_USED, as PyO3's #[pymodule(gil_used = false)] and
// nanobind's mod_gil_not_used() do. Without it the module declares
// Py_MOD_GIL_USED, and importing it re-enables the GIL there.
//
// The author asserts that their Go code guards its own shared state (the
// functions' package variables, the Go values of class objects) for calls
// from many Python threads at once; pyext's own state is guarded
// (docs/free-threading.md). Regular CPython builds ignore the declaration.
func (m *Module) FreeThreaded() *Module {
	m.freeThreaded = true
	return m
}

// ErrPythonSet says that a Python exception is already set.
var ErrPythonSet = errors.New("pyext: a Python exception is set")

//export gdlpyExec
func gdlpyExec(id C.int, mod unsafe.Pointer, errBuf *C.char, errLen C.int) (kind C.int) {
	modules.Lock()
	m := modules.list[id]
	modules.Unlock()
	defer func() {
		if p := recover(); p != nil {
			putError(errBuf, errLen, fmt.Sprintf("Go panic in %s's OnExec: %v", m.name, p))
			kind = C.GDL_ERR_PANIC
		}
	}()
	for _, fn := range m.execs {
		if err := fn(mod); err != nil {
			if errors.Is(err, ErrPythonSet) {
				return C.GDL_ERR_PYTHON
			}
			putError(errBuf, errLen, err.Error())
			return pyErrKind(err)
		}
	}
	return C.GDL_ERR_NONE
}

// NewModule starts a module definition.
func NewModule(name, doc string) *Module {
	m := &Module{name: name, doc: doc}
	defined.Lock()
	defined.list = append(defined.list, m)
	defined.Unlock()
	return m
}

// defined lists every Module made by NewModule in this library, in order:
// the build asks it for their stubs (gdlpyStubs, stubexport.go).
var defined struct {
	sync.Mutex
	list []*Module
}

// Def adds fn as the Python function name. An unsupported signature is
// reported by Init as an ImportError.
func (m *Module) Def(name string, fn any, doc string, opts ...Option) *Module {
	f, err := buildFunc(name, fn, doc, opts)
	if err != nil && m.err == nil {
		m.err = fmt.Errorf("%s.%s: %w", m.name, name, err)
	}
	if err == nil {
		m.funcs = append(m.funcs, f)
	}
	return m
}

// buildFunc is fn (a plain function or a Typed) as a goFunc.
func buildFunc(name string, fn any, doc string, opts []Option) (*goFunc, error) {
	var f *goFunc
	var err error
	if t, ok := fn.(Typed); ok {
		if f, err = t.build(name, doc, opts); err == nil {
			f.typ = t.typ
		}
	} else if f, err = newGoFunc(name, fn, doc, opts); err == nil {
		f.typ = reflect.TypeOf(fn)
	}
	if err != nil {
		return nil, err
	}
	fillClasses(f)
	return f, nil
}

// Init returns the module's definition for CPython's multi-phase init (call
// it from PyInit_<name>): the module is made in each importing interpreter,
// and refused in subinterpreters. NULL with a Python exception on failure.
func (m *Module) Init() unsafe.Pointer {
	name, doc := C.CString(m.name), C.CString(m.doc) // kept: CPython keeps the pointers
	if m.err != nil {
		msg := C.CString(m.err.Error())
		C.gdl_ext_import_error(msg)
		C.free(unsafe.Pointer(msg))
		return nil
	}
	// The table of functions lives as long as the process, as the definition does.
	fns := unsafe.Slice((**C.gdl_fn)(C.calloc(C.size_t(len(m.funcs)+1), C.size_t(unsafe.Sizeof(uintptr(0))))), len(m.funcs)+1)
	for i, f := range m.funcs {
		fns[i] = f.c
	}
	cls := unsafe.Slice((**C.gdl_class)(C.calloc(C.size_t(len(m.classes)+1), C.size_t(unsafe.Sizeof(uintptr(0))))), len(m.classes)+1)
	for i, ci := range m.classes {
		cls[i] = ci.cClass()
	}
	modules.Lock()
	id := len(modules.list)
	modules.list = append(modules.list, m)
	modules.Unlock()
	excs := unsafe.Slice((**C.gdl_exc)(C.calloc(C.size_t(len(m.excs)+1), C.size_t(unsafe.Sizeof(uintptr(0))))), len(m.excs)+1)
	for i, e := range m.excs {
		excs[i] = e.cExc()
	}
	ft := C.int(0)
	if m.freeThreaded {
		ft = 1
	}
	mod := C.gdl_ext_module(name, doc, &fns[0], C.int(len(m.funcs)), &cls[0], C.int(len(m.classes)), C.int(id),
		&excs[0], C.int(len(m.excs)), ft)
	return unsafe.Pointer(mod)
}
