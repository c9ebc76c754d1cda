package pyext

import (
	"sync"
	"testing"
)

func TestHandleTable(t *testing.T) {
	var tab handleTable
	a, b := tab.new("a"), tab.new(2)
	if a == 0 || b == 0 || a == b {
		t.Fatalf("handles %d, %d: want distinct and nonzero", a, b)
	}
	if tab.value(a) != "a" || tab.value(b) != 2 {
		t.Fatalf("values %v, %v", tab.value(a), tab.value(b))
	}
	tab.delete(a)
	for _, f := range []func(){func() { tab.value(a) }, func() { tab.delete(a) }, func() { tab.value(0) }, func() { tab.value(1 << 40) }} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("no panic for a handle not in use")
				}
			}()
			f()
		}()
	}
	if c := tab.new(3.0); c != a || tab.value(c) != 3.0 {
		t.Fatalf("reused handle %d (want %d) holds %v", c, a, tab.value(c))
	}
}

// Lookups run without the lock while other goroutines add and delete
// handles across several chunks (go test -race).
func TestHandleTableConcurrent(t *testing.T) {
	var tab handleTable
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 3*handleChunk; i++ {
				h := tab.new(i)
				if tab.value(h) != i {
					t.Errorf("handle %d lost its value", h)
					return
				}
				if i%2 == 0 {
					tab.delete(h)
				}
			}
		}()
	}
	wg.Wait()
}

// ref finds a handle's *T in place, and nothing for another type, a
// deleted handle or one never made (the wrappers then fall back to value).
func TestHandleRef(t *testing.T) {
	var tab handleTable
	type obj struct{ n int }
	p := &obj{7}
	h, other := tab.new(p), tab.new(&struct{ n int }{8})
	typ := typeWord[*obj]()
	r := tab.ref(h, typ)
	if r == nil || *(**obj)(r) != p {
		t.Fatalf("ref(%d) = %v: want the address of %p", h, r, p)
	}
	if r := tab.ref(other, typ); r != nil {
		t.Errorf("ref of another type's value = %v: want nil", r)
	}
	tab.delete(h)
	if r := tab.ref(h, typ); r != nil {
		t.Errorf("ref of a deleted handle = %v: want nil", r)
	}
	if r := tab.ref(1<<40, typ); r != nil {
		t.Errorf("ref of a handle never made = %v: want nil", r)
	}
}
