// Functions and a class declared once with //pyext: directives (pyextgen
// writes pyext_gen.go from them): names, signatures, options, protocols.
//
//pyext:module declmod
package main

import (
	"errors"
	"iter"
	"strings"

	"github.com/godlpack/godlpack"
	"github.com/godlpack/godlpack/pyext"
)

// Multiply x by a, in place; with twice, by 2a.
//
//pyext:function (x, /, a=2.0, *, twice=False) writes(x) nogil
func Scale(x []float64, a float64, twice bool) {
	if twice {
		a *= 2
	}
	for i := range x {
		x[i] *= a
	}
}

// The sum of x, which is only read: read-only arrays and JAX arrays are
// taken.
//
//pyext:function
func Total(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s
}

// Mean and spread of x: two results and an error.
//
//pyext:function
func MeanRange(x []float64) (float64, float64, error) {
	if len(x) == 0 {
		return 0, 0, &pyext.ValueError{Msg: "mean_range: x is empty"}
	}
	lo, hi, s := x[0], x[0], 0.0
	for _, v := range x {
		lo, hi, s = min(lo, v), max(hi, v), s+v
	}
	return s / float64(len(x)), hi - lo, nil
}

// The dtype of a 2-d float32 tensor.
//
//pyext:function dtype_of (t) require(t, Ndim(2), DTypeIs(godlpack.Float32))
func DTypeOf(t godlpack.Tensor) string { return t.DType.String() }

// Upper-cases s; only errors.
//
//pyext:function
func Check(s string) error {
	if strings.ToUpper(s) != s {
		return errors.New("check: not upper case")
	}
	return nil
}

// Eight parameters, the most the compiled path takes.
//
//pyext:function
func Eight(a, b, c, d, e, f, g, h int) int { return a + b + c + d + e + f + g + h }

// A bag of float64 values.
//
//pyext:class Bag weakref
type Bag struct {
	xs     []float64
	label  string
	closed bool
}

//pyext:init (label='', *, size=0)
func NewBag(label string, size int) (*Bag, error) {
	if size < 0 {
		return nil, &pyext.ValueError{Msg: "Bag: size < 0"}
	}
	return &Bag{label: label, xs: make([]float64, size)}, nil
}

// Appends the values of x.
//
//pyext:method
func (b *Bag) Extend(x []float64) int {
	b.xs = append(b.xs, x...)
	return len(b.xs)
}

// Writes the bag's values into out, which must have room.
//
//pyext:method writes(out)
func (b *Bag) CopyTo(out []float64) int { return copy(out, b.xs) }

// The label.
//
//pyext:property
func (b *Bag) Label() string { return b.label }

//pyext:setter
func (b *Bag) SetLabel(s string) error {
	if s == "" {
		return &pyext.ValueError{Msg: "label: empty"}
	}
	b.label = s
	return nil
}

//pyext:method __len__
func (b *Bag) Len() int { return len(b.xs) }

//pyext:method __getitem__
func (b *Bag) At(i int) float64 { return b.xs[i] }

//pyext:method __contains__
func (b *Bag) Has(v float64) bool {
	for _, x := range b.xs {
		if x == v {
			return true
		}
	}
	return false
}

//pyext:method __iter__
func (b *Bag) All() iter.Seq[float64] {
	return func(yield func(float64) bool) {
		for _, x := range b.xs {
			if !yield(x) {
				return
			}
		}
	}
}

//pyext:method __add__
func (b *Bag) Plus(v float64) *Bag {
	out := &Bag{label: b.label}
	for _, x := range b.xs {
		out.xs = append(out.xs, x+v)
	}
	return out
}

//pyext:method __enter__
func (b *Bag) Enter() { b.closed = false }

//pyext:method __exit__
func (b *Bag) Exit() { b.closed = true }

// Whether the with block ended.
//
//pyext:property
func (b *Bag) Closed() bool { return b.closed }

// A bag of n zeros.
//
//pyext:staticmethod Bag.zeros
func Zeros(n int) *Bag { return &Bag{xs: make([]float64, n)} }

// obj and opts back in a list, through Go's any and map[string]any: a
// Python value tree on the compiled path.
//
//pyext:function (obj=None, *, opts)
func Roundtrip(obj any, opts map[string]any) (any, error) {
	if opts["fail"] == true {
		return nil, &pyext.ValueError{Msg: "roundtrip: asked to fail"}
	}
	return []any{obj, opts}, nil
}

// x, or lo where x is below it; no bound when lo is None, its default.
//
//pyext:function (x, lo=None)
func AtLeast(x float64, lo *float64) float64 {
	if lo != nil && x < *lo {
		return *lo
	}
	return x
}

// Writes src reversed into dst; the bytes it wrote. It reads src after it
// has written dst's first bytes: were they the same memory, it would read
// its own output.
//
//pyext:function (src, dst) writes(dst)
func ReverseInto(src, dst []byte) int {
	n := min(len(src), len(dst))
	for i := range n {
		dst[i] = src[n-1-i]
	}
	return n
}

// Copies src into a and into b.
//
//pyext:function (src, a, b) writes(a, b)
func Fan(src, a, b []float64) {
	copy(a, src)
	copy(b, src)
}

// The length of data, plus key's when a key is given; -1 for no key.
//
//pyext:function (data, key=None)
func Keyed(data, key []byte) int {
	if key == nil {
		return -1
	}
	return len(data) + len(key)
}
