package pyext

// call.go: the Go side of every call from C (gdlpyCall): the reflection path's
// call, and errors and panics as Python exceptions.

/*
#include <stdlib.h>
#include "ext.h"
#include "errkind.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"reflect"
	"runtime/debug"
	"unsafe"
)

// gdlpyCall runs function c.id on the converted arguments.
//
//export gdlpyCall
func gdlpyCall(c *C.gdl_call) (kind C.int) {
	f := (*registry.funcs.Load())[c.id]
	returned := false // set where nothing can panic after it: the guard then has nothing to recover
	defer func() {
		if returned {
			return
		}
		if p := recover(); p != nil {
			if a, ok := p.(*callbackAbort); ok { // a callable raised: raise it again
				c.nout = 0
				kind = f.fail(a.err, c)
				return
			}
			putError(c.err, c.errlen, fmt.Sprintf("Go panic in %s(): %v\n%s", f.name, p, debug.Stack()))
			c.nout = 0
			kind = C.GDL_ERR_PANIC
		}
	}()
	// C's in is its array of GDL_MAX_PARAMS values: a slice of that constant
	// length, cut to nin, takes one bounds check and no multiply.
	ins := unsafe.Slice(c.in, C.GDL_MAX_PARAMS)[:c.nin:c.nin]
	if f.callables { // released as the call returns, unless kept (callable.go)
		defer endCallables(&f.c.sig, ins)
	}
	if f.call != nil {
		n, err := f.call(ins, unsafe.Slice(c.out, C.GDL_MAX_RESULTS), f.name)
		c.nout = C.int(n)
		if err != nil {
			return f.fail(err, c)
		}
		returned = !f.callables // endCallables runs after this, deferred after the guard
		return C.GDL_ERR_NONE
	}
	return f.callReflect(c, ins)
}

// callReflect runs a plain function (not Typed) through reflection.
func (f *goFunc) callReflect(c *C.gdl_call, ins []C.gdl_value) C.int {
	args := make([]reflect.Value, len(f.params))
	for i, p := range f.params {
		a, err := p(&ins[i], f.name, i)
		if err != nil {
			return f.fail(err, c)
		}
		args[i] = a
	}
	res := f.fn.Call(args)
	if f.hasErr {
		if err, _ := res[len(res)-1].Interface().(error); err != nil {
			return f.fail(err, c)
		}
	}
	outs := unsafe.Slice(c.out, C.GDL_MAX_RESULTS)
	for i, r := range f.results {
		var spans []span
		if r.kind == C.GDL_V_ARRAY {
			spans = arraySpans(ins) // a returned slice must not alias an argument
		}
		if err := r.put(res[i], &outs[i], spans); err != nil {
			c.nout = C.int(i) // the ones before are C's to free
			return f.fail(err, c)
		}
	}
	c.nout = C.int(len(f.results))
	return C.GDL_ERR_NONE
}

func (f *goFunc) fail(err error, c *C.gdl_call) C.int {
	nameAny(err, f.name, c.out) // a result with no Python value: which (anyconv.go)
	errBuf, errLen := c.err, c.errlen
	if c.exc = pyExcRef(err); c.exc != 0 { // a Python callable's exception (callback.go)
		return C.GDL_ERR_PYEXC
	}
	var o *overflowError
	if errors.As(err, &o) {
		putError(errBuf, errLen, err.Error())
		return C.GDL_ERR_OVERFLOW
	}
	k := pyErrKind(err)
	putError(errBuf, errLen, err.Error())
	return k
}
