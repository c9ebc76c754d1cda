// Command pyextgen writes a Python extension's module definition from the
// //pyext: directives in its Go source: each function, class, method and
// property is declared once, beside its Go declaration, and every one takes
// pyext's compiled call path. The build (godlpack build, develop, pip)
// runs it; by hand, or from go:generate:
//
//	go run github.com/godlpack/godlpack/pyext/pyextgen [dir]
//
// It writes dir/pyext_gen.go (the module's pyext definition and its
// PyInit_<module>), and removes a generated one when no directive is left.
// With -check it writes nothing and fails when that file is not up to date.
// docs/extensions.md describes the directives.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

func main() {
	check := flag.Bool("check", false, "write nothing; fail when "+generated+" is not up to date")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: pyextgen [-check] [dir]\n\nWrites dir/%s from the //pyext: directives of the Go package in dir.\n", generated)
		flag.PrintDefaults()
	}
	flag.Parse()
	dir := "."
	if flag.NArg() > 1 {
		flag.Usage()
		os.Exit(2)
	}
	if flag.NArg() == 1 {
		dir = flag.Arg(0)
	}
	if err := run(dir, *check); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// run generates dir's file (or, with check, compares it).
func run(dir string, check bool) error {
	p, err := load(dir)
	if err != nil {
		return err
	}
	path := filepath.Join(dir, generated)
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if len(old) > 0 && !bytes.HasPrefix(old, []byte(header)) {
		return fmt.Errorf("%s exists and was not written by pyextgen: rename it", path)
	}
	if len(p.funcs) == 0 && len(p.classes) == 0 && !p.declared { // a //pyext:module alone is a module too
		if old == nil {
			return nil
		}
		if check {
			return fmt.Errorf("%s is left from directives that are gone: run pyextgen", path)
		}
		return os.Remove(path)
	}
	src, err := emit(p)
	if err != nil {
		return err
	}
	if bytes.Equal(src, old) {
		return nil
	}
	if check {
		return fmt.Errorf("%s is not up to date: run pyextgen", path)
	}
	return replaceFile(path, src)
}

// replaceFile writes path whole or not at all (a temporary file renamed over
// it), so that a build running beside this one (another Python's, a test's)
// reads the old file or the new one, never a truncated one.
func replaceFile(path string, src []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".pyext_gen-*.tmp")
	if err != nil {
		return err
	}
	_, err = f.Write(src)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
