package consumer

import (
	"errors"
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/godlpack/godlpack"
)

// ErrClosed is returned by operations on a Tensor after Close.
var ErrClosed = errors.New("consumer: tensor is closed")

// ErrBorrowed is returned by Close on a borrowed Tensor: its owner releases it.
var ErrBorrowed = errors.New("consumer: tensor is borrowed; its owner releases it")

// Tensor is an imported DLPack tensor: a view of foreign memory that stays
// valid until Close, which calls the producer's deleter exactly once.
//
// Close every Tensor. Slices from View (and AsFloat64s etc.) alias the
// producer's memory and do not keep the Tensor reachable, so the memory is
// never freed behind them: if a Tensor becomes unreachable without Close, a
// cleanup calls the deleter only when no view was ever taken; otherwise the
// memory is leaked on purpose (never freed) and LeakedTensors counts it.
type Tensor struct {
	godlpack.Tensor
	Version   godlpack.Version // {0, 0} for a legacy DLManagedTensor
	Flags     uint64
	Versioned bool
	own       *ownership
}

// ownership is kept apart from Tensor so that runtime.AddCleanup can use it
// without keeping the Tensor reachable.
type ownership struct {
	borrowed bool // Borrow: never released here
	done     atomic.Bool
	viewed   atomic.Bool // a slice aliasing the memory was handed out
	managed  unsafe.Pointer
	deleter  unsafe.Pointer
}

func (o *ownership) release() bool {
	if o.borrowed || !o.done.CompareAndSwap(false, true) {
		return false
	}
	godlpack.CallDeleter(o.deleter, o.managed)
	return true
}

// ImportVersioned takes ownership of m. On any refusal the deleter is called
// before the error is returned, so m must not be used afterwards either way.
func ImportVersioned(m *godlpack.DLManagedTensorVersioned) (*Tensor, error) {
	if m == nil {
		return nil, godlpack.Invalid(godlpack.ErrNilPointer, "managed tensor is NULL")
	}
	own := &ownership{managed: unsafe.Pointer(m), deleter: m.Deleter}
	t, err := ValidateVersioned(m)
	if err != nil {
		own.release()
		return nil, err
	}
	out := &Tensor{Tensor: t, Version: godlpack.Version{Major: m.Version.Major, Minor: m.Version.Minor},
		Flags: m.Flags, Versioned: true, own: own}
	return out.track(), nil
}

// ImportLegacy takes ownership of a legacy managed tensor, like ImportVersioned.
func ImportLegacy(m *godlpack.DLManagedTensor) (*Tensor, error) {
	if m == nil {
		return nil, godlpack.Invalid(godlpack.ErrNilPointer, "managed tensor is NULL")
	}
	own := &ownership{managed: unsafe.Pointer(m), deleter: m.Deleter}
	t, err := ValidateLegacy(m)
	if err != nil {
		own.release()
		return nil, err
	}
	return (&Tensor{Tensor: t, own: own}).track(), nil
}

// Import dispatches on the kind of managed tensor p points at.
func Import(p unsafe.Pointer, versioned bool) (*Tensor, error) {
	if versioned {
		return ImportVersioned((*godlpack.DLManagedTensorVersioned)(p))
	}
	return ImportLegacy((*godlpack.DLManagedTensor)(p))
}

// Borrow describes a managed tensor that its caller keeps owning and will
// release, such as a Go extension function's array argument (released when
// the call returns): validated like Import, but the Tensor never calls the
// deleter (Close returns ErrBorrowed, even on a refusal nothing is
// released), and it and its views are valid only until the owner releases it.
func Borrow(p unsafe.Pointer, versioned bool) (*Tensor, error) {
	if p == nil {
		return nil, godlpack.Invalid(godlpack.ErrNilPointer, "managed tensor is NULL")
	}
	own := &ownership{borrowed: true}
	if versioned {
		m := (*godlpack.DLManagedTensorVersioned)(p)
		t, err := ValidateVersioned(m)
		if err != nil {
			return nil, err
		}
		return &Tensor{Tensor: t, Version: godlpack.Version{Major: m.Version.Major, Minor: m.Version.Minor},
			Flags: m.Flags, Versioned: true, own: own}, nil
	}
	t, err := ValidateLegacy((*godlpack.DLManagedTensor)(p))
	if err != nil {
		return nil, err
	}
	return &Tensor{Tensor: t, own: own}, nil
}

var leakedTensors atomic.Int64

// LeakedTensors is how many Tensors became unreachable without Close after a
// view of their memory had been taken: their deleters were not called, since
// a view may still be in use, and their memory stays allocated.
func LeakedTensors() int64 { return leakedTensors.Load() }

func (t *Tensor) track() *Tensor {
	runtime.AddCleanup(t, dropped, t.own)
	return t
}

// dropped is the cleanup of a Tensor that became unreachable.
func dropped(o *ownership) {
	if o.done.Load() {
		return
	}
	if o.viewed.Load() {
		leakedTensors.Add(1) // a view may alias the memory: never free it
		return
	}
	o.release()
}

// Close calls the producer's deleter. A second Close returns ErrClosed, and
// Close of a borrowed Tensor ErrBorrowed.
func (t *Tensor) Close() error {
	if t.own.borrowed {
		return ErrBorrowed
	}
	if !t.own.release() {
		return ErrClosed
	}
	return nil
}

// Closed reports whether Close has run.
func (t *Tensor) Closed() bool { return t.own.done.Load() }
