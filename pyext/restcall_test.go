package pyext

// restcall_test.go: the typed wrappers pass arguments from C's values in
// order, at rest or converted (typed_gen.go's two closures).

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// callTyped builds w as function name and calls it on in, C's values.
func callTyped(t *testing.T, w Typed, in []cValue) (int, []cValue) {
	t.Helper()
	f, err := w.build("f", "", nil)
	require.NoError(t, err)
	out := make([]cValue, 8)
	n, err := f.call(in, out, "f")
	require.NoError(t, err)
	return n, out
}

func setF(v *cValue, x float64) { *(*float64)(unsafe.Pointer(&v.f)) = x }
func setI(v *cValue, x int64)   { *(*int64)(unsafe.Pointer(&v.i)) = x }
func getF(v *cValue) float64    { return *(*float64)(unsafe.Pointer(&v.f)) }

// Every argument at rest (float64, int64, int: typed_gen.go's first
// closure) is read from its own value at its own offset, in order.
func TestArgumentsAtRestAreReadInOrder(t *testing.T) {
	in := make([]cValue, 8)
	for i := range in {
		setF(&in[i], float64(i+1))
		setI(&in[i], int64(10*(i+1)))
	}
	n, out := callTyped(t, Func3(func(a float64, b int, c float64) float64 { return a*1000 + float64(b) + c/10 }), in)
	assert.Equal(t, 1, n)
	assert.Equal(t, 1000.0+20+0.3, getF(&out[0]))
	_, out = callTyped(t, Func8(func(a, b, c, d, e, f, g, h float64) float64 {
		return a + 2*b + 4*c + 8*d + 16*e + 32*f + 64*g + 128*h
	}), in)
	assert.Equal(t, 1.0+4+12+32+80+192+448+1024, getF(&out[0]))
	var got [6]int64
	_, _ = callTyped(t, Proc6(func(a, b, c, d, e, f int64) { got = [6]int64{a, b, c, d, e, f} }), in)
	assert.Equal(t, [6]int64{10, 20, 30, 40, 50, 60}, got)
	_, out = callTyped(t, FuncE2(func(a int, b float64) (float64, error) { return float64(a) - b, nil }), in)
	assert.Equal(t, 10.0-2, getF(&out[0]))
}

// A float32 (converted, not at rest) beside a float64 takes the general
// closure: the same values.
func TestArgumentsNotAllAtRestAreConvertedInOrder(t *testing.T) {
	in := make([]cValue, 3)
	for i := range in {
		setF(&in[i], float64(i+1))
	}
	_, out := callTyped(t, Func3(func(a float64, b float32, c float64) float64 { return a*100 + float64(b)*10 + c }), in)
	assert.Equal(t, 123.0, getF(&out[0]))
}

type arity16 struct{}

// Sixteen parameters (C's GDL_MAX_PARAMS), at rest and converted, in order;
// a module takes them, a method's receiver counted.
func TestSixteenParameters(t *testing.T) {
	in := make([]cValue, 16)
	for i := range in {
		setF(&in[i], float64(i+1))
	}
	weigh := func(xs ...float64) float64 {
		s := 0.0
		for i, x := range xs {
			s += x * float64(int(1)<<i)
		}
		return s
	}
	want := 0.0
	for i := range 16 {
		want += float64(i+1) * float64(int(1)<<i)
	}
	_, out := callTyped(t, Func16(func(a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p float64) float64 {
		return weigh(a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p)
	}), in)
	assert.Equal(t, want, getF(&out[0]))
	_, out = callTyped(t, FuncE16(func(a, b, c, d, e, f, g, h, i, j, k, l, m, n, o float64, p float32) (float64, error) {
		return weigh(a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, float64(p)), nil
	}), in)
	assert.Equal(t, want, getF(&out[0]))
	var got float64
	_, _ = callTyped(t, Proc9(func(a, b, c, d, e, f, g, h float64, i float32) { got = weigh(a, b, c, d, e, f, g, h, float64(i)) }), in)
	assert.Equal(t, weigh(1, 2, 3, 4, 5, 6, 7, 8, 9), got)
	cls := NewClass[arity16]("Arity16", "")
	cls.Method("m15", Func16(func(p *arity16, a, b, c, d, e, f, g, h, i, j, k, l, m, n, o int) int { return o }), "")
	mod := NewModule("m16", "").Def("f16", Func16(func(a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p int) int { return p }), "").Class(cls)
	require.NoError(t, mod.err)
	assert.Equal(t, 16, int(mod.funcs[0].c.nparams))
	assert.Equal(t, "iiiiiiiiiiiiiiii", C_sig(mod.funcs[0]))
	assert.Contains(t, mod.Stub(), "    def m15(self, arg1: int, arg2: int, arg3: int, arg4: int, arg5: int, arg6: int, arg7: int, arg8: int, arg9: int, arg10: int, arg11: int, arg12: int, arg13: int, arg14: int, arg15: int, /) -> int:")
}
