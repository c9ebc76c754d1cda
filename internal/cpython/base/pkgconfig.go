//go:build godlpack_pkgconfig

package base

// #cgo pkg-config: python3
import "C"
