// Package tensor is the layer of godlpack's CPython runtime that holds the
// godlpack.Tensor object: layout, lifetime, properties, readers, copies and
// placement. It uses the base and cuda layers below it and nothing above
// (docs/architecture.md).
package tensor

/*
#cgo CFLAGS: -I${SRCDIR} -I${SRCDIR}/../base -I${SRCDIR}/../cuda -I${SRCDIR}/../../../include -I${SRCDIR}/../../../core -I${SRCDIR}/../../../capsule -O2 -Wall -Wno-unused-parameter -fvisibility=hidden
*/
import "C"

import (
	_ "github.com/godlpack/godlpack/internal/cpython/base"
	_ "github.com/godlpack/godlpack/internal/cpython/cuda"
)
