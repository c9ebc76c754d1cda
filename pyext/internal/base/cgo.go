// Package base is the bottom layer of godlpack's CPython runtime: C services
// shared by every layer above (interned strings, the Go error mapping, the
// fork guard, the Go runtime scan, dtype names, devices), with no Tensor in
// them. cgo compiles the C files of this directory into the package; they
// link into the one c-shared library of whichever module imports pyext.
// The layers and their directions: docs/architecture.md.
package base

/*
#cgo CFLAGS: -I${SRCDIR} -I${SRCDIR}/../../../include -I${SRCDIR}/../../../core -I${SRCDIR}/../../../capsule -O2 -Wall -Wno-unused-parameter -fvisibility=hidden
// The CPython API is resolved when the interpreter loads the module: a
// c-shared module may leave it undefined with gcc and zig alike, no flag
// needed. The flag below only lets an executable (an extension's `go test`,
// `go build ./...`) link without libpython; zig cc refuses it, and the release
// wheel builds (tools/zigcc.py) set the tag godlpack_zigcc. LDFLAGS of every
// linked package reach the final link, so this one place serves all layers.
#cgo !godlpack_zigcc LDFLAGS: -Wl,--unresolved-symbols=ignore-all
*/
import "C"

import (
	_ "github.com/godlpack/godlpack/capsule" // capsule.c: the PyCapsule rules the C here calls
	_ "github.com/godlpack/godlpack/core"    // owner.c, validate.c, tables_gen.c
)
