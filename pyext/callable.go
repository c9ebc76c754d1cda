package pyext

// callable.go: how long Go holds a Python callable passed to a func
// parameter: until the call that passed it returns, or, kept (Keep), until
// Go drops the func.

/*
#include "ext_pyobj.h"
*/
import "C"

import (
	"fmt"
	"reflect"
	"sync"
	"unsafe"
)

// callable is a Python callable behind a Go func value.
type callable struct {
	mu     sync.Mutex
	obj    C.uintptr_t // Go's reference; 0 once released
	fn     *C.char     // the name of the function it was passed to
	active int         // calls of obj in progress
	ended  bool        // the call that passed it returned
	kept   *pyRef      // set by Keep: obj is then released when Go drops the func (callback.go)
}

// enter starts a call of the callable: its reference, or the error of a
// call after the call that passed it returned, when Go did not keep it.
func (cb *callable) enter() (C.uintptr_t, error) {
	cb.mu.Lock()
	defer cb.mu.Unlock()
	if cb.obj == 0 || cb.ended && cb.kept == nil {
		name := C.GoString(cb.fn)
		return 0, &RuntimeError{fmt.Sprintf("pyext: a Go func called the Python callable passed to %s() after %s() returned; "+
			"wrap it in pyext.Keep during the call to keep it", name, name)}
	}
	cb.active++
	return cb.obj, nil
}

// exit ends a call that enter started; the last one of a goroutine that
// outlived the call that passed an unkept callable releases it.
func (cb *callable) exit() {
	cb.mu.Lock()
	cb.active--
	var obj C.uintptr_t
	if cb.active == 0 && cb.ended && cb.kept == nil {
		obj, cb.obj = cb.obj, 0
	}
	cb.mu.Unlock()
	if obj != 0 {
		C.gdl_py_release(obj) // takes the GIL (this goroutine does not hold it)
	}
}

// end marks the call that passed the callable returned: the reference for
// C to drop now, or 0 when Go still holds it (kept, or a call in progress
// on another goroutine, whose exit releases it).
func (cb *callable) end() C.uintptr_t {
	cb.mu.Lock()
	defer cb.mu.Unlock()
	cb.ended = true
	if cb.kept != nil || cb.active > 0 {
		return 0
	}
	obj := cb.obj
	cb.obj = 0
	return obj
}

// keep ties the callable's life to its func value's (Keep), if the call
// that passed it is still running.
func (cb *callable) keep() {
	cb.mu.Lock()
	defer cb.mu.Unlock()
	if !cb.ended && cb.kept == nil {
		cb.kept = newPyRef(cb.obj)
	}
}

// passing holds the callables of calls in progress, by the address of
// their func value's closure (funcKey), for Keep to find.
var passing passingTable

type passingTable struct {
	sync.Mutex
	m map[uintptr]passed
}

type passed struct {
	cb *callable
	fn any // the func value: its closure's address is not reused while it is here
}

// add registers cb, behind the func value fn, until its call returns; its
// key, which C keeps for Go in the argument's n.
func (t *passingTable) add(cb *callable, fn any) uintptr {
	k := funcKey(fn)
	t.Lock()
	if t.m == nil {
		t.m = map[uintptr]passed{}
	}
	t.m[k] = passed{cb, fn}
	t.Unlock()
	return k
}

// find is the callable behind the func value fn of a call in progress; nil
// for any other func.
func (t *passingTable) find(fn any) *callable {
	k := funcKey(fn)
	t.Lock()
	defer t.Unlock()
	return t.m[k].cb
}

// take removes and returns the callable of key k (nil if none).
func (t *passingTable) take(k uintptr) *callable {
	t.Lock()
	defer t.Unlock()
	p, ok := t.m[k]
	if !ok {
		return nil
	}
	delete(t.m, k)
	return p.cb
}

// funcKey is the address of the closure of the func value in fn (0 for a
// nil func): a func value is a pointer to its closure, stored as it is in
// an interface, so each func that reflect.MakeFunc made has its own.
func funcKey(fn any) uintptr {
	return uintptr((*[2]unsafe.Pointer)(unsafe.Pointer(&fn))[1])
}

// Keep returns f, a func that a Go function received for a Python
// callable, and keeps that callable alive as long as Go holds f: call it
// during the call that passed f, for a func that Go stores, returns
// inside an iter.Seq or calls from a goroutine that outlives the call.
// Without Keep the callable is released when that call returns, and a
// later call of f fails (an error for a func with an error result, else a
// panic). Keep returns any other func as it is.
func Keep[F any](f F) F {
	if t := reflect.TypeFor[F](); t.Kind() != reflect.Func {
		panic(fmt.Sprintf("pyext.Keep: %v is not a func type", t))
	}
	if cb := passing.find(f); cb != nil {
		cb.keep()
	}
	return f
}

// endCallables ends the callables that Go converted for the call whose
// arguments are ins (of C's signature sig), when it returns: each one Go
// did not keep is handed back to C, which drops it with the GIL (v.i), or
// left to the exit of a call still in progress on another goroutine.
func endCallables(sig *[C.GDL_MAX_PARAMS + 1]C.char, ins []C.gdl_value) {
	for i := range ins {
		if sig[i] != C.GDL_V_CALLABLE || ins[i].i != 0 || ins[i].n == 0 {
			continue // not a callable, or one Go did not convert
		}
		if cb := passing.take(uintptr(ins[i].n)); cb != nil {
			ins[i].i = C.int64_t(cb.end())
		}
	}
}

// hasCallables says whether a function of signature sig takes a callable.
func hasCallables(sig *[C.GDL_MAX_PARAMS + 1]C.char, n int) bool {
	for i := range n {
		if sig[i] == C.GDL_V_CALLABLE {
			return true
		}
	}
	return false
}
