package pyext

// operators.go: a Go class's arithmetic and matrix operators (Operator,
// ReflectedOperator, InPlaceOperator) and NotImplemented.

/*
#include "ext_class.h"
#include "ext_arrays.h"
*/
import "C"

import (
	"fmt"
	"reflect"
)

// The binary operators of Operator, ReflectedOperator and InPlaceOperator,
// by symbol: the stem of their special methods (__add__, __radd__, __iadd__).
var binaryOps = map[string]string{
	"+": "add", "-": "sub", "*": "mul", "@": "matmul", "/": "truediv", "//": "floordiv", "%": "mod",
	"**": "pow", "<<": "lshift", ">>": "rshift", "&": "and", "|": "or", "^": "xor", "divmod": "divmod",
}

// The unary operators of Operator.
var unaryOps = map[string]string{"-": "neg", "+": "pos", "~": "invert", "abs": "abs"}

// Operator adds obj op other for a binary op ("+", "-", "*", "@", "/",
// "//", "%", "**", "<<", ">>", "&", "|", "^", "divmod"): fn is
// func(*T, V) R (or (R, error)). An other that V's conversion does not take
// (a str for a float64 V, an object of another class for a *T V) makes the
// method return NotImplemented, so Python tries other's reflected method and
// then raises TypeError, as for its own types. For a unary op ("-", "+",
// "~", "abs"), fn is func(*T) R.
func (c *Class[T]) Operator(op string, fn any) *Class[T] {
	ci := c.info
	if stem, ok := unaryOps[op]; ok && funcArity(fn) == 1 {
		f, err := ci.method("__"+stem+"__", fn, "", nil)
		if err == nil && values(f) != 1 {
			err = fmt.Errorf("want func(%v) R [error], got %v", ci.ptr, f.typ)
		}
		if err != nil {
			ci.fail(fmt.Errorf("Operator %q: %w", op, err))
			return c
		}
		ci.methods = append(ci.methods, f)
		return c
	}
	return c.binary("Operator", op, "__", fn, 0)
}

// ReflectedOperator adds other op obj, for an other whose own operator
// returned NotImplemented (a float + obj): fn is func(*T, V) R, called
// with obj first, as Python's __radd__ is. Its other rules are Operator's.
func (c *Class[T]) ReflectedOperator(op string, fn any) *Class[T] {
	return c.binary("ReflectedOperator", op, "__r", fn, 0)
}

// InPlaceOperator adds obj op= other: fn is func(*T, V) (or returns only an
// error), which changes obj, and obj is the result; or func(*T, V) R, whose
// result is bound to the name instead. Without it, obj op= other is obj =
// obj op other (Operator's). An other that V does not take: as for Operator.
func (c *Class[T]) InPlaceOperator(op string, fn any) *Class[T] {
	return c.binary("InPlaceOperator", op, "__i", fn, C.GDL_OP_INPLACE)
}

func (c *Class[T]) binary(what, op, prefix string, fn any, flags C.int) *Class[T] {
	ci := c.info
	stem, ok := binaryOps[op]
	if ok && prefix == "__i" && op == "divmod" {
		ok = false // Python has no in-place divmod
	}
	if !ok {
		ci.fail(fmt.Errorf("%s: %q is no binary operator (want one of + - * @ / // %% ** << >> & | ^ divmod)", what, op))
		return c
	}
	name := prefix + stem + "__"
	f, err := ci.method(name, fn, "", nil)
	switch {
	case err != nil:
	case f.typ.NumIn() != 2:
		err = fmt.Errorf("want func(%v, V) R [error], got %v", ci.ptr, f.typ)
	case flags == 0 && values(f) == 0:
		err = fmt.Errorf("want func(%v, V) R [error], got %v", ci.ptr, f.typ)
	case flags != 0 && values(f) > 1:
		err = fmt.Errorf("want func(%v, V) [R] [error], got %v", ci.ptr, f.typ)
	}
	if err != nil {
		ci.fail(fmt.Errorf("%s %q: %w", what, op, err))
		return c
	}
	markOperand(f.c, 1)
	ci.addSpecial(name, C.GDL_M_BINOP, flags, f, nil)
	return c
}

// markOperand makes parameter i of c, when a typed slice or an NDArray, an
// operand: an argument it refuses (a buffer or array of another dtype or
// layout) makes the operator return NotImplemented (ext.c), as an argument
// of another type does (ext_class.c), so that the other operand answers.
func markOperand(c *C.gdl_fn, i int) {
	view, _ := paramKind(byte(c.sig[i]), c.elem[i])
	if view != C.GDL_VIEW_SLICE && view != C.GDL_VIEW_ND {
		return
	}
	if c.req[i] == nil { // a plain slice's defaults, as arrayReqs makes them
		c.req[i] = (&paramReq{ndim: -1, order: -1, device: -1}).c(view)
	}
	c.req[i].operand = 1
}

// values is how many Python values f returns (its results but an error).
func values(f *goFunc) int {
	n := 0
	for i := range f.typ.NumOut() {
		if f.typ.Out(i) != errorType {
			n++
		}
	}
	return n
}

// funcArity is fn's number of parameters (a Typed wrapper's, too), -1 when
// fn is no function.
func funcArity(fn any) int {
	if t, ok := fn.(Typed); ok {
		return t.typ.NumIn()
	}
	if t := reflect.TypeOf(fn); t != nil && t.Kind() == reflect.Func {
		return t.NumIn()
	}
	return -1
}
