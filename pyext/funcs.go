package pyext

// funcs.go: a Go function as C calls it: its descriptor (goFunc, C's gdl_fn), its
// parameter and result converters, and the registry C finds it in by id.

/*
#include <stdlib.h>
#include "ext.h"
#include "errkind.h"
*/
import "C"

import (
	"reflect"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/godlpack/godlpack"
	"github.com/godlpack/godlpack/consumer"
	"github.com/godlpack/godlpack/producer"
)

// register fills f.c's count, result kinds, strings and flags, and gives f
// its id; an error (a bad option) registers nothing.
func register(f *goFunc, name, doc string, opts []Option, nparams int, kinds []byte) error {
	c := f.c
	self := false
	for _, o := range opts {
		if o == methodOpt {
			self = true
		}
	}
	f.self = self
	names := paramNames(opts, doc, self, nparams)
	opts, err := resolve(opts, names, self) // options.go
	if err != nil {
		return err
	}
	opts = append(append([]Option{}, f.implied...), opts...) // first, so that a Require against them names both
	mask, err := writesMask(opts, unsafe.Slice((*byte)(unsafe.Pointer(&c.sig[0])), nparams))
	if err != nil {
		return err
	}
	c.writes = C.uint32_t(mask)
	if err := setArrayReqs(c, opts, nparams); err != nil { // arrays.go
		return err
	}
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&c.kinds[0])), C.GDL_MAX_RESULTS+1), kinds)
	c.bytes_results = 0
	for _, k := range kinds {
		if k == C.GDL_V_BYTES {
			c.bytes_results = 1 // ext.c's go_call makes them ahead
		}
	}
	c.nparams = C.int(nparams)
	f.callables = hasCallables(&c.sig, nparams)
	c.nresults = C.int(len(kinds))
	c.kwonly = C.int(nparams)
	f.kwonly = nparams
	for _, o := range opts {
		switch o {
		case ReleaseGIL:
			c.release_gil = 1
		case methodOpt:
			c.self = 1
		}
	}
	if err := setArgs(f, opts, self); err != nil {
		return err
	}
	c.name = C.CString(name)
	c.doc = C.CString(withSignature(name, doc, f))
	f.doc = withSignature(name, doc, f)
	registry.Lock()
	var funcs []*goFunc
	if p := registry.funcs.Load(); p != nil {
		funcs = *p
	}
	c.id = C.int(len(funcs))
	funcs = append(funcs[:len(funcs):len(funcs)], f)
	registry.funcs.Store(&funcs)
	registry.Unlock()
	return nil
}

// registry holds every function defined in this process, by id: an
// append-only list, published as an immutable snapshot so calls take no lock.
var registry struct {
	sync.Mutex
	funcs atomic.Pointer[[]*goFunc]
}

type goFunc struct {
	name     string
	doc      string
	self     bool         // a method: parameter 0 is the receiver
	names    []string     // Args: the parameters' names (nil: positional only)
	defaults []string     // and defaults, as Python literals ("" for none)
	posonly  int          // Args' "/": the parameters before it are positional-only (0: none)
	kwonly   int          // Args' "*": those from it on are keyword-only (nparams: none)
	typ      reflect.Type // the Go function's type, for Stub
	call     typedCall    // set for Typed functions: no reflection per call
	fn       reflect.Value
	params   []param
	results  []result
	hasErr   bool
	// callables: a parameter is a Go func (a Python callable), whose
	// reference the call's end releases (callable.go); read on every call.
	callables bool
	implied   []Option // the requirements of registered array types' parameters (arraytype.go)
	c         *C.gdl_fn
}

// param converts one C value to the Go argument.
type param func(v *C.gdl_value, name string, i int) (reflect.Value, error)

// result converts one Go result to a C value; in holds the arguments'
// address ranges, which a returned slice must not alias.
type result struct {
	kind byte
	put  func(rv reflect.Value, v *C.gdl_value, in []span) error
}

// span is the address range of an array argument.
type span struct{ lo, hi uintptr }

var (
	errorType  = reflect.TypeFor[error]()
	tensorType = reflect.TypeFor[godlpack.Tensor]()
	borrowType = reflect.TypeFor[*consumer.Tensor]()
	sourceType = reflect.TypeFor[*producer.Source]()
)
