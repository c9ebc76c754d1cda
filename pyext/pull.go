package pyext

// pull.go: a Go sequence pulled one value per request, from a goroutine of its own,
// by any Python thread in turn; stopped when its iterator dies, at any time,
// shutdown included.

/*
#include <stdlib.h>
#include "errkind.h"
#include "ext_class.h"
*/
import "C"

import (
	"iter"
	"sync"
	"sync/atomic"
)

// pull is a Go iterator being pulled by a Python one: the sequence runs in
// a goroutine of its own, one value per request. (Not iter.Pull: its
// coroutine must be resumed on the OS thread that started it, and Python
// threads take turns with an iterator, and free it, on any thread.) The
// next functions run without the GIL, so that a sequence may call Python
// (a func parameter) from its goroutine; mu makes the requests of threads
// that share an iterator take turns.
type pull[V any] struct {
	mu            sync.Mutex
	seq           iter.Seq[V]
	req           chan bool // true: the next value; false: stop
	resp          chan pulled[V]
	started, done bool
	runner        atomic.Int64 // the id of the sequence's goroutine, once it runs
}

type pulled[V any] struct {
	v         V
	ok        bool
	panicked  bool
	panicWith any
}

func newPull[V any](seq iter.Seq[V]) *pull[V] {
	return &pull[V]{seq: seq, req: make(chan bool), resp: make(chan pulled[V])}
}

func (p *pull[V]) run() {
	p.runner.Store(goid()) // before the first request is taken: next reads it after
	defer func() {
		if r := recover(); r != nil {
			p.resp <- pulled[V]{panicked: true, panicWith: r}
			return
		}
		p.resp <- pulled[V]{} // the end: answers the last request
	}()
	if !<-p.req {
		return
	}
	stopped := false
	p.seq(func(v V) bool {
		if stopped {
			panic("pyext: the sequence went on after yield returned false")
		}
		p.resp <- pulled[V]{v: v, ok: true}
		stopped = !<-p.req
		return !stopped
	})
}

// errReentered is what next answers its own sequence's goroutine (a Python
// callable of the sequence calling next on the iterator), as a generator
// answers itself.
var errReentered = &ValueError{Msg: "iterator already executing: the Go sequence called next() on its own iterator"}

// lock takes turns with the other callers; false for the sequence's own
// goroutine while the holder waits for it (it would wait for itself).
func (p *pull[V]) lock() bool {
	if p.mu.TryLock() {
		return true
	}
	if r := p.runner.Load(); r != 0 && r == goid() { // contended: the slow path
		return false
	}
	p.mu.Lock()
	return true
}

// next is the next value, false at the end; a panic of the sequence panics
// here; errReentered from the sequence's own goroutine.
func (p *pull[V]) next() (V, bool, error) {
	var z V
	if !p.lock() {
		return z, false, errReentered
	}
	defer p.mu.Unlock()
	if p.done {
		return z, false, nil
	}
	if !p.started {
		p.started = true
		go p.run()
	}
	p.req <- true
	r, err := p.answer()
	if err != nil {
		p.finish()
		return z, false, err
	}
	if r.panicked {
		p.finish()
		panic(r.panicWith)
	}
	if !r.ok {
		p.finish()
	}
	return r.v, r.ok, nil
}

// finish marks the sequence ended, its goroutine gone: the pull state
// lives on until the Python iterator dies (other threads may still ask it
// for the next value), but the sequence and what it holds are let go now.
func (p *pull[V]) finish() {
	p.done = true
	p.seq = nil
}

// drop stops the sequence (its deferred calls run) when the Python iterator
// dies, and waits for it: what the sequence panicked with while it
// stopped (a Python callable's exception: a *callbackAbort), else nil.
func (p *pull[V]) drop() any {
	if !p.lock() { // not reached: the iterator dies with no caller left
		return nil
	}
	defer p.mu.Unlock()
	defer p.finish()
	if p.started && !p.done {
		p.req <- false
		if r, err := p.answer(); err == nil && r.panicked { // else the end, or a refusal at exit
			return r.panicWith
		}
	}
	return nil
}

// gdlpyDropSeq stops and frees the Go sequence of an iterator's handle
// (ext_iter.h): gdlpyDropHandle, and what it panicked with while stopping.
//
//export gdlpyDropSeq
func gdlpyDropSeq(h C.uintptr_t, errBuf *C.char, errLen C.int, exc *C.uintptr_t) C.int {
	var p any
	if d, ok := handles.value(uintptr(h)).(dropper); ok {
		p = d.drop()
	}
	handles.delete(uintptr(h))
	live.Add(-1)
	if p == nil {
		return C.GDL_ERR_NONE
	}
	return recovered(p, "a Go sequence stopping", errBuf, errLen, exc)
}

// errExiting is next's answer when the sequence waits for good for a
// Python call refused because Python is shutting down.
var errExiting = &RuntimeError{Msg: "Python is shutting down: the Go sequence waits for a call of a Python callable that can no longer run"}

// answer is the sequence goroutine's answer to a request, or errExiting
// when that goroutine was stopped for good in a refused Python call
// (waitForExit): at exit, waiting for it would hang the process.
func (p *pull[V]) answer() (pulled[V], error) {
	for {
		signal := refusedSignal() // before the check: a refusal after it closes this one
		if isRefused(p.runner.Load()) {
			return pulled[V]{}, errExiting
		}
		select {
		case r := <-p.resp:
			return r, nil
		case <-signal:
		}
	}
}
