package pyext

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type arity struct{ n int }

func sum6(a []float64, b float64, c int, d bool, e string, f float32) float64 { return b }

// Every generated arity takes the typed path (no reflection per call) and
// fills the same C descriptor and stub as the plain function would.
func TestTypedWrappersOfEveryArity(t *testing.T) {
	cls := NewClass[arity]("Arity", "")
	m := NewModule("m", "").
		Def("sum6", Func6(sum6), "", ReadOnlyArgs).
		Def("sum6e", FuncE6(func(a []float64, b float64, c int, d bool, e string, f float32) (float64, error) { return 0, nil }), "").
		Def("p6", Proc6(func(a, b, c, d, e, f int) {}), "").
		Def("f8", Func8(func(a, b, c, d, e, f, g, h int) int { return a + h }), "").
		Def("e0", FuncE0(func() (int, error) { return 1, nil }), "").
		Def("sum6_refl", sum6, "", ReadOnlyArgs)
	cls.Method("m6", Func7(func(p *arity, a, b, c, d, e, f int) int { return a }), "")
	m.Class(cls)
	require.NoError(t, m.err)
	typed, refl := m.funcs[0], m.funcs[5]
	assert.NotNil(t, typed.call)
	assert.Nil(t, refl.call)
	assert.Equal(t, C_sig(refl), C_sig(typed))
	assert.Equal(t, "afibsf", C_sig(typed))
	assert.Equal(t, 6, int(m.funcs[2].c.nparams))
	assert.Equal(t, 0, int(m.funcs[2].c.nresults))
	assert.Equal(t, 8, int(m.funcs[3].c.nparams))
	assert.Equal(t, 0, int(m.funcs[4].c.nparams))
	assert.NotNil(t, cls.info.methods[0].call)
	stub := m.Stub()
	assert.Contains(t, stub, "def sum6(arg1: SupportsDLPack | Buffer, arg2: float, arg3: int, arg4: bool, arg5: str, arg6: float, /) -> float:")
	assert.Contains(t, stub, "def sum6e(arg1: SupportsDLPack | Buffer, arg2: float, arg3: int, arg4: bool, arg5: str, arg6: float, /) -> float:")
	assert.Contains(t, stub, "def p6(arg1: int, arg2: int, arg3: int, arg4: int, arg5: int, arg6: int, /) -> None:")
	assert.Contains(t, stub, "    def m6(self, arg1: int, arg2: int, arg3: int, arg4: int, arg5: int, arg6: int, /) -> int:")
}

// C_sig is f's signature letters.
func C_sig(f *goFunc) string {
	return string(unsafe.Slice((*byte)(unsafe.Pointer(&f.c.sig[0])), int(f.c.nparams)))
}
