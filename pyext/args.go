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
	"sync"
	"unicode"
)

var argSpecs struct {
	sync.Mutex
	list [][]string
}

// Args names a function's (or method's, or constructor's) parameters, in
// order, so that Python may pass them by keyword, and gives defaults:
// "name" or "name=default", the default a Python literal of the parameter's
// type (0.5, -3, 0x10, True, 'text'):
//
//	Def("clip", clip, doc, pyext.Args("x", "lo=0.0", "hi=1.0"))
//
// makes clip(x), clip(x, 0.5), clip(x, hi=2.0) and clip(x=x, lo=0.0, hi=1.0)
// valid calls. Every parameter is named (a method's receiver is not: it is
// self); parameters with defaults come last; array and object parameters
// take none. A default that does not convert to the Go parameter's type, a
// wrong count or a repeated name makes Init fail with ImportError. Without
// Args, a function takes positional arguments only.
func Args(specs ...string) Option {
	argSpecs.Lock()
	defer argSpecs.Unlock()
	argSpecs.list = append(argSpecs.list, append([]string(nil), specs...))
	return argsOpt | Option(len(argSpecs.list)-1)<<argsShift
}

// argsOf is the specs given by Args among opts (nil: none).
func argsOf(opts []Option) []string {
	for _, o := range opts {
		if o&argsOpt != 0 {
			argSpecs.Lock()
			s := argSpecs.list[int(o>>argsShift&argsMask)]
			argSpecs.Unlock()
			return s
		}
	}
	return nil
}

// methodOpts is opts for a method's function, whose parameter 0 is the
// receiver: Writes indices move up by one, Args gets the receiver's name.
func methodOpts(opts []Option) []Option {
	out := make([]Option, 0, len(opts)+1)
	out = append(out, methodOpt)
	for _, o := range opts {
		switch {
		case o&argsOpt != 0:
			o = Args(append([]string{"self"}, argsOf([]Option{o})...)...)
		case o&writesOpt != 0:
			o = writesOpt | o&badParam | (o&0xffff)<<1
			if o&(1<<16) != 0 { // beyond the last parameter
				o |= badParam
			}
			o &^= 1 << 16
		case o&arrayOpt != 0:
			o = shiftArrayOption(o) // arrays.go
		}
		out = append(out, o)
	}
	return out
}

// setArgs fills c's names and defaults from the Args among opts (off: the
// receiver, not a keyword), and f's, for Stub.
func setArgs(f *goFunc, opts []Option, self bool) error {
	specs := argsOf(opts)
	if specs == nil {
		return nil
	}
	c := f.c
	n := int(c.nparams)
	if len(specs) != n {
		off := 0
		if self {
			off = 1
		}
		return fmt.Errorf("pyext.Args: %d names for %d parameters", len(specs)-off, n-off)
	}
	seen := map[string]bool{}
	defaulted := false
	f.names = make([]string, n)
	f.defaults = make([]string, n)
	for i, s := range specs {
		name, def, hasDef := strings.Cut(s, "=")
		name, def = strings.TrimSpace(name), strings.TrimSpace(def)
		if !isIdentifier(name) {
			return fmt.Errorf("pyext.Args: %q is not a Python identifier", name)
		}
		if seen[name] {
			return fmt.Errorf("pyext.Args: parameter %q named twice", name)
		}
		seen[name] = true
		f.names[i] = name
		c.names[i] = C.CString(name) // kept for the process
		if !hasDef {
			if defaulted {
				return fmt.Errorf("pyext.Args: parameter %q without a default follows one with a default", name)
			}
			continue
		}
		defaulted = true
		if err := setDefault(&c.defaults[i], byte(c.sig[i]), c.elem[i], def); err != nil {
			return fmt.Errorf("pyext.Args: default %s=%s: %w", name, def, err)
		}
		c.has_default[i] = 1
		f.defaults[i] = def
	}
	c.named = 1
	return nil
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

// setDefault converts a default's Python literal for a parameter of kind
// and Go type elem.
func setDefault(v *C.gdl_value, kind byte, elem C.gdl_elem, lit string) error {
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
