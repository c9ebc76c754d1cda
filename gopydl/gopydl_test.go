package gopydl

import (
	"errors"
	"testing"
	"unsafe"

	"github.com/godlpack/godlpack"
	"github.com/godlpack/godlpack/producer"
)

// settled fails the test unless every export made since base was deleted.
func settled(t *testing.T, base int64) {
	t.Helper()
	if n := LiveExports(); n != base {
		t.Fatalf("live exports %d, want %d: a deleter ran too few or too many times", n, base)
	}
}

func TestExportViewRoundTrip(t *testing.T) {
	base := LiveExports()
	data := []float32{1, 2, 3, 4, 5, 6}
	ptr, err := ExportFloat32(data, []int64{2, 3})
	if err != nil {
		t.Fatal(err)
	}
	a, err := MutableFloat32(ptr)
	if err != nil {
		t.Fatal(err)
	}
	x, err := a.Float32s()
	if err != nil {
		t.Fatal(err)
	}
	if &x[0] != &data[0] || len(x) != 6 {
		t.Fatalf("view does not alias the exported slice")
	}
	if got := a.Shape(); len(got) != 2 || got[0] != 2 || got[1] != 3 || a.Len() != 6 || a.DType() != "float32" {
		t.Fatalf("shape %v len %d dtype %s", got, a.Len(), a.DType())
	}
	x[5] = 60
	if data[5] != 60 {
		t.Fatal("write through the view not seen")
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if a.Close() == nil {
		t.Fatal("second Close succeeded")
	}
	settled(t, base)
}

func TestNilShapeIsOneDimensional(t *testing.T) {
	ptr, err := ExportInt64([]int64{7, 8, 9}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := ViewInt64(ptr)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if s := a.Shape(); len(s) != 1 || s[0] != 3 {
		t.Fatalf("shape %v", s)
	}
}

func TestRefusalsCallTheDeleterOnce(t *testing.T) {
	base := LiveExports()
	ptr, _ := ExportInt32([]int32{1, 2}, nil)
	_, err := ViewFloat32(ptr)
	var be *BufferError
	if !errors.As(err, &be) || !errors.Is(err, godlpack.ErrDType) {
		t.Fatalf("want a BufferError wrapping ErrDType, got %v", err)
	}
	if msg := err.Error(); msg[:13] != "BufferError: " {
		t.Fatalf("message %q lacks the BufferError prefix", msg)
	}
	ro, _ := export([]float32{1}, nil, true)
	if _, err := MutableFloat32(ro); !errors.Is(err, godlpack.ErrFlags) {
		t.Fatalf("read-only tensor accepted as mutable: %v", err)
	}
	if _, err := ExportFloat32([]float32{1, 2}, []int64{3}); err == nil {
		t.Fatal("shape larger than the slice accepted")
	}
	if _, err := Import(0); !errors.As(err, &be) {
		t.Fatalf("pointer 0: %v", err)
	}
	settled(t, base)
}

func TestLegacyPointerHasLowBitSet(t *testing.T) {
	base := LiveExports()
	data := []float64{1, 2, 3}
	src, err := producer.FromSlice(data, []int64{3}, nil, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	m, _ := src.ExportLegacy()
	a, err := ViewFloat64(uintptr(unsafe.Pointer(m)) | 1)
	if err != nil {
		t.Fatal(err)
	}
	x, _ := a.Float64s()
	if &x[0] != &data[0] || a.Tensor().Versioned {
		t.Fatal("legacy import is not a view of the slice")
	}
	a.Close()
	m2, _ := src.ExportLegacy()
	Free(uintptr(unsafe.Pointer(m2)) | 1)
	settled(t, base)
}

func TestFreeAndExportSource(t *testing.T) {
	base := LiveExports()
	src, err := producer.Zeros(godlpack.Float32, 4)
	if err != nil {
		t.Fatal(err)
	}
	ptr, err := ExportSource(src)
	src.Close()
	if err != nil {
		t.Fatal(err)
	}
	if uintptr(toPointer(ptr))%8 != 0 {
		t.Fatal("managed tensor not 8-byte aligned: the legacy tag bit would clash")
	}
	Free(ptr)
	Free(0)
	settled(t, base)
	if CapsuleDestructor() == 0 {
		t.Fatal("no capsule destructor")
	}
}
