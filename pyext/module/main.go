// Command module is godlpack's own extension module, godlpack._godlpack,
// built with `go build -buildmode=c-shared`: a thin user of package pyext,
// exactly as a user's Go extension is (see examples/).
package main

import "C"

import (
	"unsafe"

	"github.com/godlpack/godlpack/pyext"
)

// PyInit__godlpack is the module's init function, called by CPython on import.
//
//export PyInit__godlpack
func PyInit__godlpack() unsafe.Pointer { return pyext.GodlpackModule() }

func main() {}
