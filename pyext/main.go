// Command pyext is the CPython extension module godlpack._godlpack, built with
// go build -buildmode=c-shared. The CPython glue is C (the *.c files here,
// compiled by cgo); the logic it calls is Go (bridge.go and the packages).
package main

/*
#cgo CFLAGS: -I${SRCDIR}/../include -I${SRCDIR}/../producer -I${SRCDIR}/../capsule -O2 -Wall -Wno-unused-parameter
*/
import "C"

import (
	_ "github.com/godlpack/godlpack/capsule" // capsule.c
)

func main() {}
