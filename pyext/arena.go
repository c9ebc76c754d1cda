package pyext

import "sync/atomic"

// arena hands out small slices for the shapes and strides of array
// arguments (godlpack.Tensor), carved from shared blocks: one Go allocation
// serves many calls (one per call was a fifth of a Tensor argument's cost).
// Each slice is capacity-limited, so an append copies instead of writing a
// neighbour's; a block stays alive while any slice of it does (at most its
// 512 elements).
//
// Two cursors: serial, for conversions the GIL serializes (C's
// gdl_value.serial: the GIL held, not a free-threaded build), takes no
// atomic instruction, which cost more than the rest of a Tensor argument
// together; shared, for every other conversion (ReleaseGIL functions, a
// free-threaded CPython), is safe for concurrent calls. Each block belongs
// to one cursor.
type arena[T any] struct {
	serial serialCursor[T]
	shared atomic.Pointer[arenaBlock[T]]
}

type arenaBlock[T any] struct {
	buf  [512]T
	next atomic.Int32
}

// serialCursor is the GIL's own block; only a holder of the GIL touches it.
type serialCursor[T any] struct {
	buf  *[512]T
	next int
}

var int64Arena arena[int64]

// maxArenaTake is the longest slice taken from a block; longer ones are
// allocations of their own.
const maxArenaTake = 64

// take is n fresh zeroed elements. serial: the caller holds the GIL and
// the GIL serializes every serial take (C's gdl_value.serial).
func (a *arena[T]) take(n int, serial bool) []T {
	if n > maxArenaTake {
		return make([]T, n)
	}
	if serial {
		c := &a.serial
		if c.buf == nil || c.next+n > len(c.buf) {
			c.buf, c.next = new([512]T), 0
		}
		end := c.next + n
		s := c.buf[c.next:end:end]
		c.next = end
		return s
	}
	for {
		b := a.shared.Load()
		if b != nil {
			if end := int(b.next.Add(int32(n))); end <= len(b.buf) {
				return b.buf[end-n : end : end]
			}
		}
		a.shared.CompareAndSwap(b, new(arenaBlock[T]))
	}
}
