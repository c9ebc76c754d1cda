// Command valmod is a test extension for the Python values a Go library
// needs (pyext's bytesresult.go): tests/pyext/test_values.py collects
// tests/pyext/valmod/check_valmod.py, which imports it.
package main

import "C" // cgo: PyInit_valmod is exported to CPython

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/godlpack/godlpack/pyext"
)

// Blob is a named []byte: a result of it is bytes too.
type Blob []byte

func rev(b []byte) []byte {
	out := slices.Clone(b)
	slices.Reverse(out)
	return out
}

func fill(n int, c int) []byte {
	out := make([]byte, n)
	for i := range out {
		out[i] = byte(c)
	}
	return out
}

func blob(s string) Blob { return Blob(s) }

func maybe(n int) ([]byte, error) {
	if n < 0 {
		return nil, errors.New("maybe: n < 0")
	}
	return make([]byte, n), nil
}

func split(b []byte) ([]byte, int) { return slices.Clone(b[:len(b)/2]), len(b) }

func badText() string { return "ok\xff" } // not UTF-8: a str result refuses it

func meanStd(xs []float64) (float64, float64) {
	var s, ss float64
	for _, x := range xs {
		s += x
		ss += x * x
	}
	n := float64(len(xs))
	m := s / n
	return m, math.Sqrt(ss/n - m*m)
}

func parse(s string) (string, int, error) {
	k, v, ok := strings.Cut(s, "=")
	if !ok {
		return "", 0, &pyext.TypeError{Msg: "parse: no '=' in " + strconv.Quote(s)}
	}
	n, err := strconv.Atoi(v)
	return k, n, err
}

// badSecond's second result cannot be made (not UTF-8): the first, made
// already, must be freed.
func badSecond(n int) ([]byte, string) { return make([]byte, n), "\xff" }

// bytesThenAlias's second result aliases its argument, which Go refuses
// after making the first: C must free that bytes object.
func bytesThenAlias(xs []float64) ([]byte, []float64) { return make([]byte, 1024), xs }

func none() []byte { return nil }

func echo(b []byte) []byte { return b } // aliases its argument: copied into bytes, so safe

var module = pyext.NewModule("valmod", "Python values of Go types, under test.").
	Def("rev", pyext.Func1(rev), "rev(b)\n--\n\nb's bytes reversed (typed path).", pyext.ReadOnlyArgs).
	Def("rev_refl", rev, "rev_refl(b)\n--\n\nrev through reflection.", pyext.ReadOnlyArgs).
	Def("fill", pyext.Func2(fill), "fill(n, c)\n--\n\nn bytes of value c.").
	Def("fill_nogil", pyext.Func2(fill), "fill_nogil(n, c)\n--\n\nfill without the GIL.", pyext.ReleaseGIL).
	Def("fill_refl_nogil", fill, "fill_refl_nogil(n, c)\n--\n\nfill through reflection, without the GIL.", pyext.ReleaseGIL).
	Def("blob", pyext.Func1(blob), "blob(s)\n--\n\ns's UTF-8 as a named []byte.").
	Def("maybe", pyext.FuncE1(maybe), "maybe(n)\n--\n\nn zero bytes, or an error for n < 0.").
	Def("maybe_refl", maybe, "maybe_refl(n)\n--\n\nmaybe through reflection.").
	Def("split", split, "split(b)\n--\n\nb's first half and its length.", pyext.ReadOnlyArgs).
	Def("bad_text", pyext.Func0(badText), "bad_text()\n--\n\nA string that is not UTF-8.").
	Def("bad_text_refl", badText, "bad_text_refl()\n--\n\nbad_text through reflection.").
	Def("mean_std", pyext.Func1R2(meanStd), "mean_std(xs)\n--\n\nThe mean and standard deviation (a typed tuple).", pyext.ReadOnlyArgs).
	Def("split_typed", pyext.Func1R2(split), "split_typed(b)\n--\n\nsplit, typed.", pyext.ReadOnlyArgs).
	Def("parse", pyext.FuncE1R3(func(s string) (string, int, bool, error) { k, n, err := parse(s); return k, n, n > 0, err }),
		"parse(s)\n--\n\n'k=n' as (k, n, n > 0), or an error.").
	Def("bad_second", pyext.Func1R2(badSecond), "bad_second(n)\n--\n\nn bytes, then a string that is not UTF-8.").
	Def("bytes_then_alias", pyext.Func1R2(bytesThenAlias), "bytes_then_alias(xs)\n--\n\n1 KiB, then xs itself (refused).", pyext.ReadOnlyArgs).
	Def("none", pyext.Func0(none), "none()\n--\n\nA nil []byte.").
	Def("echo", pyext.Func1(echo), "echo(b)\n--\n\nb itself, returned.", pyext.ReadOnlyArgs)

//export PyInit_valmod
func PyInit_valmod() unsafe.Pointer { return module.Init() }

func main() {}
