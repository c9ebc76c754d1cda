package pyext

// iterators.go: Go sequences as Python iterators. A function or method
// returning an iter.Seq[V] or iter.Seq2[K, V] (any func(yield func(V) bool)
// type) returns an iterator that pulls one value per __next__ (a (k, v) tuple
// for a Seq2, pull.go), converted as a result of type V; a sequence left
// unfinished stops (its deferred calls run) when the iterator dies.
// Class.Iter takes the same through Seq and Seq2.

/*
#include <stdlib.h>
#include "errkind.h"
#include "ext_class.h"
*/
import "C"

import (
	"fmt"
	"iter"
	"reflect"
	"sync"
	"unsafe"
)

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

// seqElems is what the sequence type t yields (one type, or two for a
// Seq2); false when t is no sequence.
func seqElems(t reflect.Type) ([]reflect.Type, bool) {
	if t.Kind() != reflect.Func || t.NumIn() != 1 || t.NumOut() != 0 || t.IsVariadic() {
		return nil, false
	}
	y := t.In(0)
	if y.Kind() != reflect.Func || y.IsVariadic() || y.NumOut() != 1 || y.Out(0).Kind() != reflect.Bool || y.NumIn() < 1 || y.NumIn() > 2 {
		return nil, false
	}
	elems := make([]reflect.Type, y.NumIn())
	for i := range elems {
		elems[i] = y.In(i)
	}
	return elems, true
}

// nexts caches the next function of each sequence type.
var nexts sync.Map // reflect.Type -> *goFunc

// seqNext is the Go function Python's __next__ calls for sequences of type
// t: func(pull state's handle) (elems..., error), errStop at the end. Its
// element types are checked as results when it is made.
func seqNext(t reflect.Type, elems []reflect.Type) (*goFunc, error) {
	if f, ok := nexts.Load(t); ok {
		return f.(*goFunc), nil
	}
	outs := append(append([]reflect.Type{}, elems...), errorType)
	ft := reflect.FuncOf([]reflect.Type{reflect.TypeFor[int64]()}, outs, false)
	stop := reflect.ValueOf(&errStop).Elem()
	fn := reflect.MakeFunc(ft, func(args []reflect.Value) []reflect.Value {
		vs, ok, err := handles.value(uintptr(args[0].Int())).(*pull[[]reflect.Value]).next()
		res := make([]reflect.Value, len(outs))
		for i, et := range elems {
			if ok {
				res[i] = vs[i]
			} else {
				res[i] = reflect.Zero(et)
			}
		}
		res[len(elems)] = reflect.Zero(errorType)
		if err != nil {
			res[len(elems)] = reflect.ValueOf(&err).Elem()
		} else if !ok {
			res[len(elems)] = stop
		}
		return res
	})
	f, err := newGoFunc(t.String()+".__next__", fn.Interface(), "", []Option{ReleaseGIL}) // pull's comment: why
	if err != nil {
		return nil, err
	}
	f.typ = ft
	fillClasses(f)
	actual, _ := nexts.LoadOrStore(t, f)
	return actual.(*goFunc), nil
}

// reflectSeq is the sequence seq (of a type seqElems accepts) as one of
// []reflect.Value, one per yielded value, for pull.
func reflectSeq(seq reflect.Value) iter.Seq[[]reflect.Value] {
	yt := seq.Type().In(0)
	return func(yield func([]reflect.Value) bool) {
		y := reflect.MakeFunc(yt, func(args []reflect.Value) []reflect.Value {
			return []reflect.Value{reflect.ValueOf(yield(append([]reflect.Value(nil), args...))).Convert(yt.Out(0))}
		})
		seq.Call([]reflect.Value{y})
	}
}

// seqResult converts a returned sequence of type t into an iterator (ok
// false: t is no sequence).
func seqResult(t reflect.Type) (r result, ok bool, err error) {
	elems, ok := seqElems(t)
	if !ok {
		return result{}, false, nil
	}
	next, err := seqNext(t, elems)
	if err != nil {
		return result{}, true, fmt.Errorf("sequence %v: %w", t, err)
	}
	return result{C.GDL_V_ITER, func(rv reflect.Value, v *C.gdl_value, _ []span) error {
		if rv.IsNil() {
			return &ValueError{fmt.Sprintf("a nil %v was returned", t)}
		}
		v.i = newHandle(newPull(reflectSeq(rv)))
		v.p = unsafe.Pointer(next.c)
		return nil
	}}, true, nil
}

// Seq2 makes fn, a method returning an iter.Seq2[K, V], the iteration of
// the class's objects for Class.Iter: each value is a (k, v) tuple, as
// dict.items() gives.
func Seq2[T, K, V any](fn func(*T) iter.Seq2[K, V]) Iterable {
	st := reflect.TypeFor[iter.Seq2[K, V]]()
	return Iterable{elem: st, build: func(ci *classInfo) (*goFunc, *goFunc, error) {
		if ci.ptr != reflect.TypeFor[*T]() {
			return nil, nil, fmt.Errorf("Seq2 of a %v method given to the class of %v", reflect.TypeFor[*T](), ci.ptr)
		}
		next, err := seqNext(st, []reflect.Type{reflect.TypeFor[K](), reflect.TypeFor[V]()})
		if err != nil {
			return nil, nil, fmt.Errorf("Seq2: %w", err)
		}
		iterFn, err := iterFunc(ci, reflect.TypeOf(fn), func(obj any) any {
			return newPull(reflectSeq(reflect.ValueOf(fn(obj.(*T)))))
		})
		return iterFn, next, err
	}}
}

// seqStub is the stub's Iterator type of the sequence type t.
func seqStub(t reflect.Type) (string, bool) {
	elems, ok := seqElems(t)
	switch {
	case !ok:
		return "", false
	case len(elems) == 1:
		return "Iterator[" + StubType(elems[0], false) + "]", true
	}
	return "Iterator[tuple[" + StubType(elems[0], false) + ", " + StubType(elems[1], false) + "]]", true
}
