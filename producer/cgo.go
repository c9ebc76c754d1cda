// Package producer exports memory owned by Go (pinned slices) or by godlpack
// (64-byte-aligned C allocations) as fresh DLPack managed tensors.
//
// Every export is a new C-allocated DLManagedTensor(Versioned) whose
// manager_ctx is a C reference-counted owner record (never a Go pointer); the
// owner of Go memory holds a cgo.Handle to the runtime.Pinner that keeps the
// slice in place. Deleters are C functions that may run on any thread, with
// or without a Python GIL, and free only what that export allocated.
package producer

/*
#cgo CFLAGS: -I${SRCDIR}/../include -O2
#include "owner.h"
*/
import "C"
