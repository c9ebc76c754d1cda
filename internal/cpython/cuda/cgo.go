// Package cuda is the layer of godlpack's CPython runtime that talks to the
// CUDA driver (loaded with dlopen on first use): streams, memory allocated
// through the driver, copies across the bus. It returns owners and never
// makes Tensors (docs/architecture.md).
package cuda

/*
#cgo CFLAGS: -I${SRCDIR} -I${SRCDIR}/../base -I${SRCDIR}/../../../include -I${SRCDIR}/../../../core -I${SRCDIR}/../../../capsule -O2 -Wall -Wno-unused-parameter -fvisibility=hidden
*/
import "C"

import _ "github.com/godlpack/godlpack/internal/cpython/base"

// gdlCudaCgoHeader: an export, so that a c-shared build finds this package's
// cgo header in the build cache (base's gdlBaseCgoHeader says why).
//
//export gdlCudaCgoHeader
func gdlCudaCgoHeader() {}
