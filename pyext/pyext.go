// Package pyext is godlpack's CPython layer as a Go library: the Tensor type
// (DLPack producer, buffer protocol, C exchange API), from_dlpack, the helper
// C API, CUDA streams and copies, and the API that Go extension authors use to
// define Python modules and functions in Go (module.go, func.go).
//
// The godlpack module itself (pyext/module, built as godlpack._godlpack) is a
// thin user of it, like any other Go extension: each extension links this
// package into its own c-shared library, so a process needs one Go runtime
// per extension at most, and never godlpack's in addition to the user's.
//
// The hot paths are C (the *.c files here, compiled by cgo): the CPython API
// is called without crossing into Go. The C core (owners, validation, tables)
// is package core; the PyCapsule rules are package capsule.
package pyext

/*
#cgo CFLAGS: -I${SRCDIR}/../include -I${SRCDIR}/../core -I${SRCDIR}/../capsule -O2 -Wall -Wno-unused-parameter -fvisibility=hidden
// The CPython API is resolved when the interpreter loads the module; this
// also lets a plain `go build ./...` link the package into an executable.
#cgo LDFLAGS: -Wl,--unresolved-symbols=ignore-all
*/
import "C"

import (
	_ "github.com/godlpack/godlpack/capsule" // capsule.c: the PyCapsule rules the C here calls
	_ "github.com/godlpack/godlpack/core"    // owner.c, validate.c, tables_gen.c
)
