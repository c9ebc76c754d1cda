package pyext

// options.go: the options of Def and Method (Option, Writes, ReleaseGIL), and
// how an option's parameter names become indices.

/*
#include "ext.h"
*/
import "C"

import (
	"fmt"
	"strings"
)

// Option changes how a function is called: ReleaseGIL, Args, Writes,
// Require, Convert, ConvertWriteBack. Options that concern parameters name
// them as Python does (Args, or the docstring's signature line).
type Option struct{ o *option }

type option struct {
	kind   optKind
	refs   []any     // Writes, Require, Convert, ConvertWriteBack: the parameters, by name (or index)
	params []int     // the same by index, the receiver counted (resolved, or internal)
	specs  []string  // Args
	array  arraySpec // Require, Convert, ConvertWriteBack (arrays.go)
}

type optKind uint8

const (
	optReleaseGIL optKind = iota + 1
	optReadOnly
	optWrites
	optArgs
	optMethod
	optArray
)

var (
	// ReleaseGIL runs the Go function without the GIL: other Python threads
	// run meanwhile. Arguments are converted before and results after.
	ReleaseGIL = Option{&option{kind: optReleaseGIL}}
	// ReadOnlyArgs says that the function writes none of its array
	// arguments, which is what a function without Writes does: it is kept
	// for definitions written before array parameters were read-only by
	// default, and changes nothing.
	ReadOnlyArgs = Option{&option{kind: optReadOnly}}
	// methodOpt marks a method's function: parameter 0 is the receiver.
	methodOpt = Option{&option{kind: optMethod}}
)

func (o Option) kind() optKind {
	if o.o == nil {
		return 0
	}
	return o.o.kind
}

// Writes declares which array parameters the function writes, by name
// (or, the form of godlpack 0.1, kept so that its projects build: by index
// from 0, after a method's receiver):
// saxpy(a, x, y) writing y is Def("saxpy", saxpy, doc, pyext.Args("a",
// "x", "y"), pyext.Writes("y")). Those must be writable (a read-only array
// or buffer, such as bytes, is refused with BufferError), and never an
// array its producer treats as immutable (a JAX array, whose legacy DLPack
// export carries no read-only flag). Every other array parameter is only
// read, and takes read-only arrays, bytes and JAX arrays. A name that is not
// an array parameter makes Init fail with ImportError.
func Writes(params ...any) Option {
	return Option{&option{kind: optWrites, refs: append([]any{}, params...)}}
}

// byIndex is o with its parameters given by index (the receiver counted):
// for options pyext makes itself.
func byIndex(kind optKind, params []int, s arraySpec) Option {
	return Option{&option{kind: kind, params: params, array: s}}
}

// resolve gives each option that names parameters their indices in names
// (the function's parameters, the receiver counted; nil: unnamed). The
// options themselves stay as given: a definition may be built again.
func resolve(opts []Option, names []string, self bool) ([]Option, error) {
	out := make([]Option, 0, len(opts))
	off := 0
	if self {
		off = 1
	}
	for _, o := range opts {
		if o.o == nil {
			return nil, fmt.Errorf("pyext: a zero Option (use the constructors of package pyext)")
		}
		if o.o.refs == nil {
			out = append(out, o)
			continue
		}
		r := *o.o
		r.params = make([]int, len(r.refs))
		for k, ref := range r.refs {
			i := -1
			switch v := ref.(type) {
			case string:
				for j, have := range names {
					if have == v && j >= off {
						i = j
					}
				}
				if i < 0 {
					return nil, fmt.Errorf("%s: no parameter %q (%s)", o.where(ref), v, describeNames(names, self))
				}
			case int:
				if v < 0 || v+off >= C.GDL_MAX_PARAMS {
					return nil, fmt.Errorf("%s: no parameter %d", o.where(ref), v)
				}
				i = v + off
			default:
				return nil, fmt.Errorf("%s: a parameter is given by its name, a string (got %T)", o.where(ref), ref)
			}
			r.params[k] = i
		}
		out = append(out, Option{&r})
	}
	return out, nil
}

// where names the option for an error about parameter ref.
func (o Option) where(ref any) string {
	name := "Writes"
	if o.kind() == optArray {
		name = o.o.array.kind.String()
	}
	if s, ok := ref.(string); ok {
		return fmt.Sprintf("pyext.%s(%q)", name, s)
	}
	return fmt.Sprintf("pyext.%s(%v)", name, ref)
}

func describeNames(names []string, self bool) string {
	if self && len(names) > 0 {
		names = names[1:]
	}
	switch {
	case names == nil:
		return "its parameters have no names: give them with pyext.Args or the docstring's signature line"
	case len(names) == 0:
		return "it has no parameters"
	}
	return "its parameters are " + strings.Join(names, ", ")
}

// writesMask is the C descriptor's writes bits for opts (resolved) and the
// signature: the parameters Writes names, none without it.
func writesMask(opts []Option, sig []byte) (uint32, error) {
	mask := uint32(0)
	for _, o := range opts {
		if o.kind() != optWrites {
			continue
		}
		for k, i := range o.o.params {
			if i < 0 || i >= len(sig) || sig[i] != C.GDL_V_ARRAY {
				return 0, fmt.Errorf("%s: parameter %s is not an array", o.where(o.o.refs[k]), refText(o.o.refs[k]))
			}
			mask |= 1 << i
		}
	}
	return mask, nil
}

// refText is a parameter reference as an error names it: "y", or 2.
func refText(ref any) string {
	if s, ok := ref.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprint(ref)
}
