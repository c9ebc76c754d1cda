package pyext

// classmethods.go: the Class builders beside Method and Property: static and class
// methods, callable objects, weak references and Python subclasses.

/*
#include <stdlib.h>
#include "errkind.h"
#include "ext_class.h"
*/
import "C"

import (
	"fmt"
)

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
