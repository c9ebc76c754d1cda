// Package exchange is the layer of godlpack's CPython runtime that moves
// DLPack tensors between a Tensor and other objects: export, import, the C
// exchange tables, PyTorch's quirks, pickling, and the Tensor type's
// assembly. It uses the tensor, cuda and base layers below it
// (docs/architecture.md).
package exchange

/*
#cgo CFLAGS: -I${SRCDIR} -I${SRCDIR}/../tensor -I${SRCDIR}/../base -I${SRCDIR}/../cuda -I${SRCDIR}/../../../include -I${SRCDIR}/../../../core -I${SRCDIR}/../../../capsule -O2 -Wall -Wno-unused-parameter -fvisibility=hidden
*/
import "C"

import _ "github.com/godlpack/godlpack/internal/cpython/tensor"

// gdlExchangeCgoHeader: an export, so that a c-shared build finds this
// package's cgo header in the build cache (base's gdlBaseCgoHeader says why).
//
//export gdlExchangeCgoHeader
func gdlExchangeCgoHeader() {}
