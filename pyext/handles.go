package pyext

import (
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"
)

// handles holds the Go values of Python objects of Go classes (and Go
// iterators), by a number that C keeps in place of a Go pointer (the cgo
// pointer rules). It replaces cgo.Handle on the call path: a lookup is
// three loads, where cgo.Handle hashes into a sync.Map (about 190
// instructions a method call). Numbers start at 1 (0: no Go value, as C
// checks) and are reused once deleted.
var handles handleTable

const handleChunk = 1024

type handleTable struct {
	mu     sync.Mutex
	chunks atomic.Pointer[[]*[handleChunk]atomic.Pointer[any]] // copied on growth; chunks never move
	free   []uintptr
	next   uintptr
}

func (t *handleTable) new(v any) uintptr {
	box := &v
	t.mu.Lock()
	defer t.mu.Unlock()
	var h uintptr
	if n := len(t.free); n > 0 {
		h, t.free = t.free[n-1], t.free[:n-1]
	} else {
		if t.next == 0 {
			t.next = 1
		}
		h = t.next
		t.next++
		var cs []*[handleChunk]atomic.Pointer[any]
		if p := t.chunks.Load(); p != nil {
			cs = *p
		}
		if int(h/handleChunk) == len(cs) {
			cs = append(cs[:len(cs):len(cs)], new([handleChunk]atomic.Pointer[any]))
			t.chunks.Store(&cs)
		}
	}
	t.slot(h).Store(box)
	return h
}

func (t *handleTable) slot(h uintptr) *atomic.Pointer[any] {
	if p := t.chunks.Load(); p != nil && h/handleChunk < uintptr(len(*p)) {
		return &(*p)[h/handleChunk][h%handleChunk]
	}
	return nil
}

// value is the Go value of handle h; it panics for a handle not in use, as
// cgo.Handle.Value does.
func (t *handleTable) value(h uintptr) any {
	if s := t.slot(h); s != nil {
		if b := s.Load(); b != nil {
			return *b
		}
	}
	panic(fmt.Sprintf("pyext: invalid handle %d", h))
}

// ref is the address of the pointer that handle h boxes when its value's
// dynamic type is typ, a pointer type (an any holds such a value as its
// data word), else nil: a typed wrapper's *T argument with no copy of the
// any and no type assertion (value's callers, through argConv.into, word
// the rest). A box is never written after it is stored, so the address
// stays good, and keeps the box alive, for as long as it is used.
func (t *handleTable) ref(h uintptr, typ unsafe.Pointer) unsafe.Pointer {
	if p := t.chunks.Load(); p != nil && h/handleChunk < uintptr(len(*p)) {
		if b := (*p)[h/handleChunk][h%handleChunk].Load(); b != nil {
			e := (*[2]unsafe.Pointer)(unsafe.Pointer(b))
			if e[0] == typ {
				return unsafe.Pointer(&e[1])
			}
		}
	}
	return nil
}

func (t *handleTable) delete(h uintptr) {
	s := t.slot(h)
	if s == nil || s.Swap(nil) == nil {
		panic(fmt.Sprintf("pyext: invalid handle %d", h))
	}
	t.mu.Lock()
	t.free = append(t.free, h)
	t.mu.Unlock()
}
