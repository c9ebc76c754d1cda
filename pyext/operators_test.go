package pyext

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type numT struct{ v []float64 }

// forget lets the next case define T's class again.
func forget[T any](c *Class[T]) {
	classes.Lock()
	delete(classes.byType, c.info.ptr)
	classes.Unlock()
}

// Wrong operators, slices and buffers fail the module's Init (ImportError), naming the builder.
func TestOperatorsSlicesAndBuffersAreCheckedWhenDefined(t *testing.T) {
	ln := Func1(func(n *numT) int { return len(n.v) })
	for _, tc := range []struct {
		c    func() *Class[numT]
		want string
	}{
		{func() *Class[numT] {
			return NewClass[numT]("N1", "").Operator("?", func(a, b *numT) *numT { return a })
		}, `Operator: "?" is no binary operator`},
		{func() *Class[numT] {
			return NewClass[numT]("N2", "").Operator("+", func(a *numT, b, c float64) *numT { return a })
		}, `Operator "+": want func(*pyext.numT, V) R [error]`},
		{func() *Class[numT] { return NewClass[numT]("N3", "").Operator("+", func(a *numT, b float64) {}) }, `Operator "+": want func(*pyext.numT, V) R [error]`},
		{func() *Class[numT] {
			return NewClass[numT]("N4", "").InPlaceOperator("divmod", func(a *numT, b float64) {})
		}, `InPlaceOperator: "divmod" is no binary operator`},
		{func() *Class[numT] {
			return NewClass[numT]("N5", "").InPlaceOperator("+", func(a *numT, b float64) (float64, float64) { return 0, 0 })
		}, `InPlaceOperator "+": want func(*pyext.numT, V) [R] [error]`},
		{func() *Class[numT] { return NewClass[numT]("N6", "").Operator("~", func(a *numT) {}) }, `Operator "~": want func(*pyext.numT) R [error]`},
		{func() *Class[numT] { return NewClass[numT]("N7", "").Operator("+", 3) }, `Operator "+": want a non-variadic func, got int`},
		{func() *Class[numT] {
			return NewClass[numT]("N8", "").Len(ln).GetSlice(func(n *numT, a, b, c int) int { return 0 })
		}, "__getitem__ of slices needs the class's __getitem__ of ints"},
		{func() *Class[numT] {
			return NewClass[numT]("N9", "").GetSlice(func(n *numT, a, b int) int { return 0 })
		}, "__getitem__ (slices): want a func(*pyext.numT, start, stop, step int)"},
		{func() *Class[numT] {
			return NewClass[numT]("N10", "").SetSlice(func(n *numT, a, b, c int) {})
		}, "__setitem__ (slices): want a func(*pyext.numT, start, stop, step int, V)"},
		{func() *Class[numT] {
			return NewClass[numT]("N11", "").Buffer(func(n *numT) []string { return nil }, false)
		}, "Buffer: want func(*pyext.numT) []E"},
		{func() *Class[numT] {
			return NewClass[numT]("N12", "").Buffer(func(n *numT) ([]float64, []int64) { return nil, nil }, false)
		}, "Buffer: want"},
		{func() *Class[numT] { return NewClass[numT]("N13", "").Buffer(nil, false) }, "Buffer: want func(*pyext.numT) []E [, []int], got <nil>"},
	} {
		c := tc.c()
		m := NewModule("m", "").Class(c)
		if assert.Error(t, m.err, tc.want) {
			assert.Contains(t, m.err.Error(), tc.want)
		}
		forget(c)
	}
}

func TestOperatorSpecialsAndStub(t *testing.T) {
	c := NewClass[numT]("Num", "").
		Len(Func1(func(n *numT) int { return len(n.v) })).
		GetItem(Func2(func(n *numT, i int) float64 { return n.v[i] })).
		GetSlice(Func4(func(n *numT, a, b, s int) *numT { return n })).
		Operator("+", Func2(func(a, b *numT) *numT { return a })).
		ReflectedOperator("*", Func2(func(a *numT, k float64) *numT { return a })).
		InPlaceOperator("*", Proc2(func(a *numT, k float64) {})).
		Operator("-", Func1(func(a *numT) *numT { return a })).
		Buffer(func(n *numT) []float64 { return n.v }, true)
	m := NewModule("m", "").Class(c)
	require.NoError(t, m.err)
	defer forget(c)
	stub := m.Stub()
	for _, want := range []string{
		"from typing import Any, Protocol, SupportsIndex, overload\n",
		"    @overload\n    def __getitem__(self, index: SupportsIndex, /) -> float: ...\n    @overload\n    def __getitem__(self, index: slice, /) -> Num: ...\n",
		"    def __add__(self, other: Num, /) -> Num: ...\n",
		"    def __rmul__(self, other: float, /) -> Num: ...\n",
		"    def __imul__(self, other: float, /) -> Num: ...\n",
		"    def __neg__(self) -> Num:",
		"    def __buffer__(self, flags: int, /) -> memoryview: ...\n",
	} {
		assert.Contains(t, stub, want)
	}
	cc := c.info.cClass()
	assert.Equal(t, 1, int(cc.buffer))
	assert.Equal(t, 4, int(cc.nspecials)) // __getitem__, __add__, __rmul__, __imul__
}

func TestCheckShape(t *testing.T) {
	assert.NoError(t, checkShape([]int{2, 3}, 6))
	assert.NoError(t, checkShape([]int{0, 5}, 0))
	assert.ErrorContains(t, checkShape([]int{2, 2}, 3), "holds 4 items, the slice 3")
	assert.ErrorContains(t, checkShape([]int{-1, -3}, 3), "negative")
	assert.ErrorContains(t, checkShape(nil, 0), "want 1 to 8 dimensions")
	assert.ErrorContains(t, checkShape(make([]int, 9), 0), "want 1 to 8 dimensions")
	assert.ErrorContains(t, checkShape([]int{1 << 40, 1 << 40}, 0), "overflows")
}
