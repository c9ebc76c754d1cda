// Command module is godlpack's own extension module, godlpack._godlpack,
// built with `go build -buildmode=c-shared`: a user of the runtime's layers
// (internal/cpython/exchange and below), as a user's Go extension is through
// package pyext. Its C (module.c, capi.c) and Go (create.go) are linked into
// this module only, never into users' extensions.
package main

/*
#cgo CFLAGS: -I${SRCDIR} -I${SRCDIR}/../internal/cpython/exchange -I${SRCDIR}/../internal/cpython/tensor -I${SRCDIR}/../internal/cpython/base -I${SRCDIR}/../internal/cpython/cuda -I${SRCDIR}/../include -I${SRCDIR}/../core -I${SRCDIR}/../capsule -O2 -Wall -Wno-unused-parameter
#include "module.h"
*/
import "C"

import (
	"unsafe"

	_ "github.com/godlpack/godlpack/internal/cpython/exchange"
)

// PyInit__godlpack is the module's init function, called by CPython on import.
//
//export PyInit__godlpack
func PyInit__godlpack() unsafe.Pointer { return unsafe.Pointer(C.gdl_godlpack_module()) }

func main() {}
