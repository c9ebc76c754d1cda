package pyext

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Which goroutine runs: the Go sequence behind a Python iterator runs on a
// goroutine of its own, and a call that reaches the iterator from that very
// goroutine (its Python callable calling next()) must not wait for it.

// goid is the running goroutine's id, read from the header of its stack
// trace ("goroutine 18 [running]:"): Go exposes no other. It walks the
// goroutine's stack (about a microsecond on a shallow one), so it is for
// the uncommon paths only.
func goid() int64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	const prefix = "goroutine "
	var id int64
	for i := len(prefix); i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		id = id*10 + int64(b[i]-'0')
	}
	return id
}

// Goroutines stopped for good in a call of a Python callable that Python
// refused because it is shutting down (callback.go): whoever waits for one
// of them (a Python iterator waiting for its Go sequence, on the main
// thread during finalization) stops waiting instead of hanging the exit.
var refused struct {
	sync.Mutex
	ids    map[int64]bool
	any    atomic.Bool                   // ids is not empty: the fast path reads this only
	signal atomic.Pointer[chan struct{}] // closed, and replaced, at each refusal
}

func init() {
	ch := make(chan struct{})
	refused.signal.Store(&ch)
}

// refusedSignal is closed at the next refusal: a waiter takes it before
// it checks isRefused, so that a refusal in between wakes it.
func refusedSignal() <-chan struct{} { return *refused.signal.Load() }

func isRefused(id int64) bool {
	if !refused.any.Load() {
		return false
	}
	refused.Lock()
	defer refused.Unlock()
	return refused.ids[id]
}

// waitForExit stops the running goroutine until the process ends, after
// telling those who wait for it.
func waitForExit() {
	id := goid()
	refused.Lock()
	if refused.ids == nil {
		refused.ids = map[int64]bool{}
	}
	refused.ids[id] = true
	refused.any.Store(true)
	next := make(chan struct{})
	close(*refused.signal.Swap(&next))
	refused.Unlock()
	select {}
}
