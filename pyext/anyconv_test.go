package pyext

import (
	"math"
	"math/big"
	"reflect"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// any, []any and map[string]any are value-tree parameters; results also
// map[any]any; other interface and map types stay refused.
func TestAnyTypesAreValueTrees(t *testing.T) {
	for _, typ := range []reflect.Type{anyType, anySliceType, anyMapType} {
		k, _, err := paramFor(typ)
		require.NoError(t, err, typ)
		assert.Equal(t, byte('A'), k, typ)
	}
	for _, typ := range []reflect.Type{anyType, anySliceType, anyMapType, anyAnyMapType} {
		r, err := resultFor(typ)
		require.NoError(t, err, typ)
		assert.Equal(t, byte('A'), r.kind, typ)
	}
	assert.Equal(t, uint8(1), uint8(elemOf(anyType).opt), "any takes None")
	assert.Equal(t, uint8('l'), uint8(elemOf(anySliceType).kind))
	assert.Equal(t, uint8('d'), uint8(elemOf(anyMapType).kind))
	for _, typ := range []reflect.Type{anyAnyMapType, reflect.TypeFor[error](), reflect.TypeFor[map[int]any]()} {
		_, _, err := paramFor(typ)
		assert.Error(t, err, typ)
	}
	assert.Equal(t, "Any", StubType(anyType, true))
	assert.Equal(t, "list[Any] | tuple[Any, ...]", StubType(anySliceType, true))
	assert.Equal(t, "list[Any]", StubType(anySliceType, false))
	assert.Equal(t, "dict[str, Any]", StubType(anyMapType, true))
	assert.Equal(t, "dict[Any, Any]", StubType(anyAnyMapType, false))
}

// Keys Python's dict takes as one are one pyKey; others are not.
func TestPyKeysAreEqualAsPythonsKeys(t *testing.T) {
	key := func(x any) any { return pyKey(reflect.ValueOf(x)) }
	assert.Equal(t, key(true), key(1))
	assert.Equal(t, key(int8(1)), key(uint64(1)))
	assert.Equal(t, key(1.0), key(1))
	assert.Equal(t, key(complex(2, 0)), key(2))
	assert.NotEqual(t, key(1.5), key(1))
	assert.NotEqual(t, key("1"), key(1))
	assert.NotEqual(t, key(uint64(math.MaxUint64)), key(-1))
	assert.NotEqual(t, key(math.Ldexp(1, 63)), key(int64(math.MinInt64)), "2**63 is no int64")
}

// A dict's keys are sorted by kind (None, bool, number, str, complex), then value.
func TestKeyOrder(t *testing.T) {
	m := reflect.ValueOf(map[any]any{"b": 0, 2.5: 0, nil: 0, int8(-3): 0, true: 0, "a": 0, 1i: 0, uint(7): 0})
	keys := m.MapKeys()
	slices.SortFunc(keys, keyOrder)
	var got []any
	for _, k := range keys {
		got = append(got, k.Interface())
	}
	assert.Equal(t, []any{nil, true, int8(-3), 2.5, uint(7), "a", "b", 1i}, got)
}

// An encoded tree is nodes in prefix order and the bytes of its strings;
// refusals carry their path, innermost last in the message.
func TestEncoding(t *testing.T) {
	var e anyEncoder
	huge, _ := new(big.Int).SetString("-0x1000000000000000000", 0)
	require.NoError(t, e.put([]any{"ab", map[string]any{"k": []byte{1}}, huge}, 0))
	kinds := ""
	for _, nd := range e.nodes {
		kinds += string(rune(nd.kind))
	}
	assert.Equal(t, "lsdsyB", kinds)
	assert.Equal(t, "abk\x01-1000000000000000000\x00", string(e.text))
	err := (&anyEncoder{}).put(map[string]any{"a": []any{0, make(chan int)}}, 0)
	assert.EqualError(t, err, `a returned value key "a" item 1: unsupported type chan int`)
	var te *TypeError
	assert.ErrorAs(t, err, &te)
}
