// Package base is the bottom layer of godlpack's CPython runtime: C services
// shared by every layer above (interned strings, the Go error mapping, the
// fork guard, the Go runtimes' SIGURG chain, dtype names, devices), with no Tensor in
// them. cgo compiles the C files of this directory into the package; they
// link into the one c-shared library of whichever module imports pyext.
// The layers and their directions: docs/architecture.md.
package base

/*
#cgo CFLAGS: -I${SRCDIR} -I${SRCDIR}/../../../include -I${SRCDIR}/../../../core -I${SRCDIR}/../../../capsule -O2 -Wall -Wno-unused-parameter -fvisibility=hidden
// The CPython API is resolved when the interpreter loads the module. LDFLAGS
// of every linked package reach the final link, so this one place serves all
// layers; per OS:
//   - Linux: a c-shared module may leave it undefined with gcc and zig alike.
//     The flag only lets an executable (an extension's `go test`, `go build
//     ./...`) link without libpython; zig cc refuses it, and the release
//     wheel builds (tools/zigcc.py) set the tag godlpack_zigcc.
//   - macOS: undefined symbols are looked up in the loading process, as
//     PyO3 and setuptools link extensions there.
//   - Windows: every symbol must come from an import library of
//     python3XY.dll, which depends on the Python built for: tools/zigcc.py
//     passes it in CGO_LDFLAGS.
#cgo linux,!godlpack_zigcc LDFLAGS: -Wl,--unresolved-symbols=ignore-all
#cgo darwin LDFLAGS: -Wl,-undefined,dynamic_lookup
#include <stdlib.h>
extern const char* gdl_go_version; // sigchain.c (Linux), buildinfo.c
*/
import "C"

import (
	"runtime"

	_ "github.com/godlpack/godlpack/capsule" // capsule.c: the PyCapsule rules the C here calls
	_ "github.com/godlpack/godlpack/core"    // owner.c, validate.c, tables_gen.c
)

// The chain of SIGURG handlers (sigchain.c) lists each runtime's version.
// Package init finishes before any exported Go function returns, so before
// a module's init reads it.
func init() { C.gdl_go_version = C.CString(runtime.Version()) }

// gdlBaseCgoHeader is here so that cgo writes this package an export
// header. A c-shared build (every extension, godlpack._godlpack) asks for the
// header of each cgo package it links, and the go command (1.26) caches
// only one that exists: without an //export, the package's cgo step and
// all its C files ran again on every build of an extension, cached or not
// (about 2.5 CPU-s of gcc per build for base, cuda and exchange together).
// Hidden like the rest (-fvisibility=hidden): no library exports it.
//
//export gdlBaseCgoHeader
func gdlBaseCgoHeader() {}
