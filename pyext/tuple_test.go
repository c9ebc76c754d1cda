package pyext

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A tuple wrapper registers one C result per Go result (not the error),
// with the kinds the reflection path gives, and a tuple in the stub.
func TestTupleWrappersRegisterEachResult(t *testing.T) {
	m := NewModule("m", "").
		Def("ms", Func1R2(func(x []float64) (float64, float64) { return 0, 0 }), "", ReadOnlyArgs).
		Def("kv", FuncE1R3(func(s string) (string, []byte, bool, error) { return "", nil, false, nil }), "").
		Def("kv_refl", func(s string) (string, []byte, bool, error) { return "", nil, false, nil }, "")
	require.NoError(t, m.err)
	assert.Equal(t, 2, int(m.funcs[0].c.nresults))
	assert.Equal(t, 3, int(m.funcs[1].c.nresults))
	assert.Equal(t, kindsOf(m.funcs[2]), kindsOf(m.funcs[1]))
	assert.Equal(t, "syb", kindsOf(m.funcs[1]))
	assert.Contains(t, m.Stub(), "-> tuple[float, float]:")
	assert.Contains(t, m.Stub(), "def kv(arg1: str, /) -> tuple[str, bytes, bool]:")
}

// An error among a tuple's values is refused at definition: it goes last,
// through FuncE.
func TestTupleWrapperRefusesAnErrorValue(t *testing.T) {
	m := NewModule("m", "").Def("bad", Func0R2(func() (error, int) { return nil, 0 }), "")
	require.Error(t, m.err)
	assert.Contains(t, m.err.Error(), "result 1: an error in a tuple of results")
}

// kindsOf is f's result kind letters.
func kindsOf(f *goFunc) string {
	return string(unsafe.Slice((*byte)(unsafe.Pointer(&f.c.kinds[0])), int(f.c.nresults)))
}
