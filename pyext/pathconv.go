package pyext

// pathconv.go: Path, a file system path: a parameter takes str, bytes and
// os.PathLike (os.fspath, then os.fsencode's bytes: a name that is not
// UTF-8 comes through as it is); a result is str (os.fsdecode).

// #include "ext.h"
import "C"

import "reflect"

// Path is a string parameter or result that Python passes as a file system
// path: str, bytes or any os.PathLike (pathlib.Path) in, str out, each
// through the file system encoding, as os.fsencode and os.fsdecode do.
type Path string

func pathParam(v *C.gdl_value, _ string, _ int) (reflect.Value, error) {
	return reflect.ValueOf(Path(C.GoStringN(v.s, C.int(v.n)))), nil
}

func putPath(rv reflect.Value, v *C.gdl_value, _ []span) error {
	s := rv.String()
	v.s, v.n = C.CString(s), C.int64_t(len(s)) // freed by C
	return nil
}
