// Package pyext is the API Go extension authors use to define Python
// modules, functions and classes in Go: modules (module.go), options
// (options.go, args.go, arrays.go), conversions (params.go, results.go, typed.go,
// ndarray.go), the call (call.go), errors (errors.go), classes (class.go)
// and type stubs (stub.go), with the C call path of those functions (ext*.c).
//
// Each extension links godlpack's CPython runtime into its own c-shared
// library through this package: the Tensor type, from_dlpack, CUDA streams
// and copies live in the layers below (internal/cpython/exchange, tensor,
// cuda, base; docs/architecture.md), whose hot paths are C that calls the
// CPython API without crossing into Go. godlpack's own module,
// godlpack._godlpack (module), uses those layers directly and is not
// linked into extensions.
package pyext

/*
// NDEBUG: the assert()s of CPython's headers (PyFloat_AS_DOUBLE's type check...) are
// left out of the call path, as in extensions built with CPython's own flags.
#cgo CFLAGS: -I${SRCDIR} -I${SRCDIR}/../internal/cpython/exchange -I${SRCDIR}/../internal/cpython/tensor -I${SRCDIR}/../internal/cpython/base -I${SRCDIR}/../internal/cpython/cuda -I${SRCDIR}/../include -I${SRCDIR}/../core -I${SRCDIR}/../capsule -O2 -Wall -Wno-unused-parameter -fvisibility=hidden -DNDEBUG
*/
import "C"

import _ "github.com/godlpack/godlpack/internal/cpython/exchange" // the runtime's layers, linked into the extension
