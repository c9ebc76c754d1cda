package pyext

// class.go: Go types as Python classes (NewClass): constructors, methods,
// properties, their objects' Go values, and the class table for C.

/*
#include <stdlib.h>
#include <stdint.h>
#include "ext_class.h"
#include "errkind.h"
*/
import "C"

import (
	"encoding"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Class is a Go type T offered to Python as a class of the extension
// module: its objects hold a *T. Define it at package level and add it to
// the module with Module.Class:
//
//	var indexClass = pyext.NewClass[Index]("Index", "A nearest-neighbour index.").
//		Init(newIndex, pyext.Args("dim")).                    // Index(dim): func(int) (*Index, error)
//		Method("add", (*Index).Add, "add(x): ...", pyext.ReadOnlyArgs).
//		Property("size", (*Index).Size, nil, "How many vectors.")
//
// A method is a function (plain or pyext.Func2...) whose first parameter is
// the receiver *T; its other parameters, results and options follow Def's
// rules (Writes counts the parameters after the receiver, from 0). A *T is
// also a parameter or result type of any function or method of the module:
// a parameter takes exactly an object of the class, a returned *T (never
// nil) becomes a new object.
//
// The Python object holds the *T through a handle (no Go pointer is
// kept in C memory), deleted when the object dies: the value is Go's to
// collect from then on. Methods run with the GIL, so one at a time, unless
// they are defined with ReleaseGIL: then several Python threads may run
// methods of one object at once, and T must be safe for that (a mutex).
//
// repr() is *T's GoString() when *T is a fmt.GoStringer, str() its
// String() when it is a fmt.Stringer; String alone serves both (otherwise
// Python's default, <vecmath.Index object at 0x...>). *T's methods
// Equal(*T) bool, Less(*T) bool and Hash() uint64 are ==/!=, the ordering
// (<, >, <=, >= from Less) and hash(); Equal without Hash makes the objects
// unhashable, as in Python. Other protocols are declared with WeakRef,
// StaticMethod, ClassMethod, Len, GetItem, SetItem, DelItem, Contains,
// Iter, Context, Call, EqualByValue and Subclassable (protocols.go, iterators.go, hashing.go, classmethods.go;
// docs/classes.md). Objects pickle when *T is an
// encoding.BinaryMarshaler and encoding.BinaryUnmarshaler (unpickled by the
// module's own _rebuild_object, into a new(T)); otherwise pickling raises
// TypeError.
type Class[T any] struct{ info *classInfo }

type classInfo struct {
	id        int
	name, doc string
	ptr       reflect.Type // *T
	ctor      *goFunc
	methods   []*goFunc
	props     []propInfo
	pickle    bool
	err       error
	c         *C.gdl_class
	// protocols.go: special methods, Len (for item access); classmethods.go: WeakRef, and
	// whether __hash__ is None (Equal without Hash).
	specials   []specialInfo
	slices     map[string]*goFunc // GetSlice, SetSlice, DelSlice, by item method
	length     *goFunc
	buffer     *bufferInfo // buffer.go
	iterElem   reflect.Type
	weakref    bool
	unhashable bool
	basetype   bool
}

type propInfo struct {
	name, doc string
	get, set  *goFunc
}

// classes holds every class defined in this process, by id.
var classes struct {
	sync.Mutex
	list   []*classInfo
	byType map[reflect.Type]*classInfo
}

// classFor is the class whose objects are t (a *T), or nil.
func classFor(t reflect.Type) *classInfo {
	classes.Lock()
	defer classes.Unlock()
	return classes.byType[t]
}

var (
	marshalerType   = reflect.TypeFor[encoding.BinaryMarshaler]()
	unmarshalerType = reflect.TypeFor[encoding.BinaryUnmarshaler]()
	stringerType    = reflect.TypeFor[fmt.Stringer]()
)

// NewClass starts the definition of T as the Python class name. A type
// defined twice makes Init fail with ImportError.
func NewClass[T any](name, doc string) *Class[T] {
	ptr := reflect.TypeFor[*T]()
	ci := &classInfo{name: name, doc: doc, ptr: ptr,
		pickle: ptr.Implements(marshalerType) && ptr.Implements(unmarshalerType)}
	classes.Lock()
	if classes.byType == nil {
		classes.byType = map[reflect.Type]*classInfo{}
	}
	switch {
	case !isIdentifier(name):
		ci.err = fmt.Errorf("class name %q is not a Python identifier", name)
	case classes.byType[ptr] != nil:
		ci.err = fmt.Errorf("class %s: %v is already the class %s", name, ptr.Elem(), classes.byType[ptr].name)
	case len(classes.list) >= C.GDL_MAX_CLASSES:
		ci.err = fmt.Errorf("class %s: at most %d classes", name, C.GDL_MAX_CLASSES)
	default:
		ci.id = len(classes.list)
		classes.list = append(classes.list, ci)
		classes.byType[ptr] = ci
	}
	classes.Unlock()
	if ci.err == nil {
		// repr() is GoString, str() String; String alone is both.
		var p *T
		gs, isGo := any(p).(fmt.GoStringer)
		_, isStr := any(p).(fmt.Stringer)
		_ = gs
		if isGo {
			ci.methods = append(ci.methods, ci.mustMethod("__repr__", Func1(func(p *T) string { return any(p).(fmt.GoStringer).GoString() })))
		}
		if isStr {
			name := "__repr__"
			if isGo {
				name = "__str__"
			}
			ci.methods = append(ci.methods, ci.mustMethod(name, Func1(func(p *T) string { return any(p).(fmt.Stringer).String() })))
		}
		compare[T](ci) // hashing.go: Equal, Less, Hash
	}
	return &Class[T]{ci}
}

func (ci *classInfo) fail(err error) {
	if ci.err == nil {
		ci.err = fmt.Errorf("class %s: %w", ci.name, err)
	}
}

// Init sets the constructor: Python's Index(...) calls fn, which returns a
// *T (or a *T and an error); opts as for Def (Args names its parameters).
func (c *Class[T]) Init(fn any, opts ...Option) *Class[T] {
	ci := c.info
	f, err := buildFunc(ci.name, fn, ci.doc, opts)
	if err == nil {
		t := f.typ
		n := t.NumOut()
		if n > 0 && t.Out(n-1) == errorType {
			n--
		}
		if n != 1 || t.Out(0) != ci.ptr {
			err = fmt.Errorf("Init: want a function returning %v (and an error), got %v", ci.ptr, t)
		}
	}
	if err != nil {
		ci.fail(err)
		return c
	}
	ci.ctor = f
	return c
}

// Method adds fn, whose first parameter is the receiver *T (a method
// expression such as (*Index).Add, or a func(*Index, ...)), as the method
// name; opts as for Def, Writes counting the parameters after the receiver.
func (c *Class[T]) Method(name string, fn any, doc string, opts ...Option) *Class[T] {
	f, err := c.info.method(name, fn, doc, opts)
	if err != nil {
		c.info.fail(fmt.Errorf("method %s: %w", name, err))
		return c
	}
	c.info.methods = append(c.info.methods, f)
	return c
}

func (ci *classInfo) method(name string, fn any, doc string, opts []Option) (*goFunc, error) {
	if !isIdentifier(name) {
		return nil, fmt.Errorf("%q is not a Python identifier", name)
	}
	f, err := buildFunc(ci.name+"."+name, fn, doc, methodOpts(opts))
	if err != nil {
		return nil, err
	}
	if f.typ.NumIn() == 0 || f.typ.In(0) != ci.ptr {
		return nil, fmt.Errorf("want a function whose first parameter is the receiver %v, got %v", ci.ptr, f.typ)
	}
	f.self = true
	return f, nil
}

// Property adds the attribute name: get is func(*T) R, set (nil: read-only)
// func(*T, V) or func(*T, V) error; R and V follow Def's rules.
func (c *Class[T]) Property(name string, get, set any, doc string) *Class[T] {
	ci := c.info
	p := propInfo{name: name, doc: doc}
	var err error
	if p.get, err = ci.method(name, get, doc, nil); err == nil && (p.get.typ.NumIn() != 1 || len(p.get.results) > 1) {
		err = fmt.Errorf("getter: want func(%v) R, got %v", ci.ptr, p.get.typ)
	}
	if err == nil && set != nil {
		p.set, err = ci.method(name, set, doc, nil)
		if err == nil && p.set.typ.NumIn() != 2 {
			err = fmt.Errorf("setter: want func(%v, V) [error], got %v", ci.ptr, p.set.typ)
		}
	}
	if err != nil {
		ci.fail(fmt.Errorf("property %s: %w", name, err))
		return c
	}
	ci.props = append(ci.props, p)
	return c
}

func (c *Class[T]) classInfo() *classInfo { return c.info }

// ClassDef is a class definition (a *Class[T]) for Module.Class.
type ClassDef interface{ classInfo() *classInfo }

// Class adds the class c to the module, as <module>.<name>.
func (m *Module) Class(c ClassDef) *Module {
	ci := c.classInfo()
	for _, s := range ci.specials {
		if (s.kind == C.GDL_M_GETITEM || s.kind == C.GDL_M_SETITEM || s.kind == C.GDL_M_DELITEM) && ci.length == nil {
			ci.fail(fmt.Errorf("%s needs Len (for negative indices and the range check)", s.name))
		}
	}
	for name := range ci.slices {
		if sp := ci.special(name); sp == nil || sp.kind == C.GDL_M_BINOP {
			ci.fail(fmt.Errorf("%s of slices needs the class's %s of ints (GetItem, SetItem, DelItem)", name, name))
		}
	}
	if ci.err != nil && m.err == nil {
		m.err = fmt.Errorf("%s: %w", m.name, ci.err)
	}
	m.classes = append(m.classes, ci)
	return m
}

// cClass is the class's C description (made once, kept for the process).
func (ci *classInfo) cClass() *C.gdl_class {
	if ci.c != nil {
		return ci.c
	}
	c := (*C.gdl_class)(C.calloc(1, C.sizeof_gdl_class))
	c.id = C.int(ci.id)
	c.name = C.CString(ci.name)
	c.doc = C.CString(ci.doc)
	if ci.ctor != nil {
		c.ctor = ci.ctor.c
	}
	if ci.pickle {
		c.pickle = 1
	}
	if ci.weakref {
		c.weakref = 1
	}
	if ci.unhashable {
		c.unhashable = 1
	}
	if ci.basetype {
		c.basetype = 1
	}
	if ci.buffer != nil {
		c.buffer = 1
	}
	ci.cSpecials(c) // protocols.go
	c.nmethods = C.int(len(ci.methods))
	if len(ci.methods) > 0 {
		c.methods = (**C.gdl_fn)(C.calloc(C.size_t(len(ci.methods)), C.size_t(unsafe.Sizeof(uintptr(0)))))
		ms := unsafe.Slice(c.methods, len(ci.methods))
		for i, f := range ci.methods {
			ms[i] = f.c
		}
	}
	c.nprops = C.int(len(ci.props))
	if len(ci.props) > 0 {
		c.props = (*C.gdl_prop)(C.calloc(C.size_t(len(ci.props)), C.sizeof_gdl_prop))
		ps := unsafe.Slice(c.props, len(ci.props))
		for i, p := range ci.props {
			ps[i].name = C.CString(p.name)
			ps[i].doc = C.CString(p.doc)
			ps[i].get = p.get.c
			if p.set != nil {
				ps[i].set = p.set.c
			}
		}
	}
	ci.c = c
	return c
}

// fillClasses gives C the class of f's object parameters and results.
func fillClasses(f *goFunc) {
	t := f.typ
	for i := 0; i < t.NumIn() && i < C.GDL_MAX_PARAMS; i++ {
		if ci := classFor(t.In(i)); ci != nil {
			f.c.cls[i] = C.int16_t(ci.id)
		}
	}
	k := 0
	for i := 0; i < t.NumOut() && k < C.GDL_MAX_RESULTS; i++ {
		if t.Out(i) == errorType {
			continue
		}
		if ci := classFor(t.Out(i)); ci != nil {
			f.c.rcls[k] = C.int16_t(ci.id)
		}
		k++
	}
}

// live counts the objects of Go classes alive (their handles not deleted).
var live atomic.Int64

// LiveObjects is how many objects of this module's Go classes are alive:
// for tests that objects are freed.
func LiveObjects() int { return int(live.Load()) }

func newHandle(v any) C.int64_t {
	live.Add(1)
	return C.int64_t(handles.new(v))
}

// objParam converts an object argument (C checked its class) to the *T.
func objParam(v *C.gdl_value, _ string, _ int) (reflect.Value, error) {
	return reflect.ValueOf(handles.value(uintptr(v.i))), nil
}

// objResult makes a returned *T an object of its class.
func objResult(t reflect.Type) result {
	return result{C.GDL_V_OBJ, func(rv reflect.Value, v *C.gdl_value, _ []span) error {
		if rv.IsNil() {
			return &ValueError{fmt.Sprintf("a nil %v was returned", t)}
		}
		v.i = newHandle(rv.Interface())
		return nil
	}}
}

//export gdlpyDropHandle
func gdlpyDropHandle(h C.uintptr_t) {
	if d, ok := handles.value(uintptr(h)).(dropper); ok { // a Go iterator: stop it (pull.go)
		d.drop()
	}
	handles.delete(uintptr(h))
	live.Add(-1)
}

//export gdlpyMarshal
func gdlpyMarshal(h C.uintptr_t, data **C.char, n *C.int64_t, errBuf *C.char, errLen C.int, exc *C.uintptr_t) (kind C.int) {
	v := handles.value(uintptr(h))
	defer func() {
		if p := recover(); p != nil {
			kind = recovered(p, fmt.Sprintf("%T.MarshalBinary", v), errBuf, errLen, exc)
		}
	}()
	b, err := v.(encoding.BinaryMarshaler).MarshalBinary()
	if err != nil {
		kind, _ = failure(err, nil, errBuf, errLen, exc)
		return kind
	}
	*data = (*C.char)(C.malloc(C.size_t(len(b) + 1)))
	copy(unsafe.Slice((*byte)(unsafe.Pointer(*data)), len(b)), b)
	*n = C.int64_t(len(b))
	return C.GDL_ERR_NONE
}

//export gdlpyUnmarshal
func gdlpyUnmarshal(cls C.int, data *C.char, n C.int64_t, h *C.uintptr_t, errBuf *C.char, errLen C.int, exc *C.uintptr_t) (kind C.int) {
	classes.Lock()
	ci := classes.list[cls]
	classes.Unlock()
	defer func() {
		if p := recover(); p != nil {
			kind = recovered(p, fmt.Sprintf("%v.UnmarshalBinary", ci.ptr), errBuf, errLen, exc)
		}
	}()
	v := reflect.New(ci.ptr.Elem()).Interface()
	if err := v.(encoding.BinaryUnmarshaler).UnmarshalBinary(C.GoBytes(unsafe.Pointer(data), C.int(n))); err != nil {
		kind, _ = failure(err, nil, errBuf, errLen, exc)
		return kind
	}
	*h = C.uintptr_t(newHandle(v))
	return C.GDL_ERR_NONE
}

// pyName is the class's name in a stub.
func (ci *classInfo) pyName() string { return strings.TrimSpace(ci.name) }
