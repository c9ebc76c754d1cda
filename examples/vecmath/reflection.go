package main

// reflection.go: the functions vecmath's tests run through pyext's
// reflection path (a plain function given to Module.Def, no directive): the
// builder API under the directives, adding to the module pyextgen wrote.

import (
	"fmt"

	"github.com/godlpack/godlpack/pyext"
)

func init() {
	pyextModule.
		Def("clip", clip, "clip(x, lo=0.0, hi=1.0)\n--\n\nClamp x to [lo, hi] in place; returns how many changed.",
			pyext.Args("x", "lo=0.0", "hi=1.0"), pyext.Writes("x")).
		Def("echo", echo, "echo(x)\n--\n\nReturns x itself: refused, the result would alias an argument (for tests).").
		Def("widths", widths, "widths(i, i8, i16, i32, i64, u, u8, u16, u32, u64, f32, b)\n--\n\nIts arguments, "+
			"each range-checked against its Go type, as one string (for tests).").
		Def("live_objects", pyext.LiveObjects, "live_objects()\n--\n\nHow many Index and Counter objects are alive (for tests).")
}

func clip(x []float64, lo, hi float64) (int, error) {
	if lo > hi {
		return 0, &pyext.ValueError{Msg: "clip: lo > hi"}
	}
	n := 0
	for i, v := range x {
		if c := min(max(v, lo), hi); c != v {
			x[i], n = c, n+1
		}
	}
	return n, nil
}

func widths(i int, i8 int8, i16 int16, i32 int32, i64 int64, u uint, u8 uint8, u16 uint16, u32 uint32, u64 uint64,
	f32 float32, b bool) string {
	return fmt.Sprint(i, i8, i16, i32, i64, u, u8, u16, u32, u64, f32, b)
}

func echo(x []float64) []float64 { return x }
