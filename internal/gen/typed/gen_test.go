package main

import (
	"os"
	"path/filepath"
	"testing"
)

// The checked-in pyext/typed_gen.go must be what the generator writes: a
// wrapper edited by hand, or the generator edited without regenerating,
// fails (run `go generate ./pyext`).
func TestTypedGenIsUpToDate(t *testing.T) {
	path, err := filepath.Abs("../../../pyext/typed_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s is missing: run `go generate ./pyext`: %v", path, err)
	}
	if want := Source(); string(got) != string(want) {
		t.Fatalf("%s is stale: run `go generate ./pyext`", path)
	}
}
