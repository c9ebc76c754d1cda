package pyext

// #include "ext.h"
import "C"

import "github.com/godlpack/godlpack"

// tensorArg is a godlpack.Tensor argument, with its own shape and strides
// (the function may keep the Tensor, not its memory): cView's, copied into
// arena memory (no Go allocation per call).
func tensorArg(v *C.gdl_value) godlpack.Tensor {
	t := cView(v)
	nd := len(t.Shape)
	if nd == 0 {
		t.Shape = []int64{} // 0-d: empty, not nil (no allocation)
		return t
	}
	n := nd + len(t.Strides)
	d := int64Arena.take(n)
	copy(d, t.Shape)
	t.Shape = d[:nd:nd]
	if t.Strides != nil {
		copy(d[nd:], t.Strides)
		t.Strides = d[nd:n:n]
	}
	return t
}
