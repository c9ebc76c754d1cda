package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gen writes src as main.go of a fresh package folder named dir and runs
// the generator there: the generated file, or the error.
func gen(t *testing.T, dir, src string) (string, error) {
	t.Helper()
	root := filepath.Join(t.TempDir(), dir)
	require.NoError(t, os.MkdirAll(root, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "main.go"), []byte(src), 0o644))
	if err := run(root, false); err != nil {
		return "", err
	}
	out, err := os.ReadFile(filepath.Join(root, generated))
	if err != nil {
		return "", err
	}
	require.NoError(t, run(root, true), "-check passes right after a run")
	return string(out), nil
}

const kitchen = `// Package doc: the module's docstring.
//
//pyext:module kit
package main

import (
	"iter"

	"github.com/godlpack/godlpack"
)

// Scale multiplies x by a.
//
//pyext:function (x, /, a=2.0, *, inplace=True) writes(x) nogil
func Scale(x []float64, a float64, inplace bool) {}

// MeanStd is two results and an error.
//
//pyext:function
func MeanStd(xs []float64) (float64, float64, error) { return 0, 0, nil }

//pyext:function check
//pyext:require(t, DTypeIs(godlpack.Float32), CContig)
func Validate(t godlpack.Tensor) error { return nil }

//pyext:function
func Write(p []byte) {}

//pyext:function parse_url (u)
func ParseURL(s string) (string, error) { return s, nil }

// Vec is a vector, not a godlpack.Tensor (no import for a docstring).
//
//pyext:class Vector weakref
type Vec struct{ xs []float64 }

//pyext:init (n=0)
func NewVec(n int) (*Vec, error) { return &Vec{}, nil }

//pyext:method
func (v *Vec) Dot(w []float64) float64 { return 0 }

//pyext:property
func (v *Vec) Size() int { return 0 }

//pyext:setter
func (v *Vec) SetSize(n int) error { return nil }

//pyext:method __len__
func (v *Vec) Len() int { return 0 }

//pyext:method __radd__
func (v *Vec) RAdd(x float64) *Vec { return v }

//pyext:method __neg__
func (v *Vec) Neg() *Vec { return v }

//pyext:method __iter__
func (v *Vec) Pairs() iter.Seq2[int, float64] { return nil }

//pyext:staticmethod Vec.zeros
func Zeros(n int) *Vec { return nil }

//pyext:method __enter__
func (v *Vec) Enter() *Vec { return v }

//pyext:method __exit__
func (v *Vec) Exit() {}

func main() {}
`

func TestEveryDeclarationBecomesATypedDefinition(t *testing.T) {
	out, err := gen(t, "kit", kitchen)
	require.NoError(t, err)
	for _, want := range []string{
		header,
		`Def("write", pyext.Proc1(Write), "", pyext.Args("p"))`, // a function called write, named so in Go
		`pyext.NewModule("kit", "Package doc: the module's docstring.")`,
		`Def("scale", pyext.Proc3(Scale), "Scale multiplies x by a.", pyext.Args("x", "/", "a=2.0", "*", "inplace=True"), pyext.Writes("x"), pyext.ReleaseGIL)`,
		`Def("mean_std", pyext.FuncE1R2(MeanStd), "MeanStd is two results and an error.", pyext.Args("xs"))`,
		`Def("check", pyext.Func1(Validate), "", pyext.Args("t"), pyext.Require("t", pyext.DTypeIs(godlpack.Float32), pyext.CContig))`,
		`Def("parse_url", pyext.FuncE1(ParseURL), "", pyext.Args("u"))`,
		`Class(pyextClassVec)`,
		`pyext.NewClass[Vec]("Vector", "Vector(n=0)\n--\n\nVec is a vector, not a godlpack.Tensor (no import for a docstring).")`,
		`WeakRef()`,
		`Init(pyext.FuncE1(NewVec), pyext.Args("n=0"))`,
		`Method("dot", pyext.Func2((*Vec).Dot), "", pyext.Args("w"))`,
		`Property("size", pyext.Func1((*Vec).Size), pyext.Func2((*Vec).SetSize), "")`,
		`Len(pyext.Func1((*Vec).Len))`,
		`ReflectedOperator("+", pyext.Func2((*Vec).RAdd))`,
		`Operator("-", pyext.Func1((*Vec).Neg))`,
		`Iter(pyext.Seq2((*Vec).Pairs))`,
		`StaticMethod("zeros", pyext.Func1(Zeros), "", pyext.Args("n"))`,
		`Context(pyext.Func1((*Vec).Enter), pyext.Proc1((*Vec).Exit))`,
		"//export PyInit_kit\nfunc PyInit_kit() unsafe.Pointer { return pyextModule.Init() }",
		`"github.com/godlpack/godlpack"`, // the option's package, imported
	} {
		assert.Contains(t, out, want)
	}
	assert.NotContains(t, out, "func main()", "the package has its own")
	assert.NotContains(t, out, `"iter"`, "no import the generated code does not use")
}

func TestASubmoduleOfAPackage(t *testing.T) {
	out, err := gen(t, "core", "//pyext:module pkg._core\npackage main\n\n//pyext:function\nfunc F() {}\n")
	require.NoError(t, err)
	assert.Contains(t, out, `pyext.NewModule("pkg._core", "")`)
	assert.Contains(t, out, "//export PyInit__core\nfunc PyInit__core()")
	_, err = gen(t, "core", "//pyext:module pkg..core\npackage main\n")
	assert.ErrorContains(t, err, "//pyext:module wants the module's Python name")
}

// A //pyext:module line alone makes a module with nothing in it yet (and
// its main), not a library without PyInit.
func TestAModuleLineAloneIsAModule(t *testing.T) {
	out, err := gen(t, "empty", "//pyext:module empty\npackage main\n")
	require.NoError(t, err)
	assert.Contains(t, out, `pyext.NewModule("empty", "")`)
	assert.Contains(t, out, "func PyInit_empty()")
	assert.Contains(t, out, "func main() {}")
}

func TestTheModuleNameDefaultsToTheFolderAndMainIsAdded(t *testing.T) {
	out, err := gen(t, "fold", "package main\n\n//pyext:function\nfunc Twice(n int) int { return 2 * n }\n")
	require.NoError(t, err)
	assert.Contains(t, out, `pyext.NewModule("fold", "")`)
	assert.Contains(t, out, `Def("twice", pyext.Func1(Twice), "", pyext.Args("n"))`)
	assert.Contains(t, out, "func main() {}")
}

func TestWrongDirectivesSayWhereAndWhat(t *testing.T) {
	for want, src := range map[string]string{
		`main.go:4:1: F: writes(y): no parameter "y" (its parameters are x)`:                                                      "//pyext:function writes(y)\nfunc F(x []float64) {}",
		`F: signature (a, b) names 2 parameters; the Go function has 1`:                                                           "//pyext:function (a, b)\nfunc F(x int) {}",
		`F: a parameter without a name`:                                                                                           "//pyext:function\nfunc F(int) {}",
		`F: 17 parameters (the receiver counted): the compiled path takes at most 16`:                                             "//pyext:function\nfunc F(a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q int) {}",
		`F: 9 parameters (the receiver counted) and 2 results: the compiled path takes at most 8 parameters with several results`: "//pyext:function\nfunc F(a, b, c, d, e, f, g, h, i int) (int, int) { return 0, 0 }",
		`F: 4 results: the compiled path returns at most 3`:                                                                       "//pyext:function\nfunc F() (int, int, int, int) { return 0, 0, 0, 0 }",
		`//pyext:fn: unknown directive`:                                                                                           "//pyext:fn\nfunc F() {}",
		`F: unknown option "fast"`:                                                                                                "//pyext:function f fast\nfunc F() {}",
		`F: //pyext:method is for a method`:                                                                                       "//pyext:method\nfunc F() {}",
		`F: //pyext:init: want a function returning *T or (*T, error)`:                                                            "//pyext:init\nfunc F() int { return 0 }",
		`M: T is not declared //pyext:class`:                                                                                      "type T struct{}\n\n//pyext:method\nfunc (t *T) M() {}",
		`G: a generic function has no single Python function`:                                                                     "//pyext:function\nfunc G[E any](x E) {}",
		`__repr__ is not a special method //pyext:method makes`:                                                                   "//pyext:class\ntype T struct{}\n\n//pyext:method __repr__\nfunc (t *T) R() string { return \"\" }",
		`SetSize: //pyext:setter size without a //pyext:property getter`:                                                          "//pyext:class\ntype T struct{}\n\n//pyext:setter\nfunc (t *T) SetSize(n int) {}",
		`__enter__ and __exit__ come together`:                                                                                    "//pyext:class\ntype T struct{}\n\n//pyext:method __enter__\nfunc (t *T) E() *T { return t }",
		`a Python extension is a Go package main`:                                                                                 "",
		`"write", taken as the Python name, is close to the option writes`:                                                        "//pyext:function write(x)\nfunc Fill(x []byte) {}",
		`"nogill", taken as the Python name, is close to the option nogil`:                                                        "//pyext:function nogill\nfunc F() {}",
		`"class" is a Python keyword`:                                                                                             "//pyext:function class\nfunc F() {}",
		`Tensor is a name every pyext module has (its class)`:                                                                     "//pyext:function Tensor\nfunc F() {}",
		`G: the module's g is declared already, at`:                                                                               "//pyext:function g\nfunc F() {}\n\n//pyext:function\nfunc G() {}",
		`B: T.f is declared already, at`:                                                                                          "//pyext:class\ntype T struct{}\n\n//pyext:method f\nfunc (t *T) A() {}\n\n//pyext:method f\nfunc (t *T) B() {}",
		`//pyext:function on a var: directives declare functions`:                                                                 "//pyext:function\nvar V = 3",
		`//pyext:function belongs in the doc comment of a function`:                                                               "//pyext:function\n\nfunc F() {}",
		`require(x, Shap(3)): unknown requirement Shap`:                                                                           "//pyext:function require(x, Shap(3))\nfunc F(x []float64) {}",
	} {
		src := "package main\n\n" + src + "\n"
		if want == "a Python extension is a Go package main" {
			src = "package lib\n\n//pyext:function\nfunc F() {}\n"
		}
		_, err := gen(t, "bad", src)
		if assert.Error(t, err, want) {
			assert.Contains(t, err.Error(), want)
		}
	}
}

func TestSnakeCaseNames(t *testing.T) {
	for goName, py := range map[string]string{"Scale": "scale", "MeanStd": "mean_std", "Sum64": "sum64",
		"ParseURL": "parse_url", "URLPath": "url_path", "already_snake": "already_snake", "X": "x"} {
		assert.Equal(t, py, snake(goName), goName)
	}
	assert.Equal(t, "count", propertyName("SetCount"))
	assert.Equal(t, "settle", propertyName("Settle"))
}

// No directive left: the generated file goes; a file of that name the
// generator did not write is never touched.
func TestAGeneratedFileIsRemovedAndAForeignOneKept(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, generated)
	require.NoError(t, os.WriteFile(filepath.Join(root, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644))
	require.NoError(t, os.WriteFile(path, []byte(header+"\npackage main\n"), 0o644))
	require.NoError(t, run(root, false))
	assert.NoFileExists(t, path)
	require.NoError(t, os.WriteFile(path, []byte("package main\n"), 0o644))
	err := run(root, false)
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "not written by pyextgen"))
}

func TestAReaderBesideTheWriterSeesAWholeFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), generated)
	a, b := bytes.Repeat([]byte("a"), 1<<16), bytes.Repeat([]byte("b"), 1<<17)
	require.NoError(t, replaceFile(path, a))
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 300; i++ {
			assert.NoError(t, replaceFile(path, [][]byte{a, b}[i%2]))
		}
	}()
	for i := 0; i < 300; i++ {
		got, err := os.ReadFile(path)
		require.NoError(t, err)
		require.True(t, bytes.Equal(got, a) || bytes.Equal(got, b), "read %d bytes: a torn write", len(got))
	}
	wg.Wait()
	left, err := filepath.Glob(filepath.Join(filepath.Dir(path), ".pyext_gen-*"))
	require.NoError(t, err)
	assert.Empty(t, left, "no temporary file is left")
}

// Go's any, []any and map[string]any (pyext's anyconv.go) take the compiled
// path as every other type does: spelled any or interface{}.
func TestAnyParametersAndResultsTakeTheCompiledPath(t *testing.T) {
	out, err := gen(t, "codec", "package main\n\n//pyext:function\nfunc Pack(obj any, opts map[string]any) ([]byte, error) { return nil, nil }\n\n"+
		"//pyext:function\nfunc Unpack(b []byte, keys []interface{}) (map[any]any, interface{}, error) { return nil, nil, nil }\n")
	require.NoError(t, err)
	assert.Contains(t, out, `Def("pack", pyext.FuncE2(Pack), "", pyext.Args("obj", "opts"))`)
	assert.Contains(t, out, `Def("unpack", pyext.FuncE2R2(Unpack), "", pyext.Args("b", "keys"))`)
}
