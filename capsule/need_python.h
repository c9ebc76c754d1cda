/* Included before <Python.h> by the CPython-linked Go packages (capsule,
 * pyext, internal/testkit/pyembed): a plain `go build ./...` / `go test ./...` without
 * CPython's headers stops here with what to do instead of "file not found". */
#ifndef GODLPACK_NEED_PYTHON_H
#define GODLPACK_NEED_PYTHON_H
#if defined(__has_include)
#if !__has_include(<Python.h>)
#error "Python.h not found. An extension module (python -m godlpack new): build it with `pip install .`, or `export CGO_CFLAGS=\"$(python3-config --includes)\"` before go build/go test. In godlpack's own tree: `make gotest`, or also export CGO_LDFLAGS=\"$(python3-config --ldflags --embed)\" (tests embed CPython), or build with -tags godlpack_pkgconfig (pkg-config python3-embed)"
#endif
#endif
#endif
