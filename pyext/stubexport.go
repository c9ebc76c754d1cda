package pyext

// stubexport.go: the stubs of the modules a built extension defines, for the
// build (tools/godlpack_build.py), which loads the fresh library with ctypes
// in a child Python and writes <module>.pyi beside it: the stub comes from
// the very build it describes, so it cannot go stale.

// #include <stdlib.h>
import "C"

import "encoding/json"

// stubsJSON is {"module name": "its stub"} for every Module made by
// NewModule in this library (package init made them).
func stubsJSON() string {
	defined.Lock()
	list := append([]*Module(nil), defined.list...)
	defined.Unlock()
	stubs := make(map[string]string, len(list))
	for _, m := range list {
		stubs[m.name] = m.Stub()
	}
	b, err := json.Marshal(stubs)
	if err != nil { // a map of strings always marshals
		panic(err)
	}
	return string(b)
}

// errorsJSON is {"module name": "its definition's error"} for every Module
// whose definition failed (what its import would raise as ImportError), so
// that the build stops there, not the first import.
func errorsJSON() string {
	defined.Lock()
	list := append([]*Module(nil), defined.list...)
	defined.Unlock()
	errs := map[string]string{}
	for _, m := range list {
		if m.err != nil {
			errs[m.name] = m.err.Error()
		}
	}
	b, err := json.Marshal(errs)
	if err != nil {
		panic(err)
	}
	return string(b)
}

//export gdlpyErrorsJSON
func gdlpyErrorsJSON() *C.char { return C.CString(errorsJSON()) }

// gdlpyStubsJSON returns stubsJSON as a C string the caller frees with
// free(). A cgo export waits for Go's package init, which builds the Module
// values, so the caller needs no Python import of the module, only the
// library loaded. Hidden like every symbol of the package
// (-fvisibility=hidden): stubsymbol.go exports it as gdlpyStubs.
//
//export gdlpyStubsJSON
func gdlpyStubsJSON() *C.char { return C.CString(stubsJSON()) }
