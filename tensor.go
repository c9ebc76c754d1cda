package godlpack

import (
	"math"
	"math/bits"
	"unsafe"
)

// Tensor describes a strided array in memory it does not own. Strides count
// elements; nil Strides means compact row-major.
//
// ReadOnly sits in Device's padding, before ByteOffset: 80 bytes, a multiple
// of 16. (At 88, every copy Go makes of a Tensor argument ends in two
// overlapping 16-byte moves, and the next copy stalls on store forwarding.)
type Tensor struct {
	Data       unsafe.Pointer
	Shape      []int64
	Strides    []int64
	DType      DType
	Device     Device
	ReadOnly   bool
	ByteOffset uint64
}

// NDim is the number of dimensions.
func (t *Tensor) NDim() int { return len(t.Shape) }

// CompactStrides returns row-major strides (in elements) for shape.
func CompactStrides(shape []int64) []int64 {
	st := make([]int64, len(shape))
	acc := int64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		st[i] = acc
		if shape[i] > 0 {
			acc *= shape[i]
		}
	}
	return st
}

// StridesOrCompact gives the explicit strides, or compact ones when nil.
func (t *Tensor) StridesOrCompact() []int64 {
	if t.Strides != nil {
		return t.Strides
	}
	return CompactStrides(t.Shape)
}

func mulChecked(a, b int64) (int64, bool) {
	if a < 0 || b < 0 {
		return 0, false
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > math.MaxInt64 {
		return 0, false
	}
	return int64(lo), true
}

func addChecked(a, b int64) (int64, bool) {
	s := a + b
	if (b > 0 && s < a) || (b < 0 && s > a) {
		return 0, false
	}
	return s, true
}

// NumElements is the product of the shape, refusing negative extents and
// products that overflow int64.
func NumElements(shape []int64) (int64, error) {
	n := int64(1)
	zero := false
	for i, s := range shape {
		if s < 0 {
			return 0, Invalid(ErrShape, "shape[%d] = %d is negative", i, s)
		}
		if s == 0 {
			zero = true
		}
	}
	if zero {
		// Empty whatever the other extents are, wherever the zero is.
		return 0, nil
	}
	for i, s := range shape {
		var ok bool
		if n, ok = mulChecked(n, s); !ok {
			return 0, Invalid(ErrOverflow, "product of shape up to dim %d overflows", i)
		}
	}
	return n, nil
}

// NumElements counts the elements of t.
func (t *Tensor) NumElements() (int64, error) { return NumElements(t.Shape) }

// ElementSpan returns the lowest and highest element index (relative to the
// first element) that the view touches, with overflow checks. A zero-size
// tensor touches nothing and reports (0, -1).
func ElementSpan(shape, strides []int64) (lo, hi int64, err error) {
	n, err := NumElements(shape)
	if err != nil {
		return 0, 0, err
	}
	if n == 0 {
		return 0, -1, nil
	}
	if strides == nil {
		return 0, n - 1, nil
	}
	if len(strides) != len(shape) {
		return 0, 0, Invalid(ErrStrides, "%d strides for %d dims", len(strides), len(shape))
	}
	for i, s := range shape {
		if s == 1 {
			continue // the stride of a size-1 dim is never used
		}
		st := strides[i]
		if st == math.MinInt64 {
			return 0, 0, Invalid(ErrOverflow, "strides[%d] is INT64_MIN", i)
		}
		ext, ok := mulChecked(s-1, abs64(st))
		if !ok {
			return 0, 0, Invalid(ErrOverflow, "(shape[%d]-1)*strides[%d] overflows", i, i)
		}
		if st > 0 {
			hi, ok = addChecked(hi, ext)
		} else {
			lo, ok = addChecked(lo, -ext)
		}
		if !ok {
			return 0, 0, Invalid(ErrOverflow, "stride span overflows at dim %d", i)
		}
	}
	return lo, hi, nil
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// ByteSpan is the byte range [lo, hi) touched by the view relative to the
// address of its first element (Data + ByteOffset). Overflow is an error.
func (t *Tensor) ByteSpan() (lo, hi int64, err error) {
	elo, ehi, err := ElementSpan(t.Shape, t.Strides)
	if err != nil {
		return 0, 0, err
	}
	if ehi < elo {
		return 0, 0, nil
	}
	bitsPer := t.DType.BitsPerElement()
	loBits, ok1 := mulChecked(abs64(elo), bitsPer)
	hiBits, ok2 := mulChecked(ehi+1, bitsPer)
	if !ok1 || !ok2 {
		return 0, 0, Invalid(ErrOverflow, "byte span of the view overflows")
	}
	// Round the low end down to a whole byte: with packed sub-byte types the
	// lowest element may start inside a byte.
	loBytes := loBits / 8
	if loBits%8 != 0 {
		loBytes++
	}
	return -loBytes, (hiBits + 7) / 8, nil
}

// IsCompact reports whether the view is row-major contiguous. Strides of
// size-1 dimensions are ignored, as are all strides of an empty tensor.
func IsCompact(shape, strides []int64) bool {
	if strides == nil {
		return true
	}
	if n, err := NumElements(shape); err != nil || n == 0 {
		return err == nil
	}
	if len(strides) != len(shape) {
		return false
	}
	acc := int64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		if shape[i] != 1 && strides[i] != acc {
			return false
		}
		acc *= shape[i]
	}
	return true
}

// IsCompact reports whether t is row-major contiguous.
func (t *Tensor) IsCompact() bool { return IsCompact(t.Shape, t.Strides) }

// First is the address of element 0 (Data + ByteOffset).
func (t *Tensor) First() unsafe.Pointer { return unsafe.Add(t.Data, t.ByteOffset) }
