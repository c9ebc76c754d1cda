package main

import (
	"os"
	"testing"
)

// gonummod.pyi is the module's type stub, generated from the Go signatures:
// `go test` fails when it is stale, `UPDATE_STUB=1 go test` rewrites it.
func TestStubIsUpToDate(t *testing.T) {
	want := module.Stub()
	if os.Getenv("UPDATE_STUB") != "" {
		if err := os.WriteFile("gonummod.pyi", []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile("gonummod.pyi")
	if err != nil || string(got) != want {
		t.Fatalf("gonummod.pyi is stale: run UPDATE_STUB=1 go test (err %v)", err)
	}
}
