// Command convmod is a test extension for the Python values of Go types
// beyond scalars and arrays (pyext's values.go: complex, *big.Int,
// time.Time, time.Duration, pyext.Path, pyext.ByteArray and *T as T or
// None), each on the typed path and through reflection:
// tests/pyext/convmod/check_convmod.py imports it.
package main

import "C" // cgo: PyInit_convmod is exported to CPython

import (
	"math/big"
	"os"
	"time"
	"unsafe"

	"github.com/godlpack/godlpack/pyext"
)

func cmul(a, b complex128) complex128 { return a * b }
func c64(x complex64) complex64       { return x }

func bigmul(a, b *big.Int) *big.Int { return new(big.Int).Mul(a, b) }
func bignil() *big.Int              { return nil }

// twice is nil for nil, else twice x: *float64 as float | None.
func twice(x *float64) *float64 {
	if x == nil {
		return nil
	}
	y := 2 * *x
	return &y
}

func upper(s *string) *string {
	if s == nil {
		return nil
	}
	u := *s + "!"
	return &u
}

func small(x *int8) int {
	if x == nil {
		return -1000
	}
	return int(*x)
}

func longer(d *time.Duration) *time.Duration {
	if d == nil {
		return nil
	}
	e := *d + time.Second
	return &e
}

func later(t time.Time, d time.Duration) time.Time { return t.Add(d) }
func between(a, b time.Time) time.Duration         { return b.Sub(a) }
func unixNano(t time.Time) int64                   { return t.UnixNano() }
func fromUnixNano(ns int64) time.Time              { return time.Unix(0, ns).UTC() }
func inZone(t time.Time, off int) time.Time        { return t.In(time.FixedZone("Z", off)) }
func zoneOf(t time.Time) int                       { _, off := t.Zone(); return off }
func badYear() time.Time                           { return time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }
func nanos(d time.Duration) int64                  { return int64(d) }
func dur(ns int64) time.Duration                   { return time.Duration(ns) }

func pathBytes(p pyext.Path) []byte    { return []byte(p) }
func pathEcho(p pyext.Path) pyext.Path { return p }
func exists(p pyext.Path) bool         { _, err := os.Stat(string(p)); return err == nil }
func scratch(n int) pyext.ByteArray    { return make(pyext.ByteArray, n) }

var module = pyext.NewModule("convmod", "Python values of Go types beyond scalars and arrays, under test.").
	Def("cmul", pyext.Func2(cmul), "cmul(a, b)\n--\n\na * b (typed).").
	Def("cmul_refl", cmul, "cmul_refl(a, b)\n--\n\ncmul through reflection.").
	Def("c64", pyext.Func1(c64), "c64(x)\n--\n\nx as a complex64 (typed).").
	Def("c64_refl", c64, "c64_refl(x)\n--\n\nc64 through reflection.").
	Def("bigmul", pyext.Func2(bigmul), "bigmul(a, b)\n--\n\na * b of any size (typed).", pyext.Args("a", "b")).
	Def("bigmul_refl", bigmul, "bigmul_refl(a, b)\n--\n\nbigmul through reflection.").
	Def("bignil", pyext.Func0(bignil), "bignil()\n--\n\nA nil *big.Int (refused).").
	Def("twice", pyext.Func1(twice), "twice(x)\n--\n\n2x, None for None (typed).", pyext.Args("x")).
	Def("twice_refl", twice, "twice_refl(x)\n--\n\ntwice through reflection.").
	Def("upper", pyext.Func1(upper), "upper(s)\n--\n\ns + '!', None for None (typed).").
	Def("upper_refl", upper, "upper_refl(s)\n--\n\nupper through reflection.").
	Def("small", pyext.Func1(small), "small(x)\n--\n\nx (an int8), -1000 for None.").
	Def("longer", pyext.Func1(longer), "longer(d)\n--\n\nd + 1 s, None for None (typed).").
	Def("longer_refl", longer, "longer_refl(d)\n--\n\nlonger through reflection.").
	Def("later", pyext.Func2(later), "later(t, d)\n--\n\nt + d (typed).", pyext.Args("t", "d")).
	Def("later_refl", later, "later_refl(t, d)\n--\n\nlater through reflection.").
	Def("between", pyext.Func2(between), "between(a, b)\n--\n\nb - a.").
	Def("unix_nano", pyext.Func1(unixNano), "unix_nano(t)\n--\n\nt's Unix time in nanoseconds.").
	Def("from_unix_nano", pyext.Func1(fromUnixNano), "from_unix_nano(ns)\n--\n\nThe UTC time.Time of ns.").
	Def("from_unix_nano_nogil", pyext.Func1(fromUnixNano), "from_unix_nano_nogil(ns)\n--\n\nfrom_unix_nano without the GIL.", pyext.ReleaseGIL).
	Def("in_zone", pyext.Func2(inZone), "in_zone(t, off)\n--\n\nt at UTC offset off seconds.").
	Def("zone_of", pyext.Func1(zoneOf), "zone_of(t)\n--\n\nt's UTC offset in seconds as Go sees it.").
	Def("bad_year", pyext.Func0(badYear), "bad_year()\n--\n\nA time.Time in year 10000 (refused).").
	Def("nanos", pyext.Func1(nanos), "nanos(d)\n--\n\nd in nanoseconds (typed).").
	Def("nanos_refl", nanos, "nanos_refl(d)\n--\n\nnanos through reflection.").
	Def("dur", pyext.Func1(dur), "dur(ns)\n--\n\nns nanoseconds as a time.Duration.").
	Def("path_bytes", pyext.Func1(pathBytes), "path_bytes(p)\n--\n\np's bytes, as Go gets them (typed).", pyext.Args("p")).
	Def("path_bytes_refl", pathBytes, "path_bytes_refl(p)\n--\n\npath_bytes through reflection.").
	Def("path_echo", pyext.Func1(pathEcho), "path_echo(p)\n--\n\np, back as a str.").
	Def("exists", pyext.Func1(exists), "exists(p)\n--\n\nWhether os.Stat finds p.").
	Def("scratch", pyext.Func1(scratch), "scratch(n)\n--\n\nn zero bytes as a bytearray (typed).").
	Def("scratch_refl", scratch, "scratch_refl(n)\n--\n\nscratch through reflection.").
	Def("scratch_nogil", pyext.Func1(scratch), "scratch_nogil(n)\n--\n\nscratch without the GIL.", pyext.ReleaseGIL)

//export PyInit_convmod
func PyInit_convmod() unsafe.Pointer { return module.Init() }

func main() {}
