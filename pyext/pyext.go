// Package pyext is godlpack's CPython layer as a Go library: the Tensor type
// (DLPack producer, buffer protocol, C exchange API), from_dlpack, the helper
// C API, CUDA streams and copies, and the API that Go extension authors use to
// define Python modules, functions and classes in Go (ext.go, typed.go,
// args.go, class.go, stub.go).
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
// The CPython API is resolved when the interpreter loads the module: a
// c-shared module may leave it undefined with gcc and zig alike, no flag
// needed. The flag below only lets an executable (an extension's `go test`,
// `go build ./...`) link without libpython; zig cc refuses it, and the release
// wheel builds (tools/zigcc.py) set the tag godlpack_zigcc.
#cgo !godlpack_zigcc LDFLAGS: -Wl,--unresolved-symbols=ignore-all
*/
import "C"

import (
	_ "github.com/godlpack/godlpack/capsule" // capsule.c: the PyCapsule rules the C here calls
	_ "github.com/godlpack/godlpack/core"    // owner.c, validate.c, tables_gen.c
)
