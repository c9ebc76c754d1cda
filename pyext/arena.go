package pyext

import "sync/atomic"

// arena hands out small slices for the shapes and strides of array
// arguments (godlpack.Tensor, NDArray), carved from shared blocks: one Go
// allocation serves many calls (one per call was a fifth of a Tensor
// argument's cost). Each slice is capacity-limited, so an append copies
// instead of writing a neighbour's; a block stays alive while any slice of
// it does (at most its 512 elements). Safe for concurrent calls (functions
// that release the GIL convert their arguments at once).
type arena[T any] struct{ cur atomic.Pointer[arenaBlock[T]] }

type arenaBlock[T any] struct {
	buf  [512]T
	next atomic.Int32
}

var (
	int64Arena arena[int64]
	intArena   arena[int]
)

// take is n fresh zeroed elements: from the current block, or a new one
// when it is full; over 64, an allocation of their own.
func (a *arena[T]) take(n int) []T {
	if n > 64 {
		return make([]T, n)
	}
	for {
		b := a.cur.Load()
		if b != nil {
			if end := int(b.next.Add(int32(n))); end <= len(b.buf) {
				return b.buf[end-n : end : end]
			}
		}
		a.cur.CompareAndSwap(b, new(arenaBlock[T]))
	}
}
