package pyext

// arrays.go: per-parameter array requirements (Require: dtype, shape, layout)
// and opt-in conversion (Convert, ConvertWriteBack), as C checks them.

/*
#include <stdlib.h>
#include "ext.h"
#include "ext_arrays.h"
*/
import "C"

import (
	"fmt"
	"reflect"
	"strings"
	"unsafe"

	"github.com/godlpack/godlpack"
)

// Req is one requirement on an array parameter, given to Require: Shape,
// Ndim, DTypeIs, CContig, FContig, Strided, OnCPU, OnCUDA, AnyDevice.
type Req struct {
	what reqWhat
	dims []int
	n    int
	dt   godlpack.DType
}

type reqWhat int

const (
	reqShape reqWhat = iota + 1
	reqNdim
	reqDType
	reqOrder
	reqDevice
)

// Shape requires exactly len(dims) dimensions, each of the given size, or
// of any size where it is -1: Shape(-1, 3) takes (n, 3) arrays, as
// nanobind's nb::shape<-1, 3>.
func Shape(dims ...int) Req { return Req{what: reqShape, dims: append([]int{}, dims...)} }

// Ndim requires n dimensions, of any sizes.
func Ndim(n int) Req { return Req{what: reqNdim, n: n} }

// DTypeIs requires the dtype dt: for godlpack.Tensor and *consumer.Tensor
// parameters (a typed slice or NDArray already has its element's dtype).
func DTypeIs(dt godlpack.DType) Req { return Req{what: reqDType, dt: dt} }

// Layouts and devices, for Require.
var (
	// CContig requires C-contiguous (row-major, compact) memory: the default
	// of typed slices.
	CContig = Req{what: reqOrder, n: C.GDL_ORDER_C}
	// FContig requires Fortran-contiguous (column-major, compact) memory: a
	// typed slice then holds the elements in column-major order.
	FContig = Req{what: reqOrder, n: C.GDL_ORDER_F}
	// Strided takes any strides Go can address (element-aligned, in whole
	// elements; negative and zero strides too): the default of NDArray, and
	// of tensors. Not for typed slices.
	Strided = Req{what: reqOrder, n: C.GDL_ORDER_ANY}
	// OnCPU requires memory the CPU can read (CPU, CUDA host or managed,
	// ROCm host): what typed slices and NDArray always require.
	OnCPU = Req{what: reqDevice, n: C.GDL_DEV_CPU}
	// OnCUDA requires CUDA device memory (kDLCUDA): for godlpack.Tensor and
	// *consumer.Tensor parameters only.
	OnCUDA = Req{what: reqDevice, n: C.GDL_DEV_CUDA}
	// AnyDevice takes any device: the default of tensor parameters.
	AnyDevice = Req{what: reqDevice, n: C.GDL_DEV_ANY}
)

// Require declares what the array parameter param (by name, as Writes)
// takes: its
// shape or number of dimensions, its layout, its device, and for tensor
// parameters its dtype. The C trampoline checks them before the call, and
// refuses others with BufferError, naming the argument and what was wanted:
//
//	Def("rownorms", pyext.FuncE1(rownorms), doc, pyext.Args("points"),
//		pyext.Require("points", pyext.Shape(-1, 3), pyext.CContig))
//
// Writability is Writes'. Requirements that do not fit the parameter (not
// an array, OnCUDA or Strided for a typed slice, a dtype other than a typed
// slice's own, two shapes) make Init fail with ImportError.
func Require(param any, reqs ...Req) Option {
	return arrayOption(arraySpec{kind: specRequire, reqs: append([]Req{}, reqs...)}, []any{param})
}

// Convert allows a conversion of read-only array parameters (by name, as
// Writes): an
// argument of another dtype that converts safely (NumPy's "same_kind"
// casting), non-contiguous, unaligned or broadcast (stride 0), or no array
// at all (a list, a scalar, anything numpy.asarray takes; a buffer such as
// bytes as the memoryview of its elements) is copied into a conforming
// temporary for the call, where it would otherwise be refused. Arrays that
// already conform are still taken zero-copy. Shapes and devices are never
// converted: a CUDA array for a CPU parameter stays a BufferError. The
// parameters must not be written (Writes); for written ones,
// ConvertWriteBack.
func Convert(params ...any) Option {
	return arrayOption(arraySpec{kind: specConvert}, params)
}

// ConvertWriteBack is Convert for written parameters (Writes): a
// non-contiguous, unaligned or otherwise non-conforming argument of the
// parameter's dtype is copied into a temporary, and the temporary is copied
// back into the argument after the call (also when the function fails or
// panics, as writes to the argument itself would have stayed). Refused with
// BufferError: a read-only argument, a broadcast one (stride 0: its elements
// share memory), one of another dtype (the write-back would be lossy), and
// anything that is no array.
func ConvertWriteBack(params ...any) Option {
	return arrayOption(arraySpec{kind: specWriteBack}, params)
}

type specKind int

const (
	specRequire specKind = iota + 1
	specConvert
	specWriteBack
)

func (k specKind) String() string {
	return map[specKind]string{specRequire: "Require", specConvert: "Convert", specWriteBack: "ConvertWriteBack"}[k]
}

type arraySpec struct {
	kind specKind
	reqs []Req
}

func arrayOption(s arraySpec, refs []any) Option {
	return Option{&option{kind: optArray, refs: append([]any{}, refs...), array: s}}
}

// convertsParam says whether the C descriptor lets f convert argument i
// (Convert or ConvertWriteBack), for Stub.
func (f *goFunc) convertsParam(i int) bool {
	return f.c != nil && i < len(f.c.req) && f.c.req[i] != nil && f.c.req[i].convert != C.GDL_CONV_NONE
}

// paramReq is one parameter's requirements while a definition is checked.
type paramReq struct {
	set     bool
	ndim    int // -1 any
	shape   []int
	order   int
	orderBy string
	device  int
	devBy   string
	dt      godlpack.DType
	convert int
}

// paramKind tells what sort of array parameter sig and elem describe.
func paramKind(sig byte, e C.gdl_elem) (view int, what string) {
	switch {
	case sig != C.GDL_V_ARRAY:
		return -1, "not an array"
	case e.nd != 0:
		return C.GDL_VIEW_ND, "an NDArray"
	case e.bits != 0:
		return C.GDL_VIEW_SLICE, "a typed slice"
	}
	return C.GDL_VIEW_TENSOR, "a tensor"
}

// arrayReqs checks the Require and Convert options of a function with the
// given signature, elements and written parameters (writes), and makes the
// C requirements: one per parameter that has any (NDArray parameters always
// do). Its errors are the definition's (ImportError from Init).
func arrayReqs(opts []Option, sig []byte, elem []C.gdl_elem, writes uint32) ([]*C.gdl_req, error) {
	n := len(sig)
	reqs := make([]paramReq, n)
	for i := range reqs {
		reqs[i].ndim = -1
		reqs[i].order = -1
		reqs[i].device = -1
	}
	for _, o := range opts {
		if o.kind() != optArray {
			continue
		}
		s := o.o.array
		for k, p := range o.o.params {
			where := fmt.Sprintf("pyext.%s(%d)", s.kind, p)
			if o.o.refs != nil {
				where = o.where(o.o.refs[k])
			}
			if p < 0 || p >= n {
				return nil, fmt.Errorf("%s: no parameter %d (the function has %d)", where, p, n)
			}
			view, what := paramKind(sig[p], elem[p])
			if view < 0 {
				return nil, fmt.Errorf("%s: the parameter is %s", where, what)
			}
			r := &reqs[p]
			r.set = true
			written := writes>>p&1 != 0
			switch s.kind {
			case specConvert, specWriteBack:
				if view == C.GDL_VIEW_TENSOR {
					return nil, fmt.Errorf("%s: the parameter is %s, which takes any array as it is; conversions are for typed slices and NDArray", where, what)
				}
				if r.convert != 0 {
					return nil, fmt.Errorf("%s: the parameter already has a conversion", where)
				}
				if s.kind == specConvert && written {
					return nil, fmt.Errorf("%s: the parameter is written (pyext.Writes), and a converted copy would drop the writes: use ConvertWriteBack", where)
				}
				if s.kind == specWriteBack && !written {
					return nil, fmt.Errorf("%s: the parameter is not written (pyext.Writes): use Convert", where)
				}
				r.convert = map[specKind]int{specConvert: C.GDL_CONV_COPY, specWriteBack: C.GDL_CONV_WRITE_BACK}[s.kind]
			case specRequire:
				for _, q := range s.reqs {
					if err := r.add(q, view, what, elem[p]); err != nil {
						return nil, fmt.Errorf("%s: %w", where, err)
					}
				}
			}
		}
	}
	out := make([]*C.gdl_req, n)
	for i := range reqs {
		view, _ := paramKind(sig[i], elem[i])
		if !reqs[i].set && view != C.GDL_VIEW_ND {
			continue
		}
		out[i] = reqs[i].c(view)
	}
	return out, nil
}

func (r *paramReq) add(q Req, view int, what string, e C.gdl_elem) error {
	switch q.what {
	case reqShape:
		if len(q.dims) > C.GDL_REQ_MAX_DIMS {
			return fmt.Errorf("a shape of %d dimensions (at most %d)", len(q.dims), C.GDL_REQ_MAX_DIMS)
		}
		for _, d := range q.dims {
			if d < -1 {
				return fmt.Errorf("shape %s: a size below -1 (-1 is any size)", shapeString(q.dims))
			}
		}
		if r.shape != nil && !equalInts(r.shape, q.dims) {
			return fmt.Errorf("two shapes, %s and %s", shapeString(r.shape), shapeString(q.dims))
		}
		if r.ndim >= 0 && r.ndim != len(q.dims) {
			return fmt.Errorf("shape %s has %d dimensions, but Ndim(%d)", shapeString(q.dims), len(q.dims), r.ndim)
		}
		r.shape, r.ndim = q.dims, len(q.dims)
	case reqNdim:
		if q.n < 0 || q.n > godlpack.MaxNDim {
			return fmt.Errorf("Ndim(%d): want 0 to %d", q.n, godlpack.MaxNDim)
		}
		if r.ndim >= 0 && r.ndim != q.n {
			return fmt.Errorf("Ndim(%d), but %d dimensions already required", q.n, r.ndim)
		}
		r.ndim = q.n
	case reqDType:
		if view != C.GDL_VIEW_TENSOR {
			if q.dt.Code != uint8(e.code) || q.dt.Bits != uint8(e.bits) || q.dt.Lanes != 1 {
				return fmt.Errorf("DTypeIs(%v) for %s of %v", q.dt, what, godlpack.DType{Code: uint8(e.code), Bits: uint8(e.bits), Lanes: 1})
			}
			return nil
		}
		if q.dt.Bits == 0 || q.dt.Lanes == 0 {
			return fmt.Errorf("DTypeIs(%v): not a dtype", q.dt)
		}
		if r.dt.Bits != 0 && r.dt != q.dt {
			return fmt.Errorf("two dtypes, %v and %v", r.dt, q.dt)
		}
		r.dt = q.dt
	case reqOrder:
		by := map[int]string{C.GDL_ORDER_C: "CContig", C.GDL_ORDER_F: "FContig", C.GDL_ORDER_ANY: "Strided"}[q.n]
		if r.order >= 0 && r.order != q.n {
			return fmt.Errorf("%s and %s", r.orderBy, by)
		}
		if q.n == C.GDL_ORDER_ANY && view == C.GDL_VIEW_SLICE {
			return fmt.Errorf("Strided for %s: a slice is compact (use an NDArray for strided arrays)", what)
		}
		r.order, r.orderBy = q.n, by
	case reqDevice:
		by := map[int]string{C.GDL_DEV_CPU: "OnCPU", C.GDL_DEV_CUDA: "OnCUDA", C.GDL_DEV_ANY: "AnyDevice"}[q.n]
		if r.device >= 0 && r.device != q.n {
			return fmt.Errorf("%s and %s", r.devBy, by)
		}
		if view != C.GDL_VIEW_TENSOR && q.n != C.GDL_DEV_CPU {
			return fmt.Errorf("%s for %s, which Go reads on the CPU (take a godlpack.Tensor for device memory)", by, what)
		}
		r.device, r.devBy = q.n, by
	default:
		return fmt.Errorf("an unknown requirement (use the constructors of package pyext)")
	}
	return nil
}

// c is r as C's requirement record, kept for the process.
func (r *paramReq) c(view int) *C.gdl_req {
	q := (*C.gdl_req)(C.calloc(1, C.sizeof_gdl_req))
	q.view = C.uint8_t(view)
	q.ndim = C.int32_t(r.ndim)
	if r.shape != nil {
		q.has_shape = 1
		for k, d := range r.shape {
			q.shape[k] = C.int64_t(d)
		}
	}
	switch {
	case r.order >= 0:
		q.order = C.uint8_t(r.order)
	case view == C.GDL_VIEW_SLICE:
		q.order = C.GDL_ORDER_C
	default:
		q.order = C.GDL_ORDER_ANY
	}
	switch {
	case r.device >= 0:
		q.device = C.uint8_t(r.device)
	case view != C.GDL_VIEW_TENSOR:
		q.device = C.GDL_DEV_CPU
	}
	q.convert = C.uint8_t(r.convert)
	q.code, q.bits = C.uint8_t(r.dt.Code), C.uint8_t(r.dt.Bits)
	return q
}

// setArrayReqs fills c.req from the options (register calls it once the
// written parameters are known).
func setArrayReqs(c *C.gdl_fn, opts []Option, nparams int) error {
	sig := unsafe.Slice((*byte)(unsafe.Pointer(&c.sig[0])), nparams)
	reqs, err := arrayReqs(opts, sig, c.elem[:nparams], uint32(c.writes))
	if err != nil {
		return err
	}
	for i, q := range reqs {
		c.req[i] = q
	}
	return nil
}

func shapeString(dims []int) string {
	s := make([]string, len(dims))
	for i, d := range dims {
		s[i] = fmt.Sprint(d)
		if d == -1 {
			s[i] = "*"
		}
	}
	if len(s) == 1 {
		return "(" + s[0] + ",)"
	}
	return "(" + strings.Join(s, ", ") + ")"
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// arrayPyType is the stub's annotation for the array types of this file
// (NDArray), ok false for other types. (Module.Stub asks it first.)
func arrayPyType(t reflect.Type) (string, bool) {
	if t.Implements(ndArrayType) {
		return bufferArg, true
	}
	return "", false
}
