//go:build godlpack_pkgconfig

package cuda

// #cgo pkg-config: python3
import "C"
