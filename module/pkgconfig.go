//go:build godlpack_pkgconfig

package main

// #cgo pkg-config: python3
import "C"
