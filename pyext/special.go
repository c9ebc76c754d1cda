package pyext

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
	"iter"
	"math"
	"reflect"
	"sync"
	"sync/atomic"
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

// WeakRef lets Python take weak references to the class's objects
// (weakref.ref(obj), weakref.WeakValueDictionary): PyO3's
// #[pyclass(weakref)], nanobind's nb::is_weak_referenceable().
func (c *Class[T]) WeakRef() *Class[T] { c.info.weakref = true; return c }

// Subclassable lets Python classes subclass this one (class MyIndex(Index)):
// the Go value lives in the instance, made by the Go class's __init__, which
// the subclass's __init__ calls as super().__init__(...) (a subclass
// without __init__ inherits it). Methods of an instance whose __init__ did
// not raise TypeError. A *T result is an object of the Go class itself,
// except from a ClassMethod called on the subclass. PyO3's
// #[pyclass(subclass)]; nanobind's classes are subclassable by default.
func (c *Class[T]) Subclassable() *Class[T] { c.info.basetype = true; return c }

// StaticMethod adds fn, a function with no receiver, as the static method
// name: Index.name(...) or index.name(...). opts as for Def.
func (c *Class[T]) StaticMethod(name string, fn any, doc string, opts ...Option) *Class[T] {
	return c.noReceiver(name, fn, doc, opts, C.GDL_M_STATIC)
}

// ClassMethod adds fn, a function with no receiver, as the class method
// name: an alternative constructor when it returns a *T, whose object then
// takes the class it was called on. (fn does not receive the class.)
func (c *Class[T]) ClassMethod(name string, fn any, doc string, opts ...Option) *Class[T] {
	return c.noReceiver(name, fn, doc, opts, C.GDL_M_CLASS)
}

func (c *Class[T]) noReceiver(name string, fn any, doc string, opts []Option, kind C.int) *Class[T] {
	ci := c.info
	if !isIdentifier(name) {
		ci.fail(fmt.Errorf("method %s: %q is not a Python identifier", name, name))
		return c
	}
	f, err := buildFunc(ci.name+"."+name, fn, doc, opts)
	if err != nil {
		ci.fail(fmt.Errorf("method %s: %w", name, err))
		return c
	}
	ci.addSpecial(name, kind, 0, f, nil)
	return c
}

// Call makes the objects callable: obj(...) calls fn, a method (its first
// parameter the receiver *T); opts as for Method.
func (c *Class[T]) Call(fn any, doc string, opts ...Option) *Class[T] {
	return c.Method("__call__", fn, doc, opts...)
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

// Iterable is an iteration for Class.Iter, made by Seq or Seq2.
type Iterable struct {
	build func(ci *classInfo) (iterFn, next *goFunc, err error)
	elem  reflect.Type // the sequence type (iter.Seq[V], iter.Seq2[K, V]), for the stub
}

// Seq makes fn, a method returning an iter.Seq[V] (func(*T) iter.Seq[V]),
// the iteration of the class's objects for Class.Iter: each iter(obj) calls
// fn and pulls its values (pull, below) one per __next__, converted as a
// result of type V. An iterator left unfinished stops the sequence when it
// is freed.
func Seq[T, V any](fn func(*T) iter.Seq[V]) Iterable {
	return Iterable{elem: reflect.TypeFor[iter.Seq[V]](), build: func(ci *classInfo) (*goFunc, *goFunc, error) {
		if ci.ptr != reflect.TypeFor[*T]() {
			return nil, nil, fmt.Errorf("Seq of a %v method given to the class of %v", reflect.TypeFor[*T](), ci.ptr)
		}
		rc, err := resOf[V]()
		if err != nil || rc.isErr {
			return nil, nil, fmt.Errorf("Seq: element type %v: %v", reflect.TypeFor[V](), err)
		}
		iterFn, err := iterFunc(ci, reflect.TypeOf(fn), func(obj any) any { return newPull(fn(obj.(*T))) })
		if err != nil {
			return nil, nil, err
		}
		next, err := newTyped(ci.name+".__next__", "", []Option{ReleaseGIL}, []paramSpec{{kind: C.GDL_V_INT}}, rc.kind,
			func(in, out []cValue, _ string) (int, error) {
				p := handles.value(uintptr(in[0].i)).(*pull[V])
				v, ok, err := p.next()
				if err != nil {
					return 0, err
				}
				if !ok {
					return 0, errStop
				}
				return putResult(rc, v, out, in)
			})
		if err != nil {
			return nil, nil, err
		}
		next.typ = reflect.TypeOf(func(int64) V { var v V; return v })
		fillClasses(next)
		return iterFn, next, nil
	}}
}

// iterFunc is a class's __iter__ (Seq, Seq2): start makes the pull state of
// the object's sequence, whose handle C keeps in the Python iterator; typ is
// the method's type, for the stub.
func iterFunc(ci *classInfo, typ reflect.Type, start func(obj any) any) (*goFunc, error) {
	f, err := newTyped(ci.name+".__iter__", "", []Option{methodOpt}, []paramSpec{{kind: C.GDL_V_OBJ}}, C.GDL_V_UINT,
		func(in, out []cValue, _ string) (int, error) {
			out[0].i = C.int64_t(newHandle(start(handles.value(uintptr(in[0].i)))))
			return 1, nil
		})
	if err != nil {
		return nil, err
	}
	f.typ = typ
	f.self = true
	fillClasses(f)
	return f, nil
}

// pull is a Go iterator being pulled by a Python one: the sequence runs in
// a goroutine of its own, one value per request. (Not iter.Pull: its
// coroutine must be resumed on the OS thread that started it, and Python
// threads take turns with an iterator, and free it, on any thread.) The
// next functions run without the GIL, so that a sequence may call Python
// (a func parameter) from its goroutine; mu makes the requests of threads
// that share an iterator take turns.
type pull[V any] struct {
	mu            sync.Mutex
	seq           iter.Seq[V]
	req           chan bool // true: the next value; false: stop
	resp          chan pulled[V]
	started, done bool
	runner        atomic.Int64 // the id of the sequence's goroutine, once it runs
}

type pulled[V any] struct {
	v         V
	ok        bool
	panicked  bool
	panicWith any
}

func newPull[V any](seq iter.Seq[V]) *pull[V] {
	return &pull[V]{seq: seq, req: make(chan bool), resp: make(chan pulled[V])}
}

func (p *pull[V]) run() {
	p.runner.Store(goid()) // before the first request is taken: next reads it after
	defer func() {
		if r := recover(); r != nil {
			p.resp <- pulled[V]{panicked: true, panicWith: r}
			return
		}
		p.resp <- pulled[V]{} // the end: answers the last request
	}()
	if !<-p.req {
		return
	}
	stopped := false
	p.seq(func(v V) bool {
		if stopped {
			panic("pyext: the sequence went on after yield returned false")
		}
		p.resp <- pulled[V]{v: v, ok: true}
		stopped = !<-p.req
		return !stopped
	})
}

// errReentered is what next answers its own sequence's goroutine (a Python
// callable of the sequence calling next on the iterator), as a generator
// answers itself.
var errReentered = &ValueError{Msg: "iterator already executing: the Go sequence called next() on its own iterator"}

// lock takes turns with the other callers; false for the sequence's own
// goroutine while the holder waits for it (it would wait for itself).
func (p *pull[V]) lock() bool {
	if p.mu.TryLock() {
		return true
	}
	if r := p.runner.Load(); r != 0 && r == goid() { // contended: the slow path
		return false
	}
	p.mu.Lock()
	return true
}

// next is the next value, false at the end; a panic of the sequence panics
// here; errReentered from the sequence's own goroutine.
func (p *pull[V]) next() (V, bool, error) {
	var z V
	if !p.lock() {
		return z, false, errReentered
	}
	defer p.mu.Unlock()
	if p.done {
		return z, false, nil
	}
	if !p.started {
		p.started = true
		go p.run()
	}
	p.req <- true
	r, err := p.answer()
	if err != nil {
		p.finish()
		return z, false, err
	}
	if r.panicked {
		p.finish()
		panic(r.panicWith)
	}
	if !r.ok {
		p.finish()
	}
	return r.v, r.ok, nil
}

// finish marks the sequence ended, its goroutine gone: the pull state
// lives on until the Python iterator dies (other threads may still ask it
// for the next value), but the sequence and what it holds are let go now.
func (p *pull[V]) finish() {
	p.done = true
	p.seq = nil
}

// drop stops the sequence (its deferred calls run) when the Python iterator
// dies, and waits for it: what the sequence panicked with while it
// stopped (a Python callable's exception: a *callbackAbort), else nil.
func (p *pull[V]) drop() any {
	if !p.lock() { // not reached: the iterator dies with no caller left
		return nil
	}
	defer p.mu.Unlock()
	defer p.finish()
	if p.started && !p.done {
		p.req <- false
		if r, err := p.answer(); err == nil && r.panicked { // else the end, or a refusal at exit
			return r.panicWith
		}
	}
	return nil
}

// gdlpyDropSeq stops and frees the Go sequence of an iterator's handle
// (ext_iter.h): gdlpyDropHandle, and what it panicked with while stopping.
//
//export gdlpyDropSeq
func gdlpyDropSeq(h C.uintptr_t, errBuf *C.char, errLen C.int, exc *C.uintptr_t) C.int {
	var p any
	if d, ok := handles.value(uintptr(h)).(dropper); ok {
		p = d.drop()
	}
	handles.delete(uintptr(h))
	live.Add(-1)
	if p == nil {
		return C.GDL_ERR_NONE
	}
	return recovered(p, "a Go sequence stopping", errBuf, errLen, exc)
}

// errExiting is next's answer when the sequence waits for good for a
// Python call refused because Python is shutting down.
var errExiting = &RuntimeError{Msg: "Python is shutting down: the Go sequence waits for a call of a Python callable that can no longer run"}

// answer is the sequence goroutine's answer to a request, or errExiting
// when that goroutine was stopped for good in a refused Python call
// (waitForExit): at exit, waiting for it would hang the process.
func (p *pull[V]) answer() (pulled[V], error) {
	for {
		signal := refusedSignal() // before the check: a refusal after it closes this one
		if isRefused(p.runner.Load()) {
			return pulled[V]{}, errExiting
		}
		select {
		case r := <-p.resp:
			return r, nil
		case <-signal:
		}
	}
}

// dropper is a handle's value with something to do when its object dies.
type dropper interface{ drop() any }

// Iter is iter(obj) (for x in obj): it, made by Seq.
func (c *Class[T]) Iter(it Iterable) *Class[T] {
	ci := c.info
	if it.build == nil {
		ci.fail(fmt.Errorf("Iter: want a pyext.Seq or pyext.Seq2"))
		return c
	}
	iterFn, next, err := it.build(ci)
	if err != nil {
		ci.fail(fmt.Errorf("Iter: %w", err))
		return c
	}
	ci.iterElem = it.elem
	ci.addSpecial("__iter__", C.GDL_M_ITER, 0, iterFn, next)
	return c
}

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
