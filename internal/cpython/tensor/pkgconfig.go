//go:build godlpack_pkgconfig

package tensor

// #cgo pkg-config: python3
import "C"
