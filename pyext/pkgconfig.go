//go:build godlpack_pkgconfig

package pyext

// With -tags godlpack_pkgconfig, cgo asks pkg-config for CPython's flags
// instead of the CGO_CFLAGS that `make gotest` sets (headers only: the
// extension never links libpython; internal/testkit/pyembed links it).

// #cgo pkg-config: python3
import "C"
