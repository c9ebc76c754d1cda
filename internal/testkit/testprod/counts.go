package testprod

import (
	"github.com/stretchr/testify/require"

	"github.com/godlpack/godlpack/producer"
)

// Counts is a snapshot of the producer's process-wide owner and export
// counters, for exactly-once checks in the tests of several packages.
type Counts struct{ Owners, Exports int64 }

// Snapshot reads the counters now.
func Snapshot() Counts { return Counts{producer.LiveOwners(), producer.LiveExports()} }

// Delta is how far the counters are from the snapshot c.
func (c Counts) Delta() Counts {
	return Counts{producer.LiveOwners() - c.Owners, producer.LiveExports() - c.Exports}
}

// RequireDelta fails the test unless the counters moved by exactly this much.
func (c Counts) RequireDelta(t require.TestingT, owners, exports int64, msgAndArgs ...any) {
	if h, ok := t.(interface{ Helper() }); ok {
		h.Helper()
	}
	require.Equal(t, Counts{owners, exports}, c.Delta(), msgAndArgs...)
}
