package pyext

// containers.go: Go slices, maps and sets of scalars as Python lists, dicts and
// sets, both directions.

/*
#include <stdlib.h>
#include "ext.h"
*/
import "C"

import (
	"fmt"
	"reflect"
	"slices"
	"unsafe"
)

// Containers that Python passes and gets as lists and dicts (copied both
// ways), not arrays: []string as list[str], map[string]T as dict[str, T]
// for a scalar or string T, and []*T of a Go class as a list of its
// objects (results only). Numeric slices stay arrays (DLPack, zero-copy).

// scalarKind is the value kind of a scalar or string type (0: none).
func scalarKind(t reflect.Type) byte {
	switch t.Kind() {
	case reflect.Float32, reflect.Float64:
		return C.GDL_V_FLOAT
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return C.GDL_V_INT
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return C.GDL_V_UINT
	case reflect.Bool:
		return C.GDL_V_BOOL
	case reflect.String:
		return C.GDL_V_STR
	}
	return 0
}

// containerKind is GDL_V_LIST or GDL_V_DICT for the container types t, and
// the kind of its items (a dict's values); 0 for any other type.
func containerKind(t reflect.Type) (kind, item byte) {
	switch {
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String:
		return C.GDL_V_LIST, C.GDL_V_STR
	case t.Kind() == reflect.Slice && classFor(t.Elem()) != nil:
		return C.GDL_V_LIST, C.GDL_V_OBJ
	case t.Kind() == reflect.Map && t.Key().Kind() == reflect.String && scalarKind(t.Elem()) != 0:
		return C.GDL_V_DICT, scalarKind(t.Elem())
	}
	return 0, 0
}

// containerElem is what C checks a container argument's items against.
func containerElem(t reflect.Type) (C.gdl_elem, bool) {
	kind, item := containerKind(t)
	if kind == 0 || item == C.GDL_V_OBJ {
		return C.gdl_elem{}, false
	}
	e := C.gdl_elem{kind: C.uint8_t(item)}
	if kind == C.GDL_V_DICT {
		e = elemOf(t.Elem())
		e.kind = C.uint8_t(item)
	}
	return e, true
}

// containerParam converts a list or dict argument (C's values at v.s) to t.
func containerParam(t reflect.Type) (byte, param, bool) {
	kind, item := containerKind(t)
	if kind == 0 || item == C.GDL_V_OBJ {
		return 0, nil, false
	}
	return kind, func(v *C.gdl_value, _ string, _ int) (reflect.Value, error) {
		n := int(v.n)
		if kind == C.GDL_V_LIST {
			items := unsafe.Slice((*C.gdl_value)(unsafe.Pointer(v.s)), n)
			rv := reflect.MakeSlice(t, n, n)
			for k := range items {
				setScalar(rv.Index(k), item, &items[k])
			}
			return rv, nil
		}
		items := unsafe.Slice((*C.gdl_value)(unsafe.Pointer(v.s)), 2*n)
		rv := reflect.MakeMapWithSize(t, n)
		key, val := reflect.New(t.Key()).Elem(), reflect.New(t.Elem()).Elem()
		for k := 0; k < n; k++ {
			setScalar(key, C.GDL_V_STR, &items[2*k])
			setScalar(val, item, &items[2*k+1])
			rv.SetMapIndex(key, val)
		}
		return rv, nil
	}, true
}

// setScalar sets rv from a value C has checked against rv's type.
func setScalar(rv reflect.Value, kind byte, v *C.gdl_value) {
	switch kind {
	case C.GDL_V_FLOAT:
		rv.SetFloat(float64(v.f))
	case C.GDL_V_INT:
		rv.SetInt(int64(v.i))
	case C.GDL_V_UINT:
		rv.SetUint(uint64(v.i))
	case C.GDL_V_BOOL:
		rv.SetBool(v.i != 0)
	case C.GDL_V_STR:
		rv.SetString(C.GoStringN(v.s, C.int(v.n)))
	}
}

// putScalar is setScalar's inverse (a string's bytes not copied here).
func putScalar(rv reflect.Value, kind byte, v *C.gdl_value) {
	switch kind {
	case C.GDL_V_FLOAT:
		v.f = C.double(rv.Float())
	case C.GDL_V_INT:
		v.i = C.int64_t(rv.Int())
	case C.GDL_V_UINT:
		v.i = C.int64_t(rv.Uint())
	case C.GDL_V_BOOL:
		v.i = 0
		if rv.Bool() {
			v.i = 1
		}
	}
}

// containerResult makes a returned container one malloc'd block for C:
// its values, then the bytes of its strings (ext_pyobj.c builds the list or
// dict and frees the block).
func containerResult(t reflect.Type) (result, bool) {
	kind, item := containerKind(t)
	if kind == 0 {
		return result{}, false
	}
	var cls int
	if item == C.GDL_V_OBJ {
		cls = classFor(t.Elem()).id
	}
	return result{kind, func(rv reflect.Value, v *C.gdl_value, _ []span) error {
		n := rv.Len()
		var keys []reflect.Value
		strs := make([]string, 0, n) // in the order of the values that point to them
		if kind == C.GDL_V_DICT {
			keys = rv.MapKeys()
			slices.SortFunc(keys, func(a, b reflect.Value) int { // a dict in a stable order
				if a.String() < b.String() {
					return -1
				}
				if a.String() > b.String() {
					return 1
				}
				return 0
			})
		}
		nv := n
		if kind == C.GDL_V_DICT {
			nv = 2 * n
		}
		bytes := 0
		for k := 0; k < n; k++ {
			if kind == C.GDL_V_DICT {
				strs = append(strs, keys[k].String())
				if item == C.GDL_V_STR {
					strs = append(strs, rv.MapIndex(keys[k]).String())
				}
			} else if item == C.GDL_V_STR {
				strs = append(strs, rv.Index(k).String())
			} else if rv.Index(k).IsNil() {
				return &ValueError{fmt.Sprintf("a nil %v in the returned %v", t.Elem(), t)}
			}
		}
		for _, s := range strs {
			bytes += len(s)
		}
		size := nv*int(C.sizeof_gdl_value) + bytes
		block := C.malloc(C.size_t(max(size, 1)))
		if block == nil {
			return &RuntimeError{"out of memory for a returned " + t.String()}
		}
		items := unsafe.Slice((*C.gdl_value)(block), nv)
		text := unsafe.Slice((*byte)(unsafe.Add(block, nv*int(C.sizeof_gdl_value))), bytes)
		next := 0
		putStr := func(v *C.gdl_value) {
			s := strs[0]
			strs = strs[1:]
			copy(text[next:], s)
			v.s, v.n = (*C.char)(unsafe.Add(block, nv*int(C.sizeof_gdl_value)+next)), C.int64_t(len(s))
			next += len(s)
		}
		for k := 0; k < n; k++ {
			switch {
			case kind == C.GDL_V_DICT:
				putStr(&items[2*k])
				if item == C.GDL_V_STR {
					putStr(&items[2*k+1])
				} else {
					putScalar(rv.MapIndex(keys[k]), item, &items[2*k+1])
				}
			case item == C.GDL_V_STR:
				putStr(&items[k])
			default: // an object: C makes it around this handle
				items[k].i, items[k].n = newHandle(rv.Index(k).Interface()), C.int64_t(cls)
			}
		}
		v.s, v.n, v.versioned = (*C.char)(block), C.int64_t(n), C.int(item)
		return nil
	}}, true
}
