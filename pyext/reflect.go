package pyext

// reflect.go: the reflection path: a plain Go function (not one of the typed
// wrappers) described from its reflect.Type, each parameter and result by
// params.go and results.go.

/*
#include <stdlib.h>
#include "ext.h"
#include "errkind.h"
*/
import "C"

import (
	"fmt"
	"reflect"
	"unsafe"
)

// newGoFunc describes fn, any non-variadic func, for calls through reflection.
func newGoFunc(name string, fn any, doc string, opts []Option) (*goFunc, error) {
	v := reflect.ValueOf(fn)
	t := v.Type()
	if t.Kind() != reflect.Func || t.IsVariadic() {
		return nil, fmt.Errorf("want a non-variadic func, got %T", fn)
	}
	if t.NumIn() > C.GDL_MAX_PARAMS {
		return nil, fmt.Errorf("at most %d parameters", C.GDL_MAX_PARAMS)
	}
	f := &goFunc{name: name, fn: v}
	c := (*C.gdl_fn)(C.calloc(1, C.sizeof_gdl_fn)) // lives as long as the process
	sig := unsafe.Slice((*byte)(unsafe.Pointer(&c.sig[0])), C.GDL_MAX_PARAMS+1)
	for i := 0; i < t.NumIn(); i++ {
		kind, p, err := paramFor(t.In(i))
		if err != nil {
			C.free(unsafe.Pointer(c))
			return nil, fmt.Errorf("parameter %d: %w", i+1, err)
		}
		sig[i] = kind
		c.elem[i] = elemOf(t.In(i))
		if at := arrayTypeOf(t.In(i)); at != nil {
			f.implied = append(f.implied, at.require(i))
		}
		f.params = append(f.params, p)
	}
	nout := t.NumOut()
	if nout > 0 && t.Out(nout-1) == errorType {
		f.hasErr = true
		nout--
	}
	if nout > C.GDL_MAX_RESULTS {
		C.free(unsafe.Pointer(c))
		return nil, fmt.Errorf("at most %d results", C.GDL_MAX_RESULTS)
	}
	kinds := make([]byte, 0, nout+1)
	for i := 0; i < nout; i++ {
		r, err := resultFor(t.Out(i))
		if err != nil {
			C.free(unsafe.Pointer(c))
			return nil, fmt.Errorf("result %d: %w", i+1, err)
		}
		f.results = append(f.results, r)
		kinds = append(kinds, r.kind)
	}
	f.c = c
	if err := register(f, name, doc, opts, t.NumIn(), kinds); err != nil {
		C.free(unsafe.Pointer(c))
		return nil, err
	}
	return f, nil
}
