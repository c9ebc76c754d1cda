// Package gopydl lets gopy-wrapped Go functions take and return DLPack
// tensors zero-copy. gopy passes no Python objects, so tensors cross as
// uintptr:
//
//   - Python → Go: the helper gopydl/python/gopydl.py (to_go) takes an
//     array's DLPack capsule, renames it "used_…" and passes the managed
//     tensor's address. Import (or ViewFloat32, MutableFloat32, …) takes
//     ownership of it; Array.Close calls the producer's deleter exactly once.
//   - Go → Python: ExportFloat32 (…) pins a Go slice and returns a fresh
//     DLManagedTensorVersioned*; the helper (from_go) puts it in a
//     "dltensor_versioned" capsule whose C destructor (capsule.c) calls the
//     deleter only while the capsule is unused.
//
// A pointer Import receives is a DLManagedTensorVersioned*, or a legacy
// DLManagedTensor* with its lowest bit set (what to_go makes of legacy
// "dltensor" capsules such as JAX's). Every exported function uses only
// types gopy can wrap, so the package can itself be bound with gopy.
//
// The package needs no Python headers: its capsule destructor declares the
// two CPython functions it calls as weak symbols.
package gopydl
