package pyext

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func clip(x []float64, lo, hi float64) int { return 0 }

func TestArgsNamesAndDefaultsAreCheckedWhenDefined(t *testing.T) {
	m := NewModule("m", "").Def("clip", clip, "", Args("x", "lo=0.0", "hi=1e3"))
	require.NoError(t, m.err)
	f := m.funcs[0]
	assert.Equal(t, []string{"x", "lo", "hi"}, f.names)
	assert.Equal(t, []string{"", "0.0", "1e3"}, f.defaults)
	assert.Equal(t, 1, int(f.c.named))
	assert.Equal(t, []int{0, 1, 1}, []int{int(f.c.has_default[0]), int(f.c.has_default[1]), int(f.c.has_default[2])})
	assert.Equal(t, 1000.0, float64(f.c.defaults[2].f))

	for _, tc := range []struct {
		fn   any
		args Option
		want string
	}{
		{clip, Args("x", "lo=abc", "hi=1.0"), "m.clip: pyext.Args: default lo=abc: not a float literal"},
		{clip, Args("x", "lo=inf", "hi=1.0"), "default lo=inf: not a float literal"},
		{clip, Args("x", "lo"), "pyext.Args: 2 names for 3 parameters"},
		{clip, Args("x", "lo", "lo"), `parameter "lo" named twice`},
		{clip, Args("x", "lo=0.0", "hi"), `parameter "hi" without a default follows one with a default`},
		{clip, Args("x=1.0", "lo", "hi"), "default x=1.0: an array or object parameter takes no default"},
		{clip, Args("x", "lambda", "hi"), `"lambda" is not a Python identifier`},
		{func(a int8) {}, Args("a=300"), "default a=300: not an int8 literal"},
		{func(a uint) {}, Args("a=-1"), "default a=-1: not a uint64 literal"},
		{func(a float32) {}, Args("a=1e39"), "default a=1e39: out of range for float32"},
		{func(a bool) {}, Args("a=true"), "default a=true: not True or False"},
		{func(a string) {}, Args("a=abc"), "default a=abc: not a quoted string literal"},
		{Func1(func(a float64) float64 { return a }), Args("a=x"), "default a=x: not a float literal"},
	} {
		m := NewModule("m", "").Def("clip", tc.fn, "", tc.args)
		if assert.Error(t, m.err, tc.want) {
			assert.Contains(t, m.err.Error(), tc.want)
		}
	}
}

func TestArgsDefaultsOfEveryScalarKind(t *testing.T) {
	m := NewModule("m", "").Def("f", func(i int16, u uint8, b bool, s, q string, x float32) {}, "",
		Args("i=-0x10", "u=255", "b=True", `s='it\'s'`, `q="a\tb"`, "x=2.5"))
	require.NoError(t, m.err)
	c := m.funcs[0].c
	assert.Equal(t, int64(-16), int64(c.defaults[0].i))
	assert.Equal(t, int64(255), int64(c.defaults[1].i))
	assert.Equal(t, int64(1), int64(c.defaults[2].i))
	assert.Equal(t, 2.5, float64(c.defaults[5].f))
	stub := m.Stub()
	assert.Contains(t, stub, `def f(i: int = -0x10, u: int = 255, b: bool = True, s: str = 'it\'s', q: str = "a\tb", x: float = 2.5) -> None:`)
}

func TestWithoutArgsFunctionsStayPositionalOnly(t *testing.T) {
	m := NewModule("m", "").Def("clip", clip, "")
	require.NoError(t, m.err)
	assert.Equal(t, 0, int(m.funcs[0].c.named))
	assert.Contains(t, m.Stub(), "def clip(arg1: SupportsDLPack | Buffer, arg2: float, arg3: float, /) -> int:")
}

func TestStubNamesPositionalParametersAsTheDocstringDoes(t *testing.T) {
	m := NewModule("m", "").
		Def("clip", clip, "clip(x, lo, hi=1.0)\n--\n\nClamp.").
		Def("odd", clip, "odd(x, *rest)\n--\n\nNot plain names.").
		Def("few", clip, "few(x)\n--\n\nToo few names.")
	require.NoError(t, m.err)
	stub := m.Stub()
	assert.Contains(t, stub, "def clip(x: SupportsDLPack | Buffer, lo: float, hi: float, /) -> int:")
	assert.Contains(t, stub, "def odd(arg1: SupportsDLPack | Buffer, arg2: float, arg3: float, /) -> int:")
	assert.Contains(t, stub, "def few(arg1: SupportsDLPack | Buffer, arg2: float, arg3: float, /) -> int:")
	assert.Equal(t, 0, int(m.funcs[0].c.named)) // still positional-only
}

type point struct{ x, y float64 }

func newPoint(x, y float64) *point              { return &point{x, y} }
func (p *point) Norm2() float64                 { return p.x*p.x + p.y*p.y }
func (p *point) Scale(v []float64, a float64)   {}
func (p *point) X() float64                     { return p.x }
func (p *point) SetX(x float64)                 { p.x = x }
func (p *point) String() string                 { return "point" }
func (p *point) MarshalBinary() ([]byte, error) { return nil, nil }

type other struct{}

func TestClassDefinitionChecks(t *testing.T) {
	c := NewClass[point]("Point", "A point.\n").
		Init(newPoint, Args("x=0.0", "y=0.0")).
		Method("norm2", (*point).Norm2, "norm2()").
		Method("scale", (*point).Scale, "", Writes("v"), Args("v", "a=2.0")).
		Property("x", (*point).X, (*point).SetX, "x")
	m := NewModule("m", "").Class(c).Def("dist", func(a, b *point) float64 { return 0 }, "", Args("a", "b"))
	require.NoError(t, m.err)
	ci := c.info
	assert.False(t, ci.pickle, "MarshalBinary without UnmarshalBinary")
	require.Len(t, ci.methods, 3) // __repr__ (String), norm2, scale
	scale := ci.methods[2]
	assert.Equal(t, uint32(1<<1), uint32(scale.c.writes), `Writes("v") is the parameter after the receiver`)
	assert.Equal(t, "scale(v, a=2.0)\n--\n\n", scale.doc, "the signature line made from Args")
	assert.Equal(t, 1, int(scale.c.self))
	assert.Equal(t, 2.0, float64(scale.c.defaults[2].f))
	assert.Equal(t, ci.id, int(m.funcs[0].c.cls[0]))
	assert.Equal(t, ci.id, int(m.funcs[0].c.cls[1]))
	stub := m.Stub()
	for _, want := range []string{
		"class Point:\n    \"A point.\\n\"\n",
		"    def __init__(self, x: float = 0.0, y: float = 0.0) -> None: ...  # once, by Cls(...); again: TypeError\n",
		"    def norm2(self) -> float:\n",
		"    def scale(self, v: SupportsDLPack | Buffer, a: float = 2.0) -> None:\n",
		"    @property\n    def x(self) -> float:\n", "    @x.setter\n    def x(self, value: float) -> None: ...\n",
		"def dist(a: Point, b: Point) -> float:",
	} {
		assert.Contains(t, stub, want)
	}
	assert.NotContains(t, stub, "__reduce__")

	bad := func(c ClassDef) string {
		m := NewModule("m", "").Class(c)
		require.Error(t, m.err)
		return m.err.Error()
	}
	assert.Contains(t, bad(NewClass[point]("Again", "")), "m: class Again: pyext.point is already the class Point")
	assert.Contains(t, bad(NewClass[other]("1x", "")), `class name "1x" is not a Python identifier`)
	assert.Contains(t, bad(NewClass[struct{ a int }]("A", "").Init(func() *point { return nil })),
		"Init: want a function returning")
	assert.Contains(t, bad(NewClass[struct{ b int }]("B", "").Method("f", func(x float64) {}, "")),
		"method f: want a function whose first parameter is the receiver")
	assert.Contains(t, bad(NewClass[struct{ c int }]("C", "").Method("f", func(p *struct{ c int }, x []float64) {}, "",
		Args("x"), Writes("y"))), `method f: pyext.Writes("y"): no parameter "y" (its parameters are x)`)
	assert.Contains(t, bad(NewClass[struct{ c2 int }]("C2", "").Method("f", func(p *struct{ c2 int }, x []float64) {}, "",
		Writes("self"))), `pyext.Writes("self"): no parameter "self" (its parameters have no names`)
	assert.Contains(t, bad(NewClass[struct{ c3 int }]("C3", "").Method("f", func(p *struct{ c3 int }, x []float64) {}, "",
		Args("x"), Writes("self"))), `pyext.Writes("self"): no parameter "self" (its parameters are x)`)
	assert.Contains(t, bad(NewClass[struct{ d int }]("D", "").Property("p", func(p *struct{ d int }, x int) int { return 0 },
		nil, "")), "property p: getter")
	assert.Contains(t, bad(NewClass[struct{ e int }]("E", "").Method("f", func(p *struct{ e int }, x int) {}, "",
		Args("a", "b"))), "method f: pyext.Args: 2 names for 1 parameters")
}

func TestStubTypeMapsGoTypes(t *testing.T) {
	m := NewModule("m", "").Def("f", func(x []float32, s string) ([]float64, bool) { return nil, false }, "doc")
	require.NoError(t, m.err)
	assert.True(t, strings.Contains(m.Stub(), "def f(arg1: SupportsDLPack | Buffer, arg2: str, /) -> tuple[Tensor, bool]:"))
	assert.Contains(t, m.Stub(), "class SupportsDLPack(Protocol):")
}

// "/" and "*" in Args make positional-only and keyword-only parameters, as
// in a Python signature, and the signature line and the stub say so.
func TestPositionalOnlyAndKeywordOnlyParameters(t *testing.T) {
	m := NewModule("m", "").Def("f", Func3(func(x []float64, a float64, b int) float64 { return 0 }), "Doc.",
		Args("x", "/", "a=2.0", "*", "b=1"))
	require.NoError(t, m.err)
	f := m.funcs[0]
	assert.Equal(t, 1, int(f.c.posonly))
	assert.Equal(t, 2, int(f.c.kwonly))
	assert.Equal(t, "f(x, /, a=2.0, *, b=1)\n--\n\nDoc.", f.doc)
	assert.Contains(t, m.Stub(), "def f(x: SupportsDLPack | Buffer, /, a: float = 2.0, *, b: int = 1) -> float:")
	// A keyword-only parameter needs no default after one with a default.
	require.NoError(t, NewModule("m", "").Def("g", func(a float64, b int) {}, "", Args("a=1.0", "*", "b")).err)
	for want, args := range map[string][]string{
		`"/" must follow a parameter`:              {"/", "x", "a"},
		`"*" given twice`:                          {"x", "*", "*", "a"},
		`"*" must be followed by a parameter`:      {"x", "a", "b", "*"},
		`"/" must follow a parameter, once`:        {"x", "/", "/", "a"},
		"2 names for 3 parameters":                 {"x", "/", "a"},
		`"b" without a default follows one with a`: {"x", "a=1.0", "b"},
	} {
		err := NewModule("m", "").Def("f", func(x []float64, a float64, b int) {}, "", Args(args...)).err
		if assert.Error(t, err, want) {
			assert.Contains(t, err.Error(), want)
		}
	}
}

// None is the default of a pointer or typed-slice parameter only.
func TestNoneAsADefault(t *testing.T) {
	require.NoError(t, NewModule("m", "").Def("f", func(x *float64) {}, "", Args("x=None")).err)
	require.NoError(t, NewModule("m", "").Def("s", func(b []byte) {}, "", Args("b=None")).err)
	for name, fn := range map[string]any{"g": func(x float64) {}, "n": func(x NDArray[float64]) {}} {
		err := NewModule("m", "").Def(name, fn, "", Args("x=None")).err
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), "default x=None: None for a parameter that takes no None (a pointer *T and a typed slice do)")
	}
}
