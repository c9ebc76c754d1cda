package pyext

// callback.go: Python callables as Go func parameters: calls into Python from
// any goroutine, and the references Go holds (pyRef: a kept callable, an
// exception) released once Go drops them; callable.go says how long a
// callable is held.

/*
#include <stdlib.h>
#include "ext_pyobj.h"
#include "errkind.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"unsafe"
	"weak"
)

// A parameter of a Go func type takes any Python callable: calling the Go
// func calls it, with the GIL taken for the call (ext_pyobj.c gdl_cb_call),
// so the func works from a function that releases the GIL and from any
// goroutine. The callable is released when the call that passed it returns
// (endCallables), unless Go kept the func with Keep during that call: only
// Go's collector could tell whether Go still holds a func value, and Python
// would hold every callable until it runs.

// pyRef is a strong reference to a Python object that Go holds (a
// callable, an exception); it is dropped when Go no longer holds the pyRef:
// found by Python's full collections (gc.collect(): pyRefs below), or by a
// cleanup after a collection of Go's own.
type pyRef struct {
	obj C.uintptr_t
	// A pointer field, never set: Go batches small pointer-free objects
	// into one tiny block, whose cleanups wait for all its objects to die.
	_ *byte
}

// heldRef is what Go knows of a pyRef without holding it.
type heldRef struct {
	obj      C.uintptr_t
	ref      weak.Pointer[pyRef]
	released atomic.Bool // by the cleanup or a collection: once
}

// pyRefs are the references Go holds. Whether Go still holds a func value
// (a callable it kept in a global, a sequence it returned) only Go's
// collector can tell, and Go's heap does not grow with the Python objects
// it holds: so each full collection of Python's runs Go's first (with the
// GIL held: gdlpyCollect), and what Go dropped is released then, before
// Python collects.
var pyRefs struct {
	sync.Mutex
	held map[*heldRef]struct{}
}

func newPyRef(obj C.uintptr_t) *pyRef {
	r := &pyRef{obj: obj}
	h := &heldRef{obj: obj, ref: weak.Make(r)}
	pyRefs.Lock()
	if pyRefs.held == nil {
		pyRefs.held = map[*heldRef]struct{}{}
	}
	pyRefs.held[h] = struct{}{}
	pyRefs.Unlock()
	runtime.AddCleanup(r, func(h *heldRef) {
		if h.forget() {
			C.gdl_py_release(h.obj)
		}
	}, h)
	return r
}

// forget takes h out of pyRefs; false when it was already.
func (h *heldRef) forget() bool {
	if h.released.Swap(true) {
		return false
	}
	pyRefs.Lock()
	delete(pyRefs.held, h)
	pyRefs.Unlock()
	return true
}

// gdlpyCollect runs Go's collector and drops, with the GIL the caller
// holds, the references of pyRefs Go no longer holds: Python's gc
// callback, at the start of each full collection (ext_pyobj.c).
//
//export gdlpyCollect
func gdlpyCollect() {
	pyRefs.Lock()
	n := len(pyRefs.held)
	pyRefs.Unlock()
	if n == 0 {
		return
	}
	runtime.GC() // a weak pointer is nil once its pyRef was found unreachable
	var gone []*heldRef
	pyRefs.Lock()
	for h := range pyRefs.held {
		if h.ref.Value() == nil {
			gone = append(gone, h)
		}
	}
	pyRefs.Unlock()
	for _, h := range gone {
		if h.forget() {
			C.gdl_py_decref(h.obj)
		}
	}
}

// callbackAbort is what a func without an error result panics with when
// its callable raised: gdlpyCall recovers it and raises the exception again.
type callbackAbort struct{ err *PyError }

// Error is what a crash says where no pyext call recovers the panic (a
// goroutine of the function's own).
func (a *callbackAbort) Error() string {
	return "pyext: a Python callable raised " + a.err.Error() +
		" in a Go func without an error result, outside the goroutine of the pyext call; give the func type an error result"
}

// cbSpec is how a Go func type's values cross to Python and back.
type cbSpec struct {
	typ    reflect.Type
	in     []byte // kinds of the parameters
	inCls  []int  // their classes (GDL_V_OBJ)
	out    []byte // kinds of the results, the error result left out (NUL-terminated, for C)
	outEl  []C.gdl_elem
	outCls []int
	hasErr bool
}

// callbackKind is the value kind of a Go func's parameter or result type.
func callbackKind(t reflect.Type) (byte, int, bool) {
	if ci := classFor(t); ci != nil {
		return C.GDL_V_OBJ, ci.id, true
	}
	switch t.Kind() {
	case reflect.Float32, reflect.Float64:
		return C.GDL_V_FLOAT, 0, true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return C.GDL_V_INT, 0, true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return C.GDL_V_UINT, 0, true
	case reflect.Bool:
		return C.GDL_V_BOOL, 0, true
	case reflect.String:
		return C.GDL_V_STR, 0, true
	}
	return 0, 0, false
}

func newCbSpec(t reflect.Type) (*cbSpec, error) {
	if t.IsVariadic() {
		return nil, fmt.Errorf("func parameter %v: variadic", t)
	}
	if t.NumIn() > C.GDL_MAX_PARAMS {
		return nil, fmt.Errorf("func parameter %v: at most %d parameters", t, C.GDL_MAX_PARAMS)
	}
	s := &cbSpec{typ: t}
	for i := 0; i < t.NumIn(); i++ {
		k, cls, ok := callbackKind(t.In(i))
		if !ok {
			return nil, fmt.Errorf("func parameter %v: unsupported parameter type %v (a callback takes scalars, strings and objects of Go classes)", t, t.In(i))
		}
		s.in, s.inCls = append(s.in, k), append(s.inCls, cls)
	}
	nout := t.NumOut()
	if nout > 0 && t.Out(nout-1) == errorType {
		s.hasErr = true
		nout--
	}
	if nout > C.GDL_MAX_RESULTS {
		return nil, fmt.Errorf("func parameter %v: at most %d results", t, C.GDL_MAX_RESULTS)
	}
	for i := 0; i < nout; i++ {
		k, cls, ok := callbackKind(t.Out(i))
		if !ok {
			return nil, fmt.Errorf("func parameter %v: unsupported result type %v (a callback returns scalars, strings and objects of Go classes)", t, t.Out(i))
		}
		s.out, s.outCls = append(s.out, k), append(s.outCls, cls)
		s.outEl = append(s.outEl, elemOf(t.Out(i)))
	}
	s.out = append(s.out, 0)
	s.outEl = append(s.outEl, C.gdl_elem{})
	return s, nil
}

// callableParam converts a callable argument (ext.c took a reference to it,
// which Go takes here) to a value of the func type t, registered as passed
// (passing) until the call returns.
func callableParam(t reflect.Type) (param, error) {
	s, err := newCbSpec(t)
	if err != nil {
		return nil, err
	}
	return func(v *C.gdl_value, _ string, _ int) (reflect.Value, error) {
		cb := &callable{obj: C.uintptr_t(v.i), fn: v.s} // v.s: the function's name, C's for the process
		v.i = 0                                         // taken: C drops it no more, unless endCallables gives it back
		f := reflect.MakeFunc(t, func(args []reflect.Value) []reflect.Value { return s.call(cb, args) })
		v.n = C.int64_t(passing.add(cb, f.Interface()))
		return f, nil
	}, nil
}

// call calls the Python callable with args and converts its results.
func (s *cbSpec) call(cb *callable, args []reflect.Value) []reflect.Value {
	for i, a := range args { // before any handle is made for an object, and before enter
		if s.in[i] == C.GDL_V_OBJ && a.IsNil() {
			panic(fmt.Sprintf("pyext: a nil %v passed to a Python callable", a.Type()))
		}
	}
	obj, err := cb.enter()
	if err != nil { // called after its call returned, never kept
		if !s.hasErr {
			panic(err.Error())
		}
		res := make([]reflect.Value, s.typ.NumOut())
		for i := range res {
			res[i] = reflect.Zero(s.typ.Out(i))
		}
		res[len(res)-1] = reflect.ValueOf(&err).Elem()
		return res
	}
	var in [C.GDL_MAX_PARAMS]C.gdl_value
	var out [C.GDL_MAX_RESULTS + 1]C.gdl_value
	for i, a := range args {
		switch s.in[i] {
		case C.GDL_V_FLOAT:
			in[i].f = C.double(a.Float())
		case C.GDL_V_INT:
			in[i].i = C.int64_t(a.Int())
		case C.GDL_V_UINT:
			in[i].i = C.int64_t(a.Uint())
		case C.GDL_V_BOOL:
			if a.Bool() {
				in[i].i = 1
			}
		case C.GDL_V_STR:
			str := a.String()
			in[i].s, in[i].n = C.CString(str), C.int64_t(len(str))
			defer C.free(unsafe.Pointer(in[i].s))
		case C.GDL_V_OBJ:
			in[i].i, in[i].n = newHandle(a.Interface()), C.int64_t(s.inCls[i]) // the object C makes owns it
		}
	}
	for i, cls := range s.outCls {
		out[i].n = C.int64_t(cls)
	}
	var exc C.uintptr_t
	var typ [128]C.char
	var msg [1024]C.char
	var sig [C.GDL_MAX_PARAMS + 1]byte
	copy(sig[:], s.in)
	kind := C.gdl_cb_call(obj, cb.fn, (*C.char)(unsafe.Pointer(&sig[0])), C.int(len(args)), &in[0],
		(*C.char)(unsafe.Pointer(&s.out[0])), &s.outEl[0], C.int(len(s.out)-1), &out[0], &exc,
		&typ[0], C.int(len(typ)), &msg[0], C.int(len(msg)))
	cb.exit()
	res := make([]reflect.Value, s.typ.NumOut())
	if kind != C.GDL_ERR_NONE {
		var err error
		if kind == C.GDL_ERR_PYEXC {
			err = &PyError{Type: C.GoString(&typ[0]), Msg: C.GoString(&msg[0]), exc: newPyRef(exc)}
		} else {
			err = &RuntimeError{C.GoString(&msg[0])}
		}
		if !s.hasErr {
			pe, _ := err.(*PyError)
			if pe == nil {
				waitForExit() // Python is shutting down: this goroutine waits for the process's end
			}
			panic(&callbackAbort{pe})
		}
		for i := range res {
			res[i] = reflect.Zero(s.typ.Out(i))
		}
		res[len(res)-1] = reflect.ValueOf(&err).Elem()
		return res
	}
	for i := 0; i < len(s.out)-1; i++ {
		rv := reflect.New(s.typ.Out(i)).Elem()
		switch s.out[i] {
		case C.GDL_V_FLOAT:
			rv.SetFloat(float64(out[i].f))
		case C.GDL_V_INT:
			rv.SetInt(int64(out[i].i))
		case C.GDL_V_UINT:
			rv.SetUint(uint64(out[i].i))
		case C.GDL_V_BOOL:
			rv.SetBool(out[i].i != 0)
		case C.GDL_V_STR:
			rv.SetString(C.GoStringN(out[i].s, C.int(out[i].n)))
			C.free(unsafe.Pointer(out[i].s))
		case C.GDL_V_OBJ:
			rv.Set(reflect.ValueOf(handles.value(uintptr(out[i].i))))
			C.gdl_py_release(C.uintptr_t(uintptr(out[i].p))) // the object held its handle until here
		}
		res[i] = rv
	}
	if s.hasErr {
		res[len(res)-1] = reflect.Zero(errorType)
	}
	return res
}

// failure reports err, or the panic p of a Python callable (a
// *callbackAbort), from an entry point other than a call (a buffer,
// pickling): GDL_ERR_PYEXC with *exc the callable's exception to raise
// again, else err's kind with its message; ok false when p is another
// panic, which the caller reports.
func failure(err error, p any, errBuf *C.char, errLen C.int, exc *C.uintptr_t) (kind C.int, ok bool) {
	if a, isAbort := p.(*callbackAbort); isAbort {
		err = a.err
	} else if p != nil {
		return 0, false
	}
	if *exc = pyExcRef(err); *exc != 0 {
		return C.GDL_ERR_PYEXC, true
	}
	putError(errBuf, errLen, err.Error())
	return pyErrKind(err), true
}

// recovered reports the panic p of an entry point other than a call (what
// names the Go code that panicked): a Python callable's exception as itself
// (failure), any other panic as GDL_ERR_PANIC with the Go stack.
func recovered(p any, what string, errBuf *C.char, errLen C.int, exc *C.uintptr_t) C.int {
	if kind, ok := failure(nil, p, errBuf, errLen, exc); ok {
		return kind
	}
	putError(errBuf, errLen, fmt.Sprintf("Go panic in %s: %v\n%s", what, p, debug.Stack()))
	return C.GDL_ERR_PANIC
}

// pyExcRef is a new reference, for C, to the Python exception err carries
// (0: none), which gdlpyCall's caller raises again.
func pyExcRef(err error) C.uintptr_t {
	var pe *PyError
	if !errors.As(err, &pe) || pe.exc == nil {
		return 0
	}
	r := C.gdl_py_newref(pe.exc.obj)
	runtime.KeepAlive(pe)
	return r
}
