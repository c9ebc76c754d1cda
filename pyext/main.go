// Command pyext is the CPython extension module godlpack._godlpack, built with
// go build -buildmode=c-shared. The CPython glue is C (the *.c files here,
// compiled by cgo); the logic it calls is Go (bridge.go and the packages).
package main

/*
#cgo CFLAGS: -I${SRCDIR}/../include -I${SRCDIR}/../producer -I${SRCDIR}/../capsule -I${SRCDIR}/../consumer -O2 -Wall -Wno-unused-parameter
// The CPython API is resolved when the interpreter loads the module; this
// also lets a plain `go build ./...` link the package as an executable.
#cgo LDFLAGS: -Wl,--unresolved-symbols=ignore-all
*/
import "C"

import (
	_ "github.com/godlpack/godlpack/capsule" // capsule.c
)

func main() {}
