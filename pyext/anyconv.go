package pyext

// anyconv.go: Go's any, []any and map[string]any parameters, and results of
// those and map[any]any: Python value trees, both ways, as the plain Go
// values a codec (encoding/json, msgpack) takes and gives. An argument is
// one block of nodes C walked it into (ext_any.c), decoded here; a result
// is encoded here into one malloc'd block that C turns into objects.

/*
#include <stdlib.h>
#include "ext.h"
*/
import "C"

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"
	"unsafe"
)

var (
	anyType       = reflect.TypeFor[any]()
	anySliceType  = reflect.TypeFor[[]any]()
	anyMapType    = reflect.TypeFor[map[string]any]()
	anyAnyMapType = reflect.TypeFor[map[any]any]()
)

// isAnyParam says whether t is a parameter type of a Python value tree.
func isAnyParam(t reflect.Type) bool { return t == anyType || t == anySliceType || t == anyMapType }

// isAnyResult says whether t is a result type of a Python value tree.
func isAnyResult(t reflect.Type) bool { return isAnyParam(t) || t == anyAnyMapType }

// anyElem is what C checks an argument's top value against: a list or
// tuple for []any, a dict of str keys for map[string]any; any takes None
// as nil (opt: no tree).
func anyElem(t reflect.Type) C.gdl_elem {
	switch t {
	case anySliceType:
		return C.gdl_elem{kind: C.GDL_V_LIST}
	case anyMapType:
		return C.gdl_elem{kind: C.GDL_V_DICT}
	}
	return C.gdl_elem{opt: 1}
}

// anyStub is a stub's annotation for these types.
func anyStub(t reflect.Type, param bool) (string, bool) {
	switch {
	case t == anyType:
		return "Any", true
	case t == anySliceType && param:
		return "list[Any] | tuple[Any, ...]", true
	case t == anySliceType:
		return "list[Any]", true
	case t == anyMapType:
		return "dict[str, Any]", true
	case t == anyAnyMapType && !param:
		return "dict[Any, Any]", true
	}
	return "", false
}

// anyParam converts an argument of t (isAnyParam) through reflection.
func anyParam(t reflect.Type) param {
	return func(v *C.gdl_value, _ string, _ int) (reflect.Value, error) {
		rv := reflect.New(t).Elem()
		if x := anyOf(v, t == anyType); x != nil {
			rv.Set(reflect.ValueOf(x))
		}
		return rv, nil
	}
}

// anyArg converts an argument of A (any, []any or map[string]any) with no
// reflection, for the typed wrappers. C checked the top value's kind.
func anyArg[A any](v *C.gdl_value) A {
	var z A
	switch any(&z).(type) {
	case *[]any:
		l, _ := anyOf(v, false).([]any)
		return as[A](l)
	case *map[string]any:
		m, _ := anyOf(v, false).(map[string]any)
		return as[A](m)
	}
	return as[A](anyOf(v, true))
}

// anyOf decodes C's block of an argument; opt: an any parameter, which
// C's none marks None (nil) for (anyElem: others leave none as it was).
func anyOf(v *C.gdl_value, opt bool) any {
	if opt && v.none != 0 {
		return nil
	}
	d := anyDecoder{
		nodes: unsafe.Slice((*C.gdl_node)(unsafe.Pointer(v.s)), int(v.n)),
		text:  unsafe.Add(unsafe.Pointer(v.s), int(v.n)*C.sizeof_gdl_node),
	}
	return d.value()
}

type anyDecoder struct {
	nodes []C.gdl_node
	text  unsafe.Pointer // the bytes after the nodes, which strings point into
	k     int
}

// bytes is a string node's bytes in C's block (copied before Go keeps them).
func (d *anyDecoder) bytes(nd *C.gdl_node) []byte {
	return unsafe.Slice((*byte)(unsafe.Add(d.text, int(nd.i))), int(nd.n))
}

// value decodes node k and its items (k moves past them).
func (d *anyDecoder) value() any {
	nd := &d.nodes[d.k]
	d.k++
	switch nd.kind {
	case C.GDL_V_BOOL:
		return nd.i != 0
	case C.GDL_V_INT:
		return int64(nd.i)
	case C.GDL_V_FLOAT:
		return float64(nd.f)
	case C.GDL_V_COMPLEX:
		return complex(float64(nd.f), math.Float64frombits(uint64(nd.n)))
	case C.GDL_V_STR:
		return string(d.bytes(nd))
	case C.GDL_V_BYTES:
		return append([]byte{}, d.bytes(nd)...)
	case C.GDL_V_BIGINT:
		x, _ := new(big.Int).SetString(string(d.bytes(nd)), 0) // CPython's "-0x1f"
		return x
	case C.GDL_V_LIST:
		l := make([]any, int(nd.i))
		for j := range l {
			l[j] = d.value()
		}
		return l
	case C.GDL_V_DICT:
		n := int(nd.i)
		if nd.n != 0 { // every key a str
			m := make(map[string]any, n)
			for range n {
				k := d.value().(string)
				m[k] = d.value()
			}
			return m
		}
		m := make(map[any]any, n)
		for range n {
			k := d.value()
			if b, ok := k.([]byte); ok { // a bytes key: a string (C refused one that is a str key too)
				k = string(b)
			}
			m[k] = d.value()
		}
		return m
	}
	return nil // GDL_V_NONE
}

// anyResult converts a result of a type isAnyResult takes.
func anyResult() result {
	return result{C.GDL_V_ANY, func(rv reflect.Value, v *C.gdl_value, _ []span) error {
		var x any
		if rv.IsValid() {
			x = rv.Interface()
		}
		return putAny(x, v)
	}}
}

// putAny encodes x into one malloc'd block for C (ext_any.c builds the
// objects and frees it).
func putAny(x any, v *C.gdl_value) error {
	var e anyEncoder
	if err := e.put(x, 0); err != nil {
		var ae *anyResultError
		if errors.As(err, &ae) {
			ae.at = uintptr(unsafe.Pointer(v))
		}
		return err
	}
	size := len(e.nodes)*C.sizeof_gdl_node + len(e.text)
	block := C.malloc(C.size_t(size + 1))
	if block == nil {
		return &RuntimeError{"out of memory for a returned value"}
	}
	copy(unsafe.Slice((*C.gdl_node)(block), len(e.nodes)), e.nodes)
	copy(unsafe.Slice((*byte)(unsafe.Add(block, len(e.nodes)*C.sizeof_gdl_node)), len(e.text)), e.text)
	v.s, v.n = (*C.char)(block), C.int64_t(len(e.nodes))
	return nil
}

// anyResultError is a result that has no Python value: err (a TypeError or
// ValueError) at a path inside it, which the failed call names (nameAny).
type anyResultError struct {
	fn   string   // the function (nameAny), "" before
	pos  int      // the result, from 1
	at   uintptr  // C's value of the result, which tells pos
	path []string // innermost first
	deep bool     // nested too deep: no path (it would be as long)
	err  error
}

func (e *anyResultError) Error() string {
	var b strings.Builder
	if e.fn != "" {
		fmt.Fprintf(&b, "%s() result %d", e.fn, e.pos)
	} else {
		b.WriteString("a returned value")
	}
	for i := len(e.path) - 1; i >= 0; i-- {
		b.WriteString(e.path[i])
	}
	return b.String() + ": " + e.err.Error()
}

func (e *anyResultError) Unwrap() error { return e.err }

// nameAny names the function and the result in an anyResultError of a call
// whose results C holds at out.
func nameAny(err error, fn string, out *C.gdl_value) {
	var e *anyResultError
	if errors.As(err, &e) && e.fn == "" {
		k := (e.at - uintptr(unsafe.Pointer(out))) / C.sizeof_gdl_value
		if e.at >= uintptr(unsafe.Pointer(out)) && k < C.GDL_MAX_RESULTS {
			e.fn, e.pos = fn, int(k)+1
		}
	}
}

func anyErr(err error) error { return &anyResultError{err: err} }

// within adds a path step to an anyResultError from inside a container.
func within(err error, step string) error {
	var e *anyResultError
	if errors.As(err, &e) && !e.deep {
		e.path = append(e.path, step)
	}
	return err
}

type anyEncoder struct {
	nodes []C.gdl_node
	text  []byte
}

func (e *anyEncoder) node(kind byte) *C.gdl_node {
	e.nodes = append(e.nodes, C.gdl_node{kind: C.int32_t(kind)})
	return &e.nodes[len(e.nodes)-1]
}

// str adds a string node of kind (STR, BYTES, BIGINT with its NUL).
func (e *anyEncoder) str(kind byte, s string, nul bool) {
	nd := e.node(kind)
	nd.i, nd.n = C.int64_t(len(e.text)), C.int64_t(len(s))
	e.text = append(e.text, s...)
	if nul {
		e.text = append(e.text, 0)
	}
}

// put encodes x, inside depth containers.
func (e *anyEncoder) put(x any, depth int) error {
	switch x := x.(type) { // the types codecs give, with no reflection
	case nil:
		e.node(C.GDL_V_NONE)
	case bool:
		nd := e.node(C.GDL_V_BOOL)
		if x {
			nd.i = 1
		}
	case int64:
		e.node(C.GDL_V_INT).i = C.int64_t(x)
	case int:
		e.node(C.GDL_V_INT).i = C.int64_t(x)
	case float64:
		e.node(C.GDL_V_FLOAT).f = C.double(x)
	case string:
		return e.putString(x)
	case []byte:
		e.str(C.GDL_V_BYTES, unsafe.String(unsafe.SliceData(x), len(x)), false)
	case *big.Int:
		if x == nil {
			e.node(C.GDL_V_NONE)
		} else if x.IsInt64() {
			e.node(C.GDL_V_INT).i = C.int64_t(x.Int64())
		} else {
			e.str(C.GDL_V_BIGINT, x.Text(16), true)
		}
	case []any:
		if depth >= C.GDL_ANY_DEPTH {
			return tooDeep()
		}
		e.node(C.GDL_V_LIST).i = C.int64_t(len(x))
		for i, y := range x {
			if err := e.put(y, depth+1); err != nil {
				return within(err, fmt.Sprintf(" item %d", i))
			}
		}
	case map[string]any:
		if depth >= C.GDL_ANY_DEPTH {
			return tooDeep()
		}
		at := len(e.nodes)
		e.node(C.GDL_V_DICT).i = C.int64_t(len(x))
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys) // a dict in a stable order
		for _, k := range keys {
			if err := e.putString(k); err != nil {
				return within(err, fmt.Sprintf(" key %q", k))
			}
			if err := e.put(x[k], depth+1); err != nil {
				return within(err, fmt.Sprintf(" key %q", k))
			}
		}
		e.nodes[at].n = 1
	default:
		return e.putReflect(reflect.ValueOf(x), depth)
	}
	return nil
}

func (e *anyEncoder) putString(s string) error {
	if !utf8.ValidString(s) {
		return anyErr(&ValueError{"a Go string that is not UTF-8 (return []byte for bytes)"})
	}
	e.str(C.GDL_V_STR, s, false)
	return nil
}

func tooDeep() error {
	return &anyResultError{deep: true, err: &ValueError{fmt.Sprintf("nested deeper than %d slices and maps (does one contain itself?)", C.GDL_ANY_DEPTH)}}
}

// putReflect encodes the other kinds: other numbers, named types, typed
// slices, arrays and maps.
func (e *anyEncoder) putReflect(rv reflect.Value, depth int) error {
	switch rv.Kind() {
	case reflect.Bool:
		return e.put(rv.Bool(), depth)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		e.node(C.GDL_V_INT).i = C.int64_t(rv.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		e.node(C.GDL_V_UINT).i = C.int64_t(rv.Uint())
	case reflect.Float32, reflect.Float64:
		e.node(C.GDL_V_FLOAT).f = C.double(rv.Float())
	case reflect.Complex64, reflect.Complex128:
		c := rv.Complex()
		nd := e.node(C.GDL_V_COMPLEX)
		nd.f, nd.n = C.double(real(c)), C.int64_t(math.Float64bits(imag(c)))
	case reflect.String:
		return e.putString(rv.String())
	case reflect.Slice, reflect.Array:
		if rv.Type().Elem().Kind() == reflect.Uint8 && rv.Kind() == reflect.Slice { // a named []byte
			return e.put(rv.Bytes(), depth)
		}
		if depth >= C.GDL_ANY_DEPTH {
			return tooDeep()
		}
		e.node(C.GDL_V_LIST).i = C.int64_t(rv.Len())
		for i := range rv.Len() {
			if err := e.put(rv.Index(i).Interface(), depth+1); err != nil {
				return within(err, fmt.Sprintf(" item %d", i))
			}
		}
	case reflect.Map:
		return e.putMap(rv, depth)
	case reflect.Pointer:
		if b, ok := rv.Interface().(*big.Int); ok { // a named type's *big.Int
			return e.put(b, depth)
		}
		fallthrough
	default:
		return anyErr(&TypeError{fmt.Sprintf("unsupported type %v", rv.Type())})
	}
	return nil
}

// putMap encodes a map whose keys are nil, bools, numbers or strings, in
// the keys' order (keyOrder); two keys Python takes as one (1, 1.0, true)
// are a ValueError, never one of them lost.
func (e *anyEncoder) putMap(rv reflect.Value, depth int) error {
	if depth >= C.GDL_ANY_DEPTH {
		return tooDeep()
	}
	// The pairs as MapRange gives them: a NaN key, which no lookup finds, keeps its value.
	type pair struct{ k, v reflect.Value }
	pairs := make([]pair, 0, rv.Len())
	for it := rv.MapRange(); it.Next(); {
		pairs = append(pairs, pair{it.Key(), it.Value()})
	}
	for _, p := range pairs {
		if kk := keyValue(p.k); kk.Kind() != reflect.Invalid && pyKeyRank(kk) < 0 {
			return within(anyErr(&TypeError{fmt.Sprintf("a key of type %v has no Python value that a dict takes", kk.Type())}),
				fmt.Sprintf(" key %v", kk))
		}
	}
	slices.SortStableFunc(pairs, func(a, b pair) int { return keyOrder(a.k, b.k) })
	at := len(e.nodes)
	e.node(C.GDL_V_DICT).i = C.int64_t(len(pairs))
	var seen map[any]bool // an interface key type: keys of several types
	if rv.Type().Key().Kind() == reflect.Interface {
		seen = make(map[any]bool, len(pairs))
	}
	allStr := rv.Type().Key().Kind() == reflect.String
	for _, p := range pairs {
		kv := keyValue(p.k)
		step := func() string { return fmt.Sprintf(" key %#v", p.k.Interface()) } // made on an error only
		if seen != nil {
			pk := pyKey(kv)
			if seen[pk] {
				return within(anyErr(&ValueError{"the same Python dict key as another key of the map"}), step())
			}
			seen[pk] = true
		}
		var ki any
		if kv.IsValid() {
			ki = kv.Interface()
		}
		if err := e.put(ki, depth+1); err != nil {
			return within(err, step())
		}
		if err := e.put(p.v.Interface(), depth+1); err != nil {
			return within(err, step())
		}
	}
	if allStr {
		e.nodes[at].n = 1
	}
	return nil
}

// keyValue is a map key itself: an interface's dynamic value (invalid for nil).
func keyValue(k reflect.Value) reflect.Value {
	for k.Kind() == reflect.Interface {
		if k.IsNil() {
			return reflect.Value{}
		}
		k = k.Elem()
	}
	return k
}

// pyKeyRank orders keys by kind: None, bool, numbers, str, complex; -1 for a
// kind no dict key has from Go.
func pyKeyRank(k reflect.Value) int {
	switch k.Kind() {
	case reflect.Invalid:
		return 0
	case reflect.Bool:
		return 1
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return 2
	case reflect.String:
		return 3
	case reflect.Complex64, reflect.Complex128:
		return 4
	}
	return -1
}

// keyOrder sorts a dict's keys: by kind, then value.
func keyOrder(a, b reflect.Value) int {
	a, b = keyValue(a), keyValue(b)
	ra, rb := pyKeyRank(a), pyKeyRank(b)
	if ra != rb {
		return cmp.Compare(ra, rb)
	}
	switch ra {
	case 1:
		return cmp.Compare(boolInt(a.Bool()), boolInt(b.Bool()))
	case 2:
		return cmp.Compare(number(a), number(b))
	case 3:
		return cmp.Compare(a.String(), b.String())
	case 4:
		ca, cb := a.Complex(), b.Complex()
		return cmp.Or(cmp.Compare(real(ca), real(cb)), cmp.Compare(imag(ca), imag(cb)))
	}
	return 0
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// number is a numeric key as a float64 (for its order only).
func number(k reflect.Value) float64 {
	switch {
	case k.CanInt():
		return float64(k.Int())
	case k.CanUint():
		return float64(k.Uint())
	}
	return k.Float()
}

// pyKey is a key as a Go value equal to another's exactly when Python's
// dict takes the two as one key: true is 1, 1.0 is 1, 2+0j is 2.
func pyKey(k reflect.Value) any {
	switch pyKeyRank(k) {
	case 1:
		return int64(boolInt(k.Bool()))
	case 2:
		switch {
		case k.CanInt():
			return k.Int()
		case k.CanUint():
			if u := k.Uint(); u <= math.MaxInt64 {
				return int64(u)
			}
			return k.Uint()
		}
		return floatKey(k.Float())
	case 3:
		return k.String()
	case 4:
		c := k.Complex()
		if imag(c) == 0 {
			return floatKey(real(c))
		}
		return c
	}
	return nil
}

// floatKey is an integral float in int64's range as that int64.
func floatKey(f float64) any {
	if f == math.Trunc(f) && f >= math.MinInt64 && f < math.MaxInt64 {
		return int64(f)
	}
	return f
}
