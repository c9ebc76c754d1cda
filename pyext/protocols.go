package pyext

// protocols.go: a Go class's special methods for Python's container, sequence and
// context-manager protocols (len, obj[i], slices, in, with), and their table for C.

/*
#include <stdlib.h>
#include "errkind.h"
#include "ext_class.h"
*/
import "C"

import (
	"fmt"
	"reflect"
	"unsafe"
)

// specialInfo is a special method of a class (ext.h's gdl_special).
type specialInfo struct {
	name    string
	kind    C.int
	flags   C.int
	fn, aux *goFunc
}

func (ci *classInfo) addSpecial(name string, kind, flags C.int, fn, aux *goFunc) {
	ci.specials = append(ci.specials, specialInfo{name: name, kind: kind, flags: flags, fn: fn, aux: aux})
}

func (ci *classInfo) special(name string) *specialInfo {
	for i := range ci.specials {
		if ci.specials[i].name == name {
			return &ci.specials[i]
		}
	}
	return nil
}

// Len is len(obj): fn is func(*T) int.
func (c *Class[T]) Len(fn any) *Class[T] {
	ci := c.info
	f, err := ci.method("__len__", fn, "", nil)
	if err == nil && (f.typ.NumIn() != 1 || len(f.results) > 1 || f.typ.NumOut() != 1 || f.typ.Out(0).Kind() != reflect.Int) {
		err = fmt.Errorf("want func(%v) int, got %v", ci.ptr, f.typ)
	}
	if err != nil {
		ci.fail(fmt.Errorf("Len: %w", err))
		return c
	}
	ci.length = f
	ci.methods = append(ci.methods, f)
	return c
}

// GetItem is obj[i] for an int i: fn is func(*T, int) V (or (V, error)).
// A negative i counts from the end and i is checked against Len (which the
// class must have) first: out of range raises IndexError, and fn is only
// called with 0 <= i < len. A slice key is GetSlice's (TypeError without it).
func (c *Class[T]) GetItem(fn any, opts ...Option) *Class[T] {
	return c.item("__getitem__", C.GDL_M_GETITEM, fn, 2, opts)
}

// SetItem is obj[i] = v: fn is func(*T, int, V) (or returns an error);
// i as for GetItem.
func (c *Class[T]) SetItem(fn any, opts ...Option) *Class[T] {
	return c.item("__setitem__", C.GDL_M_SETITEM, fn, 3, opts)
}

// DelItem is del obj[i]: fn is func(*T, int) (or returns an error); i as
// for GetItem.
func (c *Class[T]) DelItem(fn any, opts ...Option) *Class[T] {
	return c.item("__delitem__", C.GDL_M_DELITEM, fn, 2, opts)
}

// GetSlice is obj[start:stop:step]: fn is func(*T, start, stop, step int)
// R (or (R, error)), called with the slice's indices clipped to Len as
// slice.indices(len(obj)) gives them: the items are those of range(start,
// stop, step), and step is never 0 (ValueError before Go is called). The
// class needs GetItem (and Len).
func (c *Class[T]) GetSlice(fn any, opts ...Option) *Class[T] {
	return c.sliceItem("__getitem__", fn, 4, opts)
}

// SetSlice is obj[start:stop:step] = v: fn is func(*T, start, stop, step
// int, v V) (or returns an error), the indices as for GetSlice. The class
// needs SetItem.
func (c *Class[T]) SetSlice(fn any, opts ...Option) *Class[T] {
	return c.sliceItem("__setitem__", fn, 5, opts)
}

// DelSlice is del obj[start:stop:step]: fn is func(*T, start, stop, step
// int) (or returns an error), the indices as for GetSlice. The class needs
// DelItem.
func (c *Class[T]) DelSlice(fn any, opts ...Option) *Class[T] {
	return c.sliceItem("__delitem__", fn, 4, opts)
}

func (c *Class[T]) sliceItem(name string, fn any, nin int, opts []Option) *Class[T] {
	ci := c.info
	f, err := ci.method(name, fn, "", opts)
	if err == nil {
		ok := f.typ.NumIn() == nin
		for i := 1; ok && i < 4; i++ {
			ok = f.typ.In(i).Kind() == reflect.Int
		}
		if !ok {
			err = fmt.Errorf("want a func(%v, start, stop, step int%s), got %v", ci.ptr, map[int]string{4: "", 5: ", V"}[nin], f.typ)
		}
	}
	if err != nil {
		ci.fail(fmt.Errorf("%s (slices): %w", name, err))
		return c
	}
	if ci.slices == nil {
		ci.slices = map[string]*goFunc{}
	}
	ci.slices[name] = f
	return c
}

func (c *Class[T]) item(name string, kind C.int, fn any, nin int, opts []Option) *Class[T] {
	ci := c.info
	f, err := ci.method(name, fn, "", opts)
	if err == nil && (f.typ.NumIn() != nin || f.typ.In(1).Kind() != reflect.Int) {
		err = fmt.Errorf("want a func(%v, int%s), got %v", ci.ptr, map[int]string{2: "", 3: ", V"}[nin], f.typ)
	}
	if err != nil {
		ci.fail(fmt.Errorf("%s: %w", name, err))
		return c
	}
	ci.addSpecial(name, kind, 0, f, nil) // aux (Len) is filled in by cClass
	return c
}

// Contains is v in obj: fn is func(*T, V) bool. A v that V's conversion
// refuses with TypeError (a str for an int V) is not in obj.
func (c *Class[T]) Contains(fn any) *Class[T] {
	ci := c.info
	f, err := ci.method("__contains__", fn, "", nil)
	if err == nil && (f.typ.NumIn() != 2 || f.typ.NumOut() != 1 || f.typ.Out(0).Kind() != reflect.Bool) {
		err = fmt.Errorf("want func(%v, V) bool, got %v", ci.ptr, f.typ)
	}
	if err != nil {
		ci.fail(fmt.Errorf("Contains: %w", err))
		return c
	}
	ci.addSpecial("__contains__", C.GDL_M_CONTAINS, 0, f, nil)
	return c
}

// Context makes the objects context managers (with obj as x: ...): enter
// is func(*T) (or returns an error; x is then obj) or func(*T) R (or (R,
// error); x is the R); exit is func(*T) or func(*T, raised bool), raised
// true when the block raised; either may return an error, and either may
// be nil. An exception of the block always propagates.
func (c *Class[T]) Context(enter, exit any) *Class[T] {
	ci := c.info
	if enter != nil {
		f, err := ci.method("__enter__", enter, "", nil)
		if err == nil && f.typ.NumIn() != 1 {
			err = fmt.Errorf("want func(%v) [R] [error], got %v", ci.ptr, f.typ)
		}
		if err != nil {
			ci.fail(fmt.Errorf("Context enter: %w", err))
			return c
		}
		ci.addSpecial("__enter__", C.GDL_M_ENTER, 0, f, nil)
	}
	if exit == nil {
		exit = func(*T) {}
	}
	f, err := ci.method("__exit__", exit, "", nil)
	if err == nil && (f.typ.NumIn() > 2 || f.typ.NumIn() == 2 && f.typ.In(1).Kind() != reflect.Bool || len(f.results) > 0) {
		err = fmt.Errorf("want func(%v[, bool]) [error], got %v", ci.ptr, f.typ)
	}
	if err != nil {
		ci.fail(fmt.Errorf("Context exit: %w", err))
		return c
	}
	ci.addSpecial("__exit__", C.GDL_M_EXIT, 0, f, nil)
	if enter == nil {
		ci.addSpecial("__enter__", C.GDL_M_ENTER, 0, ci.mustMethod("__enter__", func(*T) {}), nil)
	}
	return c
}

func (ci *classInfo) mustMethod(name string, fn any) *goFunc {
	f, err := ci.method(name, fn, "", nil)
	if err != nil {
		panic(err) // pyext's own wrappers: not reached
	}
	return f
}

// cSpecials fills c's special methods.
func (ci *classInfo) cSpecials(c *C.gdl_class) {
	if len(ci.specials) == 0 {
		return
	}
	c.nspecials = C.int(len(ci.specials))
	c.specials = (*C.gdl_special)(C.calloc(C.size_t(len(ci.specials)), C.sizeof_gdl_special))
	ss := unsafe.Slice(c.specials, len(ci.specials))
	for i, s := range ci.specials {
		ss[i].name = C.CString(s.name)
		ss[i].kind = s.kind
		ss[i].flags = s.flags
		ss[i].fn = s.fn.c
		switch {
		case s.aux != nil:
			ss[i].aux = s.aux.c
		case ci.length != nil:
			ss[i].aux = ci.length.c
		}
		if f := ci.slices[s.name]; f != nil && s.kind != C.GDL_M_BINOP {
			ss[i].slice = f.c
		}
	}
}
