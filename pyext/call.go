package pyext

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

// gdlpyCall runs function id on the converted arguments.
//
//export gdlpyCall
func gdlpyCall(id C.int, in *C.gdl_value, nin C.int, out *C.gdl_value, nout *C.int, errBuf *C.char, errLen C.int) (kind C.int) {
	f := (*registry.funcs.Load())[id]
	defer func() {
		if p := recover(); p != nil {
			putError(errBuf, errLen, fmt.Sprintf("Go panic in %s(): %v\n%s", f.name, p, debug.Stack()))
			*nout = 0
			kind = C.GDL_ERR_PANIC
		}
	}()
	ins := unsafe.Slice(in, int(nin))
	if f.call != nil {
		n, err := f.call(ins, unsafe.Slice(out, C.GDL_MAX_RESULTS), f.name)
		*nout = C.int(n)
		if err != nil {
			return f.fail(err, errBuf, errLen)
		}
		return C.GDL_ERR_NONE
	}
	args := make([]reflect.Value, len(f.params))
	for i, p := range f.params {
		a, err := p(&ins[i], f.name, i)
		if err != nil {
			return f.fail(err, errBuf, errLen)
		}
		args[i] = a
	}
	res := f.fn.Call(args)
	if f.hasErr {
		if err, _ := res[len(res)-1].Interface().(error); err != nil {
			return f.fail(err, errBuf, errLen)
		}
	}
	outs := unsafe.Slice(out, C.GDL_MAX_RESULTS)
	for i, r := range f.results {
		var spans []span
		if r.kind == C.GDL_V_ARRAY {
			spans = arraySpans(ins) // a returned slice must not alias an argument
		}
		if err := r.put(res[i], &outs[i], spans); err != nil {
			*nout = C.int(i) // the ones before are C's to free
			return f.fail(err, errBuf, errLen)
		}
	}
	*nout = C.int(len(f.results))
	return C.GDL_ERR_NONE
}

func (f *goFunc) fail(err error, errBuf *C.char, errLen C.int) C.int {
	var o *overflowError
	if errors.As(err, &o) {
		putError(errBuf, errLen, err.Error())
		return C.GDL_ERR_OVERFLOW
	}
	k := pyErrKind(err)
	putError(errBuf, errLen, err.Error())
	return k
}
