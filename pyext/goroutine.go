package pyext

import "runtime"

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
