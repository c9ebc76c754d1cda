package consumer

import (
	"unsafe"

	"github.com/godlpack/godlpack"
)

// CompactSize is the number of bytes a compact copy of t needs.
func CompactSize(t *godlpack.Tensor) (int64, error) {
	_, hi, err := (&godlpack.Tensor{Shape: t.Shape, DType: t.DType}).ByteSpan()
	return hi, err
}

// CopyCompact copies the (possibly strided, negatively strided or offset)
// view t into dst as a compact row-major array. dst must hold CompactSize(t)
// bytes. Sub-byte packed types can only be copied when already compact.
func CopyCompact(dst []byte, t *godlpack.Tensor) error {
	if !t.Device.IsCPUAccessible() {
		return godlpack.Invalid(godlpack.ErrDevice, "%v memory is not CPU-accessible", t.Device)
	}
	need, err := CompactSize(t)
	if err != nil {
		return err
	}
	if int64(len(dst)) < need {
		return godlpack.Invalid(godlpack.ErrShape, "destination has %d bytes, need %d", len(dst), need)
	}
	if need == 0 {
		return nil
	}
	if t.IsCompact() {
		copy(dst, unsafe.Slice((*byte)(t.First()), need))
		return nil
	}
	size := t.DType.ItemSize()
	if size == 0 {
		return godlpack.Invalid(godlpack.ErrStrides, "strided %v (sub-byte) cannot be copied", t.DType)
	}
	c := copier{dst: dst, size: size, shape: t.Shape, strides: t.StridesOrCompact()}
	c.run(0, t.First())
	return nil
}

type copier struct {
	dst     []byte
	pos     int64
	size    int64
	shape   []int64
	strides []int64
}

// run copies dimension d starting at src; the innermost dimension is copied
// as one block when its stride is 1.
func (c *copier) run(d int, src unsafe.Pointer) {
	n, st := c.shape[d], c.strides[d]*c.size
	if d == len(c.shape)-1 {
		if st == c.size {
			c.pos += int64(copy(c.dst[c.pos:], unsafe.Slice((*byte)(src), n*c.size)))
			return
		}
		for i := int64(0); i < n; i++ {
			c.pos += int64(copy(c.dst[c.pos:c.pos+c.size], unsafe.Slice((*byte)(unsafe.Add(src, i*st)), c.size)))
		}
		return
	}
	for i := int64(0); i < n; i++ {
		c.run(d+1, unsafe.Add(src, i*st))
	}
}

// Copy returns a compact copy of the tensor's bytes.
func (t *Tensor) Copy() ([]byte, error) {
	if t.Closed() {
		return nil, ErrClosed
	}
	n, err := CompactSize(&t.Tensor)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, n)
	return buf, CopyCompact(buf, &t.Tensor)
}
