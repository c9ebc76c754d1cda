package pyext

// hashing.go: comparison and hashing of a Go class's objects (==, <, hash), by
// methods or by value.

/*
#include <stdlib.h>
#include "errkind.h"
#include "ext_class.h"
*/
import "C"

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math"
	"reflect"
)

// compare adds the comparisons of *T's Equal, Less and Hash methods (NewClass).
func compare[T any](ci *classInfo) {
	var p *T
	eq, hasEq := any(p).(interface{ Equal(*T) bool })
	_, hasLess := any(p).(interface{ Less(*T) bool })
	_, hasHash := any(p).(interface{ Hash() uint64 })
	_ = eq
	if hasEq {
		f := ci.mustMethod("__eq__", Func2(func(a, b *T) bool { return any(a).(interface{ Equal(*T) bool }).Equal(b) }))
		ci.addSpecial("__eq__", C.GDL_M_CMP, 0, f, nil)
		ci.addSpecial("__ne__", C.GDL_M_CMP, C.GDL_CMP_NEGATE, f, nil)
	}
	if hasLess {
		f := ci.mustMethod("__lt__", Func2(func(a, b *T) bool { return any(a).(interface{ Less(*T) bool }).Less(b) }))
		ci.addSpecial("__lt__", C.GDL_M_CMP, 0, f, nil)
		ci.addSpecial("__gt__", C.GDL_M_CMP, C.GDL_CMP_SWAP, f, nil)
		ci.addSpecial("__le__", C.GDL_M_CMP, C.GDL_CMP_SWAP|C.GDL_CMP_NEGATE, f, nil)
		ci.addSpecial("__ge__", C.GDL_M_CMP, C.GDL_CMP_NEGATE, f, nil)
	}
	if hasHash {
		ci.methods = append(ci.methods, ci.mustMethod("__hash__", Func1(func(a *T) uint64 { return any(a).(interface{ Hash() uint64 }).Hash() })))
	} else if hasEq {
		ci.unhashable = true // as Python makes a class with __eq__ and no __hash__
	}
}

// EqualByValue makes == and != compare the Go values (*a == *b; T must be
// comparable, with no Equal method) and hash() hash them (unless *T has
// Hash): for small value types (a key, a point). Like a Python class that
// defines __eq__ and __hash__ over its fields, the objects should then not
// change while they are dict keys.
func (c *Class[T]) EqualByValue() *Class[T] {
	ci := c.info
	switch {
	case !ci.ptr.Elem().Comparable():
		ci.fail(fmt.Errorf("EqualByValue: %v is not comparable", ci.ptr.Elem()))
		return c
	case ci.special("__eq__") != nil:
		ci.fail(fmt.Errorf("EqualByValue: %v has an Equal method already", ci.ptr))
		return c
	}
	f := ci.mustMethod("__eq__", Func2(func(a, b *T) bool { return any(*a) == any(*b) }))
	ci.addSpecial("__eq__", C.GDL_M_CMP, 0, f, nil)
	ci.addSpecial("__ne__", C.GDL_M_CMP, C.GDL_CMP_NEGATE, f, nil)
	hasHash := false
	for _, m := range ci.methods {
		hasHash = hasHash || m.name == ci.name+".__hash__"
	}
	if !hasHash {
		ci.methods = append(ci.methods, ci.mustMethod("__hash__", Func1(func(a *T) uint64 {
			var h maphash.Hash
			h.SetSeed(hashSeed)
			hashValue(&h, reflect.ValueOf(a).Elem())
			return h.Sum64()
		})))
	}
	return c
}

var hashSeed = maphash.MakeSeed()

// hashValue writes v, of a comparable type, so that values equal under ==
// write the same bytes (0.0 and -0.0 alike).
func hashValue(h *maphash.Hash, v reflect.Value) {
	var b [8]byte
	put := func(u uint64) {
		binary.LittleEndian.PutUint64(b[:], u)
		_, _ = h.Write(b[:])
	}
	float := func(f float64) {
		if f == 0 {
			f = 0 // -0 == 0
		}
		put(math.Float64bits(f))
	}
	switch v.Kind() {
	case reflect.Bool:
		if v.Bool() {
			put(1)
		} else {
			put(0)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		put(uint64(v.Int()))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		put(v.Uint())
	case reflect.Float32, reflect.Float64:
		float(v.Float())
	case reflect.Complex64, reflect.Complex128:
		float(real(v.Complex()))
		float(imag(v.Complex()))
	case reflect.String:
		put(uint64(v.Len()))
		_, _ = h.WriteString(v.String())
	case reflect.Pointer, reflect.Chan, reflect.UnsafePointer:
		put(uint64(v.Pointer()))
	case reflect.Array:
		for i := range v.Len() {
			hashValue(h, v.Index(i))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			hashValue(h, v.Field(i))
		}
	case reflect.Interface:
		if v.IsNil() {
			put(0)
			return
		}
		_, _ = h.WriteString(v.Elem().Type().String())
		hashValue(h, v.Elem())
	}
}
