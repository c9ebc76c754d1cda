package pyext

// args.go: parameter names, defaults and keyword-only parameters (Args), and the
// method options that shift by the receiver.

/*
#include <stdlib.h>
#include "ext.h"
*/
import "C"

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
)

// Args names a function's (or method's, or constructor's) parameters, in
// order, so that Python may pass them by keyword, and gives defaults:
// "name" or "name=default", the default a Python literal of the parameter's
// type (0.5, -3, 0x10, True, 'text'):
//
//	Def("clip", clip, doc, pyext.Args("x", "lo=0.0", "hi=1.0"))
//
// makes clip(x), clip(x, 0.5), clip(x, hi=2.0) and clip(x=x, lo=0.0, hi=1.0)
// valid calls. As in a Python signature, a "/" after the first names makes
// them positional-only, and a "*" makes the names after it keyword-only:
// Args("x", "/", "lo=0.0", "*", "hi=1.0"). Every parameter is named (a
// method's receiver is not: it is self); parameters with defaults come
// last, keyword-only ones excepted; array and object parameters take none.
// A default that does not convert to the Go parameter's type, a wrong count
// or a repeated name makes Init fail with ImportError. Without Args, a
// function takes positional arguments only.
func Args(specs ...string) Option {
	return Option{&option{kind: optArgs, specs: append([]string{}, specs...)}}
}

// argsOf is the specs given by Args among opts (nil: none).
func argsOf(opts []Option) []string {
	for _, o := range opts {
		if o.kind() == optArgs {
			return o.o.specs
		}
	}
	return nil
}

// methodOpts is opts for a method's function, whose parameter 0 is the
// receiver: Args gets the receiver's name.
func methodOpts(opts []Option) []Option {
	out := make([]Option, 0, len(opts)+1)
	out = append(out, methodOpt)
	for _, o := range opts {
		if o.kind() == optArgs {
			o = Args(append([]string{"self"}, o.o.specs...)...)
		}
		out = append(out, o)
	}
	return out
}

// paramNames is the names of a function's n parameters, the receiver
// counted: Args', else those of the docstring's signature line, else nil.
func paramNames(opts []Option, doc string, self bool, n int) []string {
	if specs := argsOf(opts); specs != nil {
		var names []string
		for _, s := range specs {
			if s = strings.TrimSpace(s); s == "/" || s == "*" {
				continue
			}
			name, _, _ := strings.Cut(s, "=")
			names = append(names, strings.TrimSpace(name))
		}
		return names
	}
	names := signatureNames(doc)
	if self && names != nil {
		names = append([]string{"self"}, names...)
	}
	if len(names) != n {
		return nil
	}
	return names
}

// setArgs fills c's names and defaults from the Args among opts (self: the
// receiver, not a keyword), and f's, for Stub.
func setArgs(f *goFunc, opts []Option, self bool) error {
	specs := argsOf(opts)
	if specs == nil {
		return nil
	}
	c := f.c
	n := int(c.nparams)
	off := 0
	if self {
		off = 1
	}
	seen := map[string]bool{}
	defaulted := false
	f.names = make([]string, 0, n)
	f.defaults = make([]string, 0, n)
	posonly, kwonly := -1, -1
	for _, s := range specs {
		switch strings.TrimSpace(s) {
		case "/":
			if posonly >= 0 || kwonly >= 0 || len(f.names) == off {
				return fmt.Errorf("pyext.Args: \"/\" must follow a parameter, once, before any \"*\"")
			}
			posonly = len(f.names)
			continue
		case "*":
			if kwonly >= 0 {
				return fmt.Errorf("pyext.Args: \"*\" given twice")
			}
			kwonly = len(f.names)
			continue
		}
		i := len(f.names)
		if i >= n {
			return fmt.Errorf("pyext.Args: %d names for %d parameters", countNames(specs)-off, n-off)
		}
		name, def, hasDef := strings.Cut(s, "=")
		name, def = strings.TrimSpace(name), strings.TrimSpace(def)
		if !isIdentifier(name) {
			return fmt.Errorf("pyext.Args: %q is not a Python identifier", name)
		}
		if seen[name] {
			return fmt.Errorf("pyext.Args: parameter %q named twice", name)
		}
		seen[name] = true
		f.names = append(f.names, name)
		f.defaults = append(f.defaults, "")
		c.names[i] = C.CString(name) // kept for the process
		if !hasDef {
			if defaulted && kwonly < 0 {
				return fmt.Errorf("pyext.Args: parameter %q without a default follows one with a default", name)
			}
			continue
		}
		defaulted = true
		if def == "None" && isSliceParam(c, i) {
			c.elem[i].opt = 1 // None, or no argument, is a nil slice (PyO3's Option<&[u8]>)
		}
		if err := setDefault(&c.defaults[i], byte(c.sig[i]), c.elem[i], def); err != nil {
			return fmt.Errorf("pyext.Args: default %s=%s: %w", name, def, err)
		}
		c.has_default[i] = 1
		f.defaults[i] = def
	}
	if len(f.names) != n {
		return fmt.Errorf("pyext.Args: %d names for %d parameters", len(f.names)-off, n-off)
	}
	if kwonly == n {
		return fmt.Errorf("pyext.Args: \"*\" must be followed by a parameter")
	}
	if posonly >= 0 {
		c.posonly = C.int(posonly)
		f.posonly = posonly
	}
	if kwonly >= 0 {
		c.kwonly = C.int(kwonly)
		f.kwonly = kwonly
	}
	c.named = 1
	return nil
}

// countNames is how many parameter names specs give (not "/" or "*").
func countNames(specs []string) int {
	n := 0
	for _, s := range specs {
		if t := strings.TrimSpace(s); t != "/" && t != "*" {
			n++
		}
	}
	return n
}

var pyKeywords = map[string]bool{"False": true, "None": true, "True": true, "and": true, "as": true, "assert": true,
	"async": true, "await": true, "break": true, "class": true, "continue": true, "def": true, "del": true,
	"elif": true, "else": true, "except": true, "finally": true, "for": true, "from": true, "global": true,
	"if": true, "import": true, "in": true, "is": true, "lambda": true, "nonlocal": true, "not": true, "or": true,
	"pass": true, "raise": true, "return": true, "try": true, "while": true, "with": true, "yield": true}

func isIdentifier(s string) bool {
	if s == "" || pyKeywords[s] {
		return false
	}
	for i, r := range s {
		if !(r == '_' || unicode.IsLetter(r) || i > 0 && unicode.IsDigit(r)) {
			return false
		}
	}
	return true
}

// isSliceParam says whether parameter i is a typed slice ([]byte, []float64,
// ...): not an N-d view, a godlpack.Tensor or a container.
func isSliceParam(c *C.gdl_fn, i int) bool {
	e := c.elem[i]
	return byte(c.sig[i]) == C.GDL_V_ARRAY && e.bits != 0 && e.nd == 0 && e.tensor == 0
}

// setDefault converts a default's Python literal for a parameter of kind
// and Go type elem.
func setDefault(v *C.gdl_value, kind byte, elem C.gdl_elem, lit string) error {
	if lit == "None" {
		if elem.opt == 0 {
			return fmt.Errorf("None for a parameter that takes no None (a pointer *T and a typed slice do)")
		}
		v.none = 1
		v.data, v.n, v.ncap, v.i = nil, 0, -1, 0 // a typed slice: ncap -1 is nil (sliceOf), not empty
		return nil
	}
	bits := int(elem.bits)
	if bits == 0 {
		bits = 64
	}
	switch kind {
	case C.GDL_V_FLOAT:
		x, err := strconv.ParseFloat(strings.ReplaceAll(lit, "_", ""), 64)
		if err != nil || !strings.ContainsAny(lit, "0123456789") || strings.ContainsAny(lit, "xXpP") {
			return fmt.Errorf("not a float literal")
		}
		if bits == 32 && !math.IsInf(x, 0) && math.IsInf(float64(float32(x)), 0) {
			return fmt.Errorf("out of range for float32")
		}
		v.f = C.double(x)
	case C.GDL_V_INT:
		x, err := strconv.ParseInt(lit, 0, bits)
		if err != nil {
			return fmt.Errorf("not an int%d literal", bits)
		}
		v.i = C.int64_t(x)
	case C.GDL_V_UINT:
		x, err := strconv.ParseUint(lit, 0, bits)
		if err != nil {
			return fmt.Errorf("not a uint%d literal", bits)
		}
		v.i = C.int64_t(x)
	case C.GDL_V_BOOL:
		switch lit {
		case "True":
			v.i = 1
		case "False":
		default:
			return fmt.Errorf("not True or False")
		}
	case C.GDL_V_STR:
		s, err := unquotePy(lit)
		if err != nil {
			return err
		}
		v.s, v.n = C.CString(s), C.int64_t(len(s)) // kept for the process
	default:
		return fmt.Errorf("an array or object parameter takes no default")
	}
	return nil
}

// unquotePy is a Python string literal's value: '...' or "..." with Go's
// (= Python's common) escapes.
func unquotePy(lit string) (string, error) {
	if len(lit) >= 2 && lit[0] == '\'' && lit[len(lit)-1] == '\'' {
		inner := lit[1 : len(lit)-1]
		inner = strings.ReplaceAll(strings.ReplaceAll(inner, `\'`, `'`), `"`, `\"`)
		lit = `"` + inner + `"`
	}
	if len(lit) < 2 || lit[0] != '"' {
		return "", fmt.Errorf("not a quoted string literal")
	}
	s, err := strconv.Unquote(lit)
	if err != nil {
		return "", fmt.Errorf("not a string literal")
	}
	return s, nil
}

// withSignature is doc with the "name(a, b=1.0)\n--\n\n" line CPython reads
// for __text_signature__ (and Stub for the names) made from f's Args, unless
// doc has one: the names and defaults are written once, in Args.
func withSignature(name, doc string, f *goFunc) string {
	if f.names == nil || strings.Contains(doc, "\n--\n\n") {
		return doc
	}
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	return name + "(" + signatureText(f) + ")\n--\n\n" + doc
}

// signatureText is f's parameters as a Python signature: defaults, "/" and
// "*", the receiver left out.
func signatureText(f *goFunc) string {
	var ps []string
	off := 0
	if f.self {
		off = 1
	}
	for i := off; i < len(f.names); i++ {
		if i == f.kwonly {
			ps = append(ps, "*")
		}
		p := f.names[i]
		if f.defaults[i] != "" {
			p += "=" + f.defaults[i]
		}
		ps = append(ps, p)
		if i+1 == f.posonly {
			ps = append(ps, "/")
		}
	}
	return strings.Join(ps, ", ")
}
