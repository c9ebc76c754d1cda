//go:build godlpack_pkgconfig

package exchange

// #cgo pkg-config: python3
import "C"
