package pyext

import (
	"iter"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// deadlockWait bounds a wait that takes microseconds unless it deadlocks:
// long enough for a loaded machine under -race, short enough that a
// deadlocking mutant (tools/mutants.py) fails soon.
const deadlockWait = 10 * time.Second

type seqT struct{ v []int }

func (s *seqT) All() iter.Seq[int] {
	return func(yield func(int) bool) {
		for _, x := range s.v {
			if !yield(x) {
				return
			}
		}
	}
}

type otherT struct{}

// Wrong signatures of the class builders fail the module's Init (ImportError), naming the builder.
func TestClassProtocolsAreCheckedWhenDefined(t *testing.T) {
	for _, tc := range []struct {
		c    func() *Class[seqT]
		want string
	}{
		{func() *Class[seqT] { return NewClass[seqT]("S1", "").GetItem(func(s *seqT, i int) int { return 0 }) }, "__getitem__ needs Len"},
		{func() *Class[seqT] { return NewClass[seqT]("S2", "").Len(func(s *seqT) string { return "" }) }, "Len: want func(*pyext.seqT) int"},
		{func() *Class[seqT] {
			return NewClass[seqT]("S3", "").Len(func(s *seqT) int { return 0 }).GetItem(func(s *seqT, i string) int { return 0 })
		}, "__getitem__: want a func(*pyext.seqT, int)"},
		{func() *Class[seqT] { return NewClass[seqT]("S4", "").Contains(func(s *seqT, x int) int { return 0 }) }, "Contains: want func(*pyext.seqT, V) bool"},
		{func() *Class[seqT] { return NewClass[seqT]("S5", "").Context(nil, func(s *seqT, x int) {}) }, "Context exit: want func(*pyext.seqT[, bool]) [error]"},
		{func() *Class[seqT] {
			return NewClass[seqT]("S6", "").Iter(Seq(func(*otherT) iter.Seq[int] { return nil }))
		}, "Iter: Seq of a *pyext.otherT method"},
		{func() *Class[seqT] { return NewClass[seqT]("S7", "").Iter(Iterable{}) }, "Iter: want a pyext.Seq or pyext.Seq2"},
		{func() *Class[seqT] { return NewClass[seqT]("S9", "").EqualByValue() }, "EqualByValue: pyext.seqT is not comparable"},
		{func() *Class[seqT] { return NewClass[seqT]("S8", "").StaticMethod("not-a-name", func() {}, "") }, `"not-a-name" is not a Python identifier`},
	} {
		c := tc.c()
		m := NewModule("m", "").Class(c)
		if assert.Error(t, m.err, tc.want) {
			assert.Contains(t, m.err.Error(), tc.want)
		}
		classes.Lock() // let the next case define seqT again
		delete(classes.byType, c.info.ptr)
		classes.Unlock()
	}
	m := NewModule("m", "").Exception(NewException[*TypeError]("Bad", "no such base", ""))
	require.Error(t, m.err)
	assert.Contains(t, m.err.Error(), `base "no such base" is not a Python identifier`)
}

func TestSeqSpecialsAndStub(t *testing.T) {
	c := NewClass[seqT]("Seq", "").WeakRef().Len(Func1(func(s *seqT) int { return len(s.v) })).
		GetItem(Func2(func(s *seqT, i int) int { return s.v[i] })).Iter(Seq((*seqT).All))
	m := NewModule("m", "").Class(c)
	require.NoError(t, m.err)
	defer func() {
		classes.Lock()
		delete(classes.byType, c.info.ptr)
		classes.Unlock()
	}()
	stub := m.Stub()
	assert.Contains(t, stub, "from collections.abc import Iterator\n")
	assert.Contains(t, stub, "    def __getitem__(self, index: SupportsIndex, /) -> int: ...\n")
	assert.Contains(t, stub, "    def __iter__(self) -> Iterator[int]: ...\n")
	cc := c.info.cClass()
	assert.Equal(t, 1, int(cc.weakref))
	assert.Equal(t, 2, int(cc.nspecials))
}

// A sequence that pulls its own iterator (a Python callable of it calling
// next) gets errReentered, not a deadlock; goroutines other than the
// sequence's own wait for their turn and see each value once.
func TestPullRefusesItsOwnGoroutineAndLetsOthersTakeTurns(t *testing.T) {
	var p *pull[int]
	var inner error
	p = newPull(func(yield func(int) bool) {
		_, _, inner = p.next() // from the sequence's goroutine, while next waits for it
		for i := range 3 {
			if !yield(i) {
				return
			}
		}
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		v, ok, err := p.next()
		assert.Equal(t, 0, v)
		assert.True(t, ok)
		assert.NoError(t, err)
	}()
	select {
	case <-done:
	case <-time.After(deadlockWait):
		t.Fatal("next waited for its own sequence")
	}
	require.ErrorIs(t, inner, errReentered)

	got := make(chan int, 8)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				v, ok, err := p.next()
				if !assert.NoError(t, err) || !ok {
					return
				}
				got <- v
			}
		}()
	}
	wg.Wait()
	close(got)
	var vs []int
	for v := range got {
		vs = append(vs, v)
	}
	assert.ElementsMatch(t, []int{1, 2}, vs)
	assert.Nil(t, p.seq) // the ended sequence is let go
}

func TestGoidTellsGoroutinesApart(t *testing.T) {
	me := goid()
	assert.Positive(t, me)
	assert.Equal(t, me, goid())
	other := make(chan int64)
	go func() { other <- goid() }()
	assert.NotEqual(t, me, <-other)
}

// A sequence stopped for good in a refused Python call (Python shutting
// down) makes next and drop return instead of waiting for it; a sequence
// that was not refused still answers, after that refusal too.
func TestPullGivesUpOnASequenceRefusedAtExit(t *testing.T) {
	within := func(what string, f func()) {
		done := make(chan struct{})
		go func() { defer close(done); f() }()
		select {
		case <-done:
		case <-time.After(deadlockWait):
			t.Fatal(what + " waited for a goroutine stopped for good")
		}
	}
	stuck := newPull(func(yield func(int) bool) {
		if yield(1) {
			waitForExit() // what a refused callable without an error result does
		}
	})
	within("next", func() {
		v, ok, err := stuck.next()
		assert.True(t, ok && err == nil && v == 1)
		_, ok, err = stuck.next()
		assert.False(t, ok)
		assert.ErrorIs(t, err, errExiting)
	})
	deferred := newPull(func(yield func(int) bool) {
		defer waitForExit() // a deferred call of Python, refused while the iterator dies
		for i := 0; yield(i); i++ {
		}
	})
	other := newPull(func(yield func(int) bool) { _ = yield(7) && yield(8) })
	within("drop", func() {
		_, _, _ = deferred.next()
		deferred.drop()
	})
	within("a sequence not refused", func() {
		v, ok, err := other.next()
		assert.True(t, ok && err == nil && v == 7)
		other.drop()
	})
}
