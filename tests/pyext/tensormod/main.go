// Command tensormod is a test extension for godlpack.Tensor parameters:
// tests/pyext/test_tensor_args.py builds it and runs check_tensormod.py against
// it, which compares what Go sees of an exact NumPy array (read from its
// fields in C) with what it sees through __dlpack__ (a NumPy subclass).
package main

import "C" // cgo: PyInit_tensormod is exported to CPython

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/godlpack/godlpack"
	"github.com/godlpack/godlpack/pyext"
)

var module = pyext.NewModule("tensormod", "godlpack.Tensor parameters under test.").
	Def("info", pyext.Func1(info), "info(t): every field of the Tensor but its address.", pyext.ReadOnlyArgs).
	Def("info_refl", info, "info(t), through reflection.", pyext.ReadOnlyArgs).
	Def("info2", pyext.Func3(info2), "info2(a, b, c): info of three Tensors.", pyext.ReadOnlyArgs).
	Def("info_w", pyext.Func1(info), "info_w(t)\n--\n\ninfo(t) of a Tensor the function may write.", pyext.Writes("t")).
	Def("first", pyext.Func1(first), "first(t): the first float64 element, read through Data.", pyext.ReadOnlyArgs).
	Def("keep", pyext.Proc1(keep), "keep(t): keeps the Tensor (its shape and strides are its own).", pyext.ReadOnlyArgs).
	Def("keep_nogil", pyext.Proc1(keep), "keep(t), with the GIL released.", pyext.ReadOnlyArgs, pyext.ReleaseGIL).
	Def("kept", pyext.Func0(kept), "kept(): info of every kept Tensor, in order; forgets them.").
	Def("alias", pyext.Func1(alias), "alias(t): t's float64 elements as a slice of its memory: refused, it aliases the argument.", pyext.ReadOnlyArgs)

func alias(t godlpack.Tensor) []float64 {
	n, _ := t.NumElements()
	return unsafe.Slice((*float64)(unsafe.Add(t.Data, t.ByteOffset)), n)
}

var (
	keptMu sync.Mutex
	keptTs []godlpack.Tensor
)

func keep(t godlpack.Tensor) {
	keptMu.Lock()
	keptTs = append(keptTs, t)
	keptMu.Unlock()
}

func kept() []string {
	keptMu.Lock()
	defer keptMu.Unlock()
	out := make([]string, len(keptTs))
	for i, t := range keptTs {
		out[i] = info(t)
	}
	keptTs = nil
	return out
}

func info(t godlpack.Tensor) string {
	return fmt.Sprintf("%v shape=%#v strides=%#v dev=%v off=%d ro=%v nil=%v", t.DType, t.Shape, t.Strides, t.Device,
		t.ByteOffset, t.ReadOnly, t.Data == nil)
}

func info2(a, b, c godlpack.Tensor) string { return info(a) + "|" + info(b) + "|" + info(c) }

func first(t godlpack.Tensor) float64 {
	return *(*float64)(unsafe.Add(t.Data, t.ByteOffset))
}

//export PyInit_tensormod
func PyInit_tensormod() unsafe.Pointer { return module.Init() }

func main() {}
