package pyext

// options.go: the options of Def and Method (Option, Writes, ReleaseGIL).

/*
#include "ext.h"
*/
import "C"

import (
	"fmt"
)

// Option changes how a function is called.
type Option int

const (
	// ReleaseGIL runs the Go function without the GIL: other Python threads
	// run meanwhile. Arguments are converted before and results after.
	ReleaseGIL Option = iota + 1
	// ReadOnlyArgs declares that the function writes none of its array
	// arguments: read-only arrays are accepted (it promises not to write
	// them). It is Writes() with no parameters.
	ReadOnlyArgs
)

// The bits of an Option beyond the plain ones above: each kind has its
// marker bit, and the low bits are its payload.
const (
	// writesOpt marks an Option made by Writes: bits 0-15 are the
	// parameters written, badParam one out of range.
	writesOpt Option = 1 << 40
	badParam  Option = 1 << 20
	// argsOpt marks an Option made by Args (args.go): the bits from
	// argsShift (argsMask wide) index argSpecs.
	argsOpt   Option = 1 << 41
	argsShift        = 21
	argsMask  Option = 1<<19 - 1
	// methodOpt marks a method's function (methodOpts): parameter 0 is the receiver.
	methodOpt Option = 1 << 42
	// arrayOpt marks an Option made by Require or Convert (arrays.go): bits
	// 0-19 index arraySpecs.
	arrayOpt Option = 1 << 43
)

// Writes declares which array arguments the function writes, by parameter
// index from 0: saxpy(a, x, y) writing y is Def("saxpy", saxpy, doc,
// pyext.Writes(2)). Those must be writable (a read-only array or buffer,
// such as bytes, is refused with BufferError), and never an array its producer treats as immutable
// (a JAX array, whose legacy DLPack export carries no read-only flag); the
// other array arguments are only read, and may be read-only. Without Writes
// or ReadOnlyArgs every array argument may be written. Indices that are not
// array parameters make Init fail with ImportError.
func Writes(params ...int) Option {
	o := writesOpt
	for _, p := range params {
		if p < 0 || p >= C.GDL_MAX_PARAMS {
			o |= badParam
			continue
		}
		o |= 1 << p
	}
	return o
}

// writesMask is the C descriptor's writes bits for opts and the signature.
func writesMask(opts []Option, sig []byte) (uint32, error) {
	declared, mask := false, uint32(0)
	for _, o := range opts {
		switch {
		case o == ReadOnlyArgs:
			declared = true
		case o&writesOpt != 0:
			declared = true
			if o&badParam != 0 {
				return 0, fmt.Errorf("pyext.Writes: a parameter index beyond %d", C.GDL_MAX_PARAMS-1)
			}
			mask |= uint32(o & 0xffff)
		}
	}
	if !declared {
		return 1<<len(sig) - 1, nil
	}
	for i := 0; i < C.GDL_MAX_PARAMS; i++ {
		if mask>>i&1 != 0 && (i >= len(sig) || sig[i] != C.GDL_V_ARRAY) {
			return 0, fmt.Errorf("pyext.Writes(%d): parameter %d is not an array (the function has %d parameters)", i, i, len(sig))
		}
	}
	return mask, nil
}
