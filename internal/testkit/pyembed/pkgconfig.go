//go:build godlpack_pkgconfig

package pyembed

// With -tags godlpack_pkgconfig, cgo asks pkg-config for CPython's flags
// instead of the CGO_CFLAGS that `make gotest` sets.

// #cgo pkg-config: python3-embed
import "C"
