package pyext

// exceptions.go: a module's own exception classes (NewException), raised by Go
// errors that match them.

/*
#include <stdlib.h>
#include "ext_class.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// Exception is a custom exception class of a module: Go errors that
// errors.As finds an E in are raised as it. Define it at package level and
// add it with Module.Exception:
//
//	type ParseError struct{ Line int }
//	func (e *ParseError) Error() string { return fmt.Sprintf("line %d: bad input", e.Line) }
//
//	var parseError = pyext.NewException[*ParseError]("ParseError", "ValueError", "Input that does not parse.")
//	var mod = pyext.NewModule("m", "...").Exception(parseError).Def(...)
//
// base names a builtin exception class (ValueError, KeyError, OSError,
// Exception...): Python code may catch the error as either. The message is
// the error's Error(). Exceptions are matched in the order they were
// defined, before pyext's own error types (ValueError{}...).
type Exception struct {
	id              int
	name, base, doc string
	match           func(error) bool
	added           atomic.Bool // to a module whose Init ran
	err             error
	c               *C.gdl_exc
}

var exceptions struct {
	sync.Mutex
	list []*Exception
}

// NewException defines the exception class name (a subclass of the builtin
// exception base) for errors of type E.
func NewException[E error](name, base, doc string) *Exception {
	e := &Exception{name: name, base: base, doc: doc, match: func(err error) bool {
		var t E
		return errors.As(err, &t)
	}}
	switch {
	case !isIdentifier(name):
		e.err = fmt.Errorf("exception name %q is not a Python identifier", name)
	case !isIdentifier(base):
		e.err = fmt.Errorf("exception %s: base %q is not a Python identifier", name, base)
	}
	exceptions.Lock()
	if len(exceptions.list) >= C.GDL_MAX_EXCEPTIONS && e.err == nil {
		e.err = fmt.Errorf("exception %s: at most %d exceptions", name, C.GDL_MAX_EXCEPTIONS)
	}
	if e.err == nil {
		e.id = len(exceptions.list)
		exceptions.list = append(exceptions.list, e)
	}
	exceptions.Unlock()
	return e
}

// Exception adds the exception class e to the module, as <module>.<name>.
func (m *Module) Exception(e *Exception) *Module {
	if e.err != nil && m.err == nil {
		m.err = fmt.Errorf("%s: %w", m.name, e.err)
	}
	m.excs = append(m.excs, e)
	return m
}

// cExc is e's C description (made once, kept for the process); its errors
// are raised as e from now on.
func (e *Exception) cExc() *C.gdl_exc {
	exceptions.Lock()
	defer exceptions.Unlock()
	if e.c == nil {
		e.c = (*C.gdl_exc)(C.calloc(1, C.sizeof_gdl_exc))
		e.c.id = C.int(e.id)
		e.c.name = C.CString(e.name)
		e.c.base = C.CString(e.base)
		e.c.doc = C.CString(e.doc)
	}
	e.added.Store(true)
	return e.c
}

// customKind is the error kind of the first custom exception err matches.
func customKind(err error) (C.int, bool) {
	exceptions.Lock()
	list := exceptions.list
	exceptions.Unlock()
	for _, e := range list {
		if e.added.Load() && e.match(err) {
			return C.GDL_ERR_EXC + C.int(e.id), true
		}
	}
	return 0, false
}

// errStop ends a Go iterator (StopIteration, caught by C).
var errStop = errors.New("pyext: iteration stopped")
