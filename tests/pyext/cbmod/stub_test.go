package main

import (
	"os"
	"testing"
)

// cbmod.pyi is the module's type stub, generated from the Go signatures:
// `go test` fails when it is stale, `UPDATE_STUB=1 go test` rewrites it.
func TestStubIsUpToDate(t *testing.T) {
	want := module.Stub()
	if os.Getenv("UPDATE_STUB") != "" {
		if err := os.WriteFile("cbmod.pyi", []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile("cbmod.pyi")
	if err != nil || string(got) != want {
		t.Fatalf("cbmod.pyi is stale: run UPDATE_STUB=1 go test (err %v)", err)
	}
}
