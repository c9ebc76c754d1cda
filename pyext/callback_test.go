package pyext

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type (
	cbObj  struct{ n int }
	cbObj2 struct{ n int }
)

// A func parameter is a callable ('c') in both paths; its func type's
// parameters and results are checked when the function is defined.
func TestFuncParametersAreCallables(t *testing.T) {
	cls := NewClass[cbObj]("CbObj", "")
	apply := func(xs []float64, f func(float64) float64) float64 { return 0 }
	m := NewModule("m", "").
		Def("apply", Func2(apply), "", ReadOnlyArgs).
		Def("apply_refl", apply, "", ReadOnlyArgs).
		Def("check", FuncE1(func(f func(string, int) (bool, error)) (bool, error) { return f("a", 1) }), "").
		Def("objs", func(f func(*cbObj) (*cbObj, int8)) {}, "").
		Class(cls)
	require.NoError(t, m.err)
	assert.Equal(t, "ac", C_sig(m.funcs[0]))
	assert.Equal(t, "ac", C_sig(m.funcs[1]))
	assert.Equal(t, "c", C_sig(m.funcs[2]))

	s, err := newCbSpec(reflect.TypeFor[func(string, int) (bool, error)]())
	require.NoError(t, err)
	assert.True(t, s.hasErr)
	assert.Equal(t, []byte("si"), s.in)
	assert.Equal(t, []byte{'b', 0}, s.out) // NUL-terminated for C
	s, err = newCbSpec(reflect.TypeFor[func(*cbObj) (*cbObj, int8)]())
	require.NoError(t, err)
	assert.False(t, s.hasErr)
	assert.Equal(t, []byte("o"), s.in)
	assert.Equal(t, cls.info.id, s.inCls[0])
	assert.Equal(t, []byte{'o', 'i', 0}, s.out)
	assert.Equal(t, 8, int(s.outEl[1].bits)) // C range-checks an int8 result

	stub := m.Stub()
	assert.Contains(t, stub, "from collections.abc import Callable\n")
	assert.Contains(t, stub, "def apply(arg1: SupportsDLPack | Buffer, arg2: Callable[[float], float], /) -> float:")
	assert.Contains(t, stub, "def check(arg1: Callable[[str, int], bool], /) -> bool:")
	assert.Contains(t, stub, "def objs(arg1: Callable[[CbObj], tuple[CbObj, int]], /) -> None:")
	assert.NotContains(t, NewModule("n", "").Def("f", func(x int) int { return x }, "").Stub(), "Callable")
}

func TestUnsupportedFuncParametersAreRefusedWhenDefined(t *testing.T) {
	for _, tc := range []struct {
		fn   any
		want string
	}{
		{func(f func([]float64) float64) {}, "unsupported parameter type []float64"},
		{func(f func(float64) []int) {}, "unsupported result type []int"},
		{func(f func(...int)) {}, "variadic"},
		{Func1(func(f func(map[string]int)) int { return 0 }), "unsupported parameter type map[string]int"},
		{func(f func(string) (error, int)) {}, "unsupported result type error"},
	} {
		m := NewModule("m", "").Def("f", tc.fn, "")
		require.Error(t, m.err, tc.want)
		assert.Contains(t, m.err.Error(), tc.want)
	}
}

// What Go code sees of a callable's exception, wrapped or not; without the
// exception object (never made by pyext) no reference is handed to C.
func TestPyErrorIsFoundThroughWrapping(t *testing.T) {
	var err error = &PyError{Type: "ValueError", Msg: "bad"}
	wrapped := fmt.Errorf("ctx: %w", err)
	var pe *PyError
	require.True(t, errors.As(wrapped, &pe))
	assert.Equal(t, "ValueError", pe.Type)
	assert.Equal(t, "ctx: ValueError: bad", wrapped.Error())
	assert.Equal(t, "KeyboardInterrupt", (&PyError{Type: "KeyboardInterrupt"}).Error())
	assert.Zero(t, pyExcRef(wrapped))
	assert.Zero(t, pyExcRef(errors.New("plain")))
}

// []string and map[string]T are lists and dicts ('l', 'd'), with their
// items' kind (and a dict value's Go type, for C's range check); numeric
// slices stay arrays.
func TestContainerKinds(t *testing.T) {
	cls := NewClass[cbObj2]("CbObj2", "")
	m := NewModule("m", "").
		Def("join", func(xs []string, sep string) string { return "" }, "").
		Def("scale", Func2(func(m map[string]int8, k float64) map[string]float64 { return nil }), "").
		Def("sum", func(xs []float64) float64 { return 0 }, "", ReadOnlyArgs).
		Def("objs", func() []*cbObj2 { return nil }, "").
		Class(cls)
	require.NoError(t, m.err)
	assert.Equal(t, "ls", C_sig(m.funcs[0]))
	assert.Equal(t, 's', rune(m.funcs[0].c.elem[0].kind))
	assert.Equal(t, "df", C_sig(m.funcs[1]))
	e := m.funcs[1].c.elem[0]
	assert.Equal(t, []int{'i', 8}, []int{int(e.kind), int(e.bits)})
	assert.Equal(t, "a", C_sig(m.funcs[2]))
	assert.Equal(t, byte('d'), byte(m.funcs[1].c.kinds[0]))
	assert.Equal(t, byte('l'), byte(m.funcs[3].c.kinds[0]))
	stub := m.Stub()
	assert.Contains(t, stub, "def join(arg1: list[str] | tuple[str, ...], arg2: str, /) -> str:")
	assert.Contains(t, stub, "def scale(arg1: dict[str, int], arg2: float, /) -> dict[str, float]:")
	assert.Contains(t, stub, "def objs() -> list[CbObj2]:")

	for _, fn := range []any{func(m map[int]string) {}, func(m map[string][]int) {}, func(xs []*cbObj2) {}} {
		assert.Error(t, NewModule("m", "").Def("f", fn, "").err, "%T", fn)
	}
}

// A returned container's block (values, then their strings) reads back as
// the argument C would pass: the same layout both ways. (The blocks are
// C's to free; this test leaves them.)
func TestContainerBlocksRoundTrip(t *testing.T) {
	type names []string
	for _, x := range []any{
		[]string{"a", "", "héllo"}, names{"x"}, []string{},
		map[string]float64{"b": 2.5, "a": -1}, map[string]string{"k": "v", "": ""},
		map[string]bool{"t": true, "f": false}, map[string]uint16{"max": 65535}, map[string]int8{"lo": -128},
	} {
		typ := reflect.TypeOf(x)
		r, ok := containerResult(typ)
		require.True(t, ok, "%v", typ)
		var v cValue
		require.NoError(t, r.put(reflect.ValueOf(x), &v, nil))
		kind, p, ok := containerParam(typ)
		require.True(t, ok)
		assert.Equal(t, r.kind, kind)
		back, err := p(&v, "f", 0)
		require.NoError(t, err)
		assert.Equal(t, x, back.Interface(), "%v", typ)
	}
}

// A callable is released when its call ends, unless kept: a call after the
// end is refused, naming Keep; Keep finds a func of a call in progress by
// its closure and ignores any other func (issue 42, bug 6).
func TestACallableEndsWithItsCallUnlessKept(t *testing.T) {
	cb := &callable{obj: 7}
	obj, err := cb.enter()
	require.NoError(t, err)
	assert.Equal(t, 7, int(obj))
	assert.Equal(t, 0, int(cb.end()), "a call in progress holds it") // its exit releases it
	_, err = cb.enter()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "after () returned; wrap it in pyext.Keep during the call")
	cb.active-- // as exit, without releasing the fake reference

	cb = &callable{obj: 9}
	assert.Equal(t, 9, int(cb.end()), "not kept, no call in progress: C drops it now")
	_, err = cb.enter()
	require.Error(t, err)

	ft := reflect.TypeFor[func(int) int]()
	mk := func() reflect.Value {
		return reflect.MakeFunc(ft, func(a []reflect.Value) []reflect.Value { return a })
	}
	f1, f2 := mk(), mk()
	cb1, cb2 := &callable{}, &callable{}
	k1, k2 := passing.add(cb1, f1.Interface()), passing.add(cb2, f2.Interface())
	assert.NotEqual(t, k1, k2)
	g := f1.Interface().(func(int) int)
	assert.Equal(t, 3, Keep(g)(3)) // Keep returns f itself
	assert.NotNil(t, cb1.kept)
	assert.Nil(t, cb2.kept)
	assert.Same(t, cb2, passing.take(k2))
	assert.Nil(t, passing.take(k2))
	Keep(f2.Interface().(func(int) int)) // its call ended: nothing to keep
	assert.Nil(t, cb2.kept)
	assert.Same(t, cb1, passing.take(k1))

	plain := func(x int) int { return x + 1 }
	assert.Equal(t, 2, Keep(plain)(1))
	assert.Nil(t, Keep[func()](nil))
	assert.PanicsWithValue(t, "pyext.Keep: int is not a func type", func() { Keep(3) })
}
