// Command valmod is a test extension for the Python values a Go library
// needs (pyext's bytesresult.go): tests/pyext/test_values.py collects
// tests/pyext/valmod/check_valmod.py, which imports it.
package main

import "C" // cgo: PyInit_valmod is exported to CPython

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
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

// blobLen takes a named []byte (bytes' fast path converts it too).
func blobLen(b Blob) int { return len(b) }

// upcase writes its argument: bytes (read-only) is refused, a bytearray taken.
func upcase(b []byte) {
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 32
		}
	}
}

// sumDuring sums b after calling f, which may try to change b meanwhile.
func sumDuring(b []byte, f func()) int {
	f()
	s := 0
	for _, c := range b {
		s += int(c)
	}
	return s
}

// halves returns two new slices: two bytes results of one call.
func halves(b []byte) ([]byte, []byte) {
	return slices.Clone(b[:len(b)/2]), slices.Clone(b[len(b)/2:])
}

// gcStorm runs the garbage collector and allocates 1 KiB blocks of 0xEE in
// a loop until stopped: a result whose memory Go let go too early would
// show 0xEE.
func gcStorm(on bool) {
	stormMu.Lock()
	defer stormMu.Unlock()
	if on == (storm != nil) {
		return
	}
	if !on {
		close(storm)
		storm = nil
		return
	}
	storm = make(chan struct{})
	go func(stop chan struct{}) {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			b := make([]byte, 1024)
			for j := range b {
				b[j] = 0xEE
			}
			sink = b
			if i%64 == 0 {
				runtime.GC()
			}
		}
	}(storm)
}

var (
	stormMu sync.Mutex
	storm   chan struct{}
	sink    []byte
)

// Python value trees (pyext's anyconv.go): what a codec takes and gives.

func echoAny(obj any) any { return obj }

func echoList(xs []any) []any { return xs }

func echoDict(m map[string]any) map[string]any { return m }

// goTypes is obj's Go types, every level: "map[string]any{a:int64}".
func goTypes(obj any) string {
	switch x := obj.(type) {
	case nil:
		return "nil"
	case []any:
		parts := make([]string, len(x))
		for i, y := range x {
			parts[i] = goTypes(y)
		}
		return "[]any{" + strings.Join(parts, ",") + "}"
	case map[string]any:
		var parts []string
		for k, y := range x {
			parts = append(parts, k+":"+goTypes(y))
		}
		sort.Strings(parts)
		return "map[string]any{" + strings.Join(parts, ",") + "}"
	case map[any]any:
		var parts []string
		for k, y := range x {
			parts = append(parts, goTypes(k)+"="+fmt.Sprint(k)+":"+goTypes(y))
		}
		sort.Strings(parts)
		return "map[any]any{" + strings.Join(parts, ",") + "}"
	case *big.Int:
		return "*big.Int(" + x.String() + ")"
	case []byte:
		return fmt.Sprintf("[]byte(%q)", x)
	}
	return fmt.Sprintf("%T", obj)
}

type name string

type raw []byte

// goValue is one of the Go values an any result takes, or refuses.
func goValue(which string) (any, error) {
	self := []any{nil}
	self[0] = self
	huge, _ := new(big.Int).SetString("-123456789012345678901234567890", 10)
	values := map[string]any{
		"nil":      nil,
		"ints":     []any{int8(-8), int16(-16), int32(-32), int64(math.MinInt64), -1, uint8(255), uint16(65535), uint32(1 << 31), uint64(math.MaxUint64), uint(7), uintptr(9)},
		"floats":   []any{float32(1.5), math.Inf(-1), 0.1},
		"complex":  []any{complex64(1 + 2i), complex(3, -4)},
		"strings":  []any{"héllo", name("named"), ""},
		"bytes":    []any{[]byte("a\x00b"), raw("raw"), []byte(nil)},
		"big":      []any{huge, big.NewInt(5), (*big.Int)(nil)},
		"slices":   []any{[]int{1, 2}, [2]string{"x", "y"}, []float32{0.5}, [][]uint8{{1}}},
		"maps":     map[string]any{"ints": map[int]string{2: "b", 1: "a"}, "mixed": map[any]any{nil: 0, true: 1, 2.5: 2, "s": 3, int8(-1): 4}},
		"nested":   map[string]any{"a": []any{1, map[string]any{"b": []any{nil, true, "c"}}}},
		"struct":   struct{ X int }{1},
		"func":     func() {},
		"chan":     make(chan int),
		"deep":     map[string]any{"a": []any{0, 1, map[string]any{"x": struct{}{}}}},
		"badutf8":  []any{"ok", map[string]any{"k": "\xff"}},
		"badkey":   map[string]any{"m": map[[2]int]int{{1, 2}: 3}},
		"dupkeys":  map[any]any{1: "int", 1.0: "float"},
		"dupbool":  map[any]any{true: "bool", int64(1): "int"},
		"self":     self,
		"pointer":  []any{new(int)},
		"badvalue": map[int]any{3: []any{1, 2, func() {}}},
	}
	v, ok := values[which]
	if !ok {
		return nil, &pyext.KeyError{Msg: which}
	}
	return v, nil
}

// listOf is a []any result nested depth lists deep.
func listOf(depth int) []any {
	l := []any{}
	for range depth - 1 {
		l = []any{l}
	}
	return l
}

// anyKeys is a map[any]any result.
func anyKeys() map[any]any { return map[any]any{"s": 1, int64(2): "two", nil: []any{}, false: 0.5} }

// nanKeys is a map whose NaN keys no lookup finds: each keeps its value.
func nanKeys() any { return map[float64]int{math.NaN(): 1, math.NaN(): 2, 0.5: 3} }

// pairAny is an any result in a tuple.
func pairAny(obj any) (any, int) { return obj, len(goTypes(obj)) }

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
	Def("echo", pyext.Func1(echo), "echo(b)\n--\n\nb itself, returned.", pyext.ReadOnlyArgs).
	Def("length", pyext.Func1(func(b []byte) int { return len(b) }), "length(b)\n--\n\nlen(b) (typed).", pyext.Args("b")).
	Def("length_refl", func(b []byte) int { return len(b) }, "length_refl(b)\n--\n\nlen(b) through reflection.", pyext.Args("b")).
	Def("length_nogil", pyext.Func1(func(b []byte) int { return len(b) }), "length_nogil(b)\n--\n\nlen(b) without the GIL.", pyext.ReleaseGIL).
	Def("blob_len", pyext.Func1(blobLen), "blob_len(b)\n--\n\nlen(b) of a named []byte.").
	Def("upcase", pyext.Proc1(upcase), "upcase(b)\n--\n\nb in upper case, in place.", pyext.Args("b"), pyext.Writes("b")).
	Def("upcase_refl", upcase, "upcase_refl(b)\n--\n\nupcase through reflection.", pyext.Args("b"), pyext.Writes("b")).
	Def("sum_during", pyext.Func2(sumDuring), "sum_during(b, f)\n--\n\nThe sum of b's bytes, after f().").
	Def("halves", pyext.Func1R2(halves), "halves(b)\n--\n\nb's two halves, copied.").
	Def("gc_storm", pyext.Proc1(gcStorm), "gc_storm(on)\n--\n\nA goroutine running Go's GC and allocating, or none.").
	Def("echo_any", pyext.Func1(echoAny), "obj itself, through Go's any (typed).", pyext.Args("obj")).
	Def("echo_any_refl", echoAny, "echo_any(obj)\n--\n\nobj through any, by reflection.").
	Def("echo_any_nogil", pyext.Func1(echoAny), "echo_any without the GIL.", pyext.Args("obj"), pyext.ReleaseGIL).
	Def("echo_any_default", pyext.Func1(echoAny), "echo_any with obj=None by default.", pyext.Args("obj=None")).
	Def("echo_list", pyext.Func1(echoList), "xs through []any (typed).", pyext.Args("xs")).
	Def("echo_list_refl", echoList, "echo_list_refl(xs)\n--\n\nxs through []any, by reflection.").
	Def("echo_dict", pyext.Func1(echoDict), "m through map[string]any (typed).", pyext.Args("m")).
	Def("echo_dict_refl", echoDict, "echo_dict_refl(m)\n--\n\nm through map[string]any, by reflection.").
	Def("go_types", pyext.Func1(goTypes), "obj's Go types.", pyext.Args("obj")).
	Def("go_types_refl", goTypes, "go_types_refl(obj)\n--\n\nobj's Go types, by reflection.").
	Def("go_value", pyext.FuncE1(goValue), "A Go value for an any result, by name.", pyext.Args("which")).
	Def("go_value_refl", goValue, "go_value_refl(which)\n--\n\ngo_value by reflection.").
	Def("list_of", pyext.Func1(listOf), "A []any depth lists deep.", pyext.Args("depth")).
	Def("any_keys", pyext.Func0(anyKeys), "A map[any]any result.").
	Def("nan_keys", nanKeys, "nan_keys()\n--\n\nA map with two NaN keys, through reflection.").
	Def("pair_any", pyext.Func1R2(pairAny), "obj and a number: an any result in a tuple.", pyext.Args("obj")).
	Def("pair_any_refl", pairAny, "pair_any_refl(obj)\n--\n\npair_any by reflection.")

//export PyInit_valmod
func PyInit_valmod() unsafe.Pointer { return module.Init() }

func main() {}
