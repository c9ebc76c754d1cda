package pyext

import "reflect"

// StubType is the stub's annotation for a parameter (param) or result of Go
// type t: the one place that maps Go types to Python types in stubs. Array
// parameters are SupportsDLPack (the protocol the stub defines), returned
// arrays Tensor, objects of a Go class its name.
func StubType(t reflect.Type, param bool) string {
	if ci := classFor(t); ci != nil {
		return ci.name
	}
	if s, ok := seqStub(t); ok { // seqresult.go
		return s
	}
	switch {
	case arrayTypeOf(t) != nil && param: // RegisterArrayType's types
		return "SupportsDLPack"
	case arrayTypeOf(t) != nil:
		return "Tensor"
	case t == tensorType || t == borrowType || t.Kind() == reflect.Slice && param:
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
		if s, ok := arrayPyType(t); ok { // NDArray (arrays.go)
			return s
		}
	}
	return "int"
}
