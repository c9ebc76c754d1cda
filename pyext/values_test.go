package pyext

import (
	"math/big"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Each type of values.go has its kind (ext.h's letters), as a parameter and
// a result, and a *T of it takes None.
func TestValueTypesHaveTheirKinds(t *testing.T) {
	for typ, kind := range map[reflect.Type]byte{
		reflect.TypeFor[complex64](): 'z', reflect.TypeFor[complex128](): 'z', bigIntType: 'B', timeType: 't',
		durationType: 'D', pathType: 'p', reflect.TypeFor[*float64](): 'f', reflect.TypeFor[*string](): 's',
		reflect.TypeFor[*time.Time](): 't', reflect.TypeFor[*int8](): 'i',
	} {
		k, _, err := paramFor(typ)
		require.NoError(t, err, typ)
		assert.Equal(t, kind, k, typ)
		r, err := resultFor(typ)
		require.NoError(t, err, typ)
		assert.Equal(t, kind, r.kind, typ)
		assert.Equal(t, typ.Kind() == reflect.Pointer && typ != bigIntType, elemOf(typ).opt == 1, typ)
	}
	r, err := resultFor(byteArrayType)
	require.NoError(t, err)
	assert.Equal(t, byte('Y'), r.kind)
	assert.Equal(t, uint8(8), uint8(elemOf(reflect.TypeFor[*int8]()).bits), "a *int8 keeps int8's range check")
}

// A pointer to what has no value of its own (a slice, a pointer, a struct)
// is refused at definition, and *big.Int is an int, never None.
func TestPointersWithoutAValueAreRefused(t *testing.T) {
	for _, typ := range []reflect.Type{reflect.TypeFor[*[]float64](), reflect.TypeFor[**int](), reflect.TypeFor[*struct{}]()} {
		assert.False(t, isOptional(typ), typ)
		_, _, err := paramFor(typ)
		assert.ErrorContains(t, err, "unsupported parameter type", typ)
		_, err = resultFor(typ)
		assert.ErrorContains(t, err, "unsupported result type", typ)
	}
	assert.False(t, isOptional(bigIntType))
	r, err := resultFor(bigIntType)
	require.NoError(t, err)
	assert.ErrorContains(t, r.put(reflect.ValueOf((*big.Int)(nil)), nil, nil), "a nil *big.Int was returned")
}

func TestValueTypesStubs(t *testing.T) {
	for typ, want := range map[reflect.Type][2]string{
		reflect.TypeFor[complex64]():  {"complex", "complex"},
		bigIntType:                    {"int", "int"},
		timeType:                      {"datetime.datetime", "datetime.datetime"},
		durationType:                  {"datetime.timedelta", "datetime.timedelta"},
		pathType:                      {"str | bytes | os.PathLike[str] | os.PathLike[bytes]", "str"},
		byteArrayType:                 {bufferArg, "bytearray"},
		reflect.TypeFor[*float64]():   {"float | None", "float | None"},
		reflect.TypeFor[*Path]():      {"str | bytes | os.PathLike[str] | os.PathLike[bytes] | None", "str | None"},
		reflect.TypeFor[*time.Time](): {"datetime.datetime | None", "datetime.datetime | None"},
	} {
		assert.Equal(t, want[0], StubType(typ, true), typ)
		assert.Equal(t, want[1], StubType(typ, false), typ)
	}
	m := NewModule("valuestub", "").Def("f", func(p *Path, d time.Duration) {}, "")
	assert.Contains(t, m.Stub(), "import datetime\nimport os\n")
	assert.NotContains(t, NewModule("valuestub2", "").Def("g", func(x complex128) {}, "").Stub(), "import datetime")
}
