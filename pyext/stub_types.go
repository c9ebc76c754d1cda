package pyext

// #include "ext.h"
import "C"

import (
	"fmt"
	"reflect"
	"strings"
)

// StubType is the stub's annotation for a parameter (param) or result of Go
// type t: the one place that maps Go types to Python types in stubs. Array
// parameters are SupportsDLPack (the protocol the stub defines), typed
// slices and NDArrays also Buffer (bytes, bytearray, memoryview...: C takes
// buffers, ext_arrays.c), a returned []byte bytes, returned arrays Tensor, objects of a Go class its
// name.
func StubType(t reflect.Type, param bool) string {
	if s, ok := anyStub(t, param); ok { // any, []any, map[string]any, map[any]any (anyconv.go)
		return s
	}
	if s, ok := valueStub(t, param); ok { // complex, *big.Int, time, Path, ByteArray, *T (values.go)
		return s
	}
	if ci := classFor(t); ci != nil {
		return ci.name
	}
	if s, ok := seqStub(t); ok && !param { // iterators.go: a returned Go sequence is an iterator
		return s
	}
	if kind, _ := containerKind(t); kind == C.GDL_V_LIST && param { // containers.go
		return fmt.Sprintf("list[%[1]s] | tuple[%[1]s, ...]", StubType(t.Elem(), true))
	} else if kind == C.GDL_V_LIST {
		return "list[" + StubType(t.Elem(), false) + "]"
	} else if kind == C.GDL_V_DICT {
		return "dict[str, " + StubType(t.Elem(), param) + "]"
	}
	if t.Kind() == reflect.Func { // a Python callable: Go passes its parameters, gets its results
		return callableStub(t)
	}
	switch {
	case arrayTypeOf(t) != nil && param: // RegisterArrayType's types: N-d views, which take buffers too
		return bufferArg
	case arrayTypeOf(t) != nil:
		return "Tensor"
	case t.Kind() == reflect.Slice && param:
		return bufferArg
	case isBytes(t): // bytesresult.go
		return "bytes"
	case t == tensorType || t == borrowType:
		return "SupportsDLPack"
	case t.Kind() == reflect.Slice || t == sourceType:
		return "Tensor"
	}
	switch t.Kind() {
	case reflect.Float32, reflect.Float64:
		return "float"
	case reflect.Bool:
		return "bool"
	case reflect.String:
		return "str"
	case reflect.Struct:
		if s, ok := arrayPyType(t); ok { // NDArray (arrays.go), a parameter only
			return s
		}
	}
	return "int"
}

// bufferArg is the annotation of a parameter that takes DLPack objects and
// buffer-protocol objects (typing_extensions' Buffer: collections.abc's is
// 3.12+ only, and the stub is read for any version).
const bufferArg = "SupportsDLPack | Buffer"

// callableStub is Callable[[params], result] for a Go func type.
func callableStub(t reflect.Type) string {
	var in, out []string
	for i := 0; i < t.NumIn(); i++ {
		in = append(in, StubType(t.In(i), false))
	}
	for i := 0; i < t.NumOut(); i++ {
		if t.Out(i) != errorType {
			out = append(out, StubType(t.Out(i), true))
		}
	}
	r := "None"
	switch {
	case len(out) == 1:
		r = out[0]
	case len(out) > 1:
		r = "tuple[" + strings.Join(out, ", ") + "]"
	}
	return "Callable[[" + strings.Join(in, ", ") + "], " + r + "]"
}

// callsBack says whether a parameter of a function or method of m is a Go
// func, so that the stub imports Callable.
func (m *Module) callsBack() bool {
	for _, f := range m.allFuncs() {
		for i := 0; i < f.typ.NumIn(); i++ {
			if f.typ.In(i).Kind() == reflect.Func {
				return true
			}
		}
	}
	return false
}
