// Package core is godlpack's C core, with Go wrappers: reference-counted
// owners and fresh managed tensors (owner.c), the one implementation of the
// import rules (validate.c), and the generated dtype/device tables
// (tables_gen.c). Nothing here touches Python, so it builds without it, and
// the deleters it installs are safe on any thread, with or without a GIL.
//
// The CPython layer (package pyext) calls this C directly; producer and
// consumer call it through the Go functions below.
package core

/*
#cgo CFLAGS: -I${SRCDIR}/../include -O2 -Wall
#include <stdlib.h>
#include "owner.h"
#include "validate.h"
*/
import "C"
